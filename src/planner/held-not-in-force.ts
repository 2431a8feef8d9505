// "systemd holds a value the kernel file lacks", judged in one place for each systemd-held setting the
// planner compares with its kernel file: a unit's CPUs and memory nodes (AllowedCPUs=,
// AllowedMemoryNodes=), and its io latency targets and caps. Such a value is not in force: the
// property is planned again, its note saying what systemd holds and what the kernel file reads.
import { sameCpuList } from '../model/cpuset.js';
import {
  devicePath,
  type IoProperty,
  IO_PROPERTY_SHOWN,
  ioClear,
  ioEntryOf,
  ioLineOf,
  ioSatisfies,
} from '../model/io.js';
import type { ObservedGroup } from '../model/observed.js';
import type { SystemdChange } from '../model/plan.js';
import { SYSTEMD_PROPERTY } from '../model/systemd.js';
import { type IoWant, ioUnitChanges } from './io.js';
import { parentOf } from './targets.js';

/** Why a held value is planned again: one wording for every property. */
function heldButNot(property: string, held: string, file: string, reads: string): string {
  return `systemd holds ${property}=${held} but ${file} ${reads}: not in force; set again`;
}

/**
 * Why a unit's CPU or memory-node list systemd holds is not in force in its cgroup, or null when it
 * is (or cannot be told). No cpuset.cpus: cpuset is not enabled there (every observed group reads it).
 * A sibling's cpuset.mems is not read at all (observe.ts SIBLING_FILES): absent there is unknown, not wrong.
 */
export function cpusetNotInForce(
  path: string,
  f: 'cpuset.cpus' | 'cpuset.mems',
  held: string,
  kernel: ObservedGroup | undefined,
): string | null {
  if (held === '' || !kernel?.exists) return null;
  const enabled = kernel.values['cpuset.cpus'] !== undefined;
  const now = kernel.values[f];
  if (enabled && (now === undefined || sameCpuList(now, held))) return null;
  const reads = now === undefined ? `does not exist (no cpuset in ${parentOf(path)})` : `is "${now}"`;
  return heldButNot(SYSTEMD_PROPERTY[f], held, `${path}/${f}`, reads);
}

/**
 * A latency target or cap systemd holds for a running unit that the unit's cgroup file does not have
 * (written behind systemd's back: systemd writes its io files only when it realizes the unit, and
 * never reads them back) is not in force: set again, with why, as a CPU list systemd holds but never
 * wrote is. `kernel` is the cgroup's file as observed; undefined (not observed, no io there) leaves it
 * to apply's read-back, which names what is missing. Weights are not compared: systemd scales them
 * for BFQ.
 */
export function ioUnitNotInForce(
  unit: string,
  want: IoWant,
  props: Record<string, string>,
  cgroup: string,
  kernel: string | undefined,
): SystemdChange[] {
  if ((want.file !== 'io.latency' && want.file !== 'io.max') || kernel === undefined) return [];
  const line = ioLineOf(want.file, kernel, want.dev);
  if (ioSatisfies(want.file, line, want.value)) return [];
  const where = `${cgroup}/${want.file}`;
  const reads =
    want.file === 'io.latency' && line === ioClear(want.file, want.dev)
      ? `has no target for ${want.dev}`
      : `reads "${line}"`;
  const path = devicePath(want.dev);
  return ioUnitChanges(unit, want, {}).map((c) => {
    const held = ioEntryOf(props[IO_PROPERTY_SHOWN[c.setting as IoProperty]], path);
    return {
      ...c,
      from: held,
      note: `${want.disk}: ${heldButNot(c.setting, String(held), where, reads)}`,
    };
  });
}
