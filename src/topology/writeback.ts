// The host's dirty-page limits (`/proc/sys/vm/dirty_*`) and each disk's writeback throttling
// (`/sys/block/DEV/queue/wbt_lat_usec`), under --root, for the plan's notes on how much buffered
// writing can queue in front of Kafka's own. Untrusted input: what does not read as a whole number
// is unknown (null, with the reason), never a default.
import path from 'node:path';
import type { VmDirty, WbtState } from '../model/writeback.js';
import { ReadRefused, readBoundedIfPresent } from '../sys/read.js';

const SMALL = { maxBytes: 4096 };

function readCount(file: string): { value: number } | { value: null; problem: string } | null {
  let text: string | null;
  try {
    text = readBoundedIfPresent(file, SMALL);
  } catch (err) {
    return {
      value: null,
      problem: err instanceof ReadRefused ? `${err.code} (${err.reason})` : (err as Error).message,
    };
  }
  if (text === null) return null;
  const t = text.trim();
  if (!/^\d+$/.test(t) || !Number.isSafeInteger(Number(t)))
    return { value: null, problem: `not a whole number (${JSON.stringify(t.slice(0, 24))})` };
  return { value: Number(t) };
}

const DIRTY_FILES = {
  ratio: 'dirty_ratio',
  bytes: 'dirty_bytes',
  backgroundRatio: 'dirty_background_ratio',
  backgroundBytes: 'dirty_background_bytes',
} as const;

/** The four vm.dirty_* values; null when /proc/sys/vm has none of them (not a Linux /proc). */
export function readVmDirty(root: string): VmDirty | null {
  const out: VmDirty = {
    ratio: null,
    bytes: null,
    backgroundRatio: null,
    backgroundBytes: null,
    problems: [],
  };
  let found = false;
  for (const [key, name] of Object.entries(DIRTY_FILES) as [keyof typeof DIRTY_FILES, string][]) {
    const r = readCount(path.join(root, 'proc/sys/vm', name));
    if (r === null) {
      out.problems.push(`/proc/sys/vm/${name} does not exist`);
      continue;
    }
    found = true;
    if (r.value === null) out.problems.push(`/proc/sys/vm/${name}: ${r.problem}`);
    else out[key] = r.value;
  }
  return found ? out : null;
}

/** A whole disk's `queue/wbt_lat_usec`: the target in microseconds (0: off), absent, or unknown. */
export function readWbt(root: string, disk: string): WbtState {
  const file = `/sys/block/${disk}/queue/wbt_lat_usec`;
  const r = readCount(path.join(root, file));
  if (r === null) return { state: 'absent', file };
  if (r.value === null) return { state: 'unknown', file, problem: r.problem };
  return { state: 'set', file, usec: r.value };
}
