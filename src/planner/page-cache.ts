// memory.low from a write rate and a catch-up window: the page cache that holds the last `window`
// of what the workload writes, so a consumer that fell that far behind still reads from memory,
// not from the disks batch jobs share. The operators' arithmetic, made by the planner and shown in
// the plan ("80 GB of cache holds ~8 minutes at 170 MB/s"): rate × window, capped by the memory of
// the workload's NUMA nodes (memory.low cannot protect more than there is).
import type { MemoryAmount } from '../model/policy.js';
import { formatBytes, pageAlign } from '../model/units.js';

export type CacheWindow = Extract<MemoryAmount, { writeRate: number }>;

export interface CacheSizing {
  /** memory.low, page-aligned. */
  bytes: number;
  /** rate × window, before the cap. */
  wanted: number;
  capped: boolean;
  /** Seconds of writes `bytes` holds at the rate. */
  holdsSeconds: number;
}

export function sizeCache(a: CacheWindow, scopeBytes: number): CacheSizing {
  const wanted = a.writeRate * a.windowSeconds;
  // A topology without memory sizes (scope 0) caps nothing: the plan then says so.
  const capped = scopeBytes > 0 && wanted > scopeBytes;
  const bytes = pageAlign(capped ? scopeBytes : wanted);
  return { bytes, wanted, capped, holdsSeconds: bytes / a.writeRate };
}

function minutes(seconds: number): string {
  return seconds >= 120 ? `${(seconds / 60).toFixed(1)} min` : `${seconds.toFixed(0)} s`;
}

function rateWords(bytesPerSec: number): string {
  return `${(bytesPerSec / 1e6).toFixed(1)} MB/s (${formatBytes(bytesPerSec)}/s)`;
}

/** The arithmetic in one line for the plan: a note, and a warning when the cap cut the window short. */
export function cacheSizingText(
  workload: string,
  a: CacheWindow,
  s: CacheSizing,
  nodes: readonly number[],
  scopeBytes: number,
): { note: string; warning?: string } {
  const asked = `${a.written.writeRate} × ${a.written.window} = ${rateWords(a.writeRate)} × ${minutes(a.windowSeconds)} = ${formatBytes(s.wanted)} (${s.wanted} bytes)`;
  const where = `node${nodes.length === 1 ? '' : 's'} ${nodes.join(',')}`;
  if (!s.capped) {
    return {
      note: `memory.low ${workload}: ${asked} of page cache kept from reclaim${scopeBytes > 0 ? ` (${where} ${nodes.length === 1 ? 'has' : 'have'} ${formatBytes(scopeBytes)})` : ''}: a consumer up to ${minutes(a.windowSeconds)} behind reads from memory`,
    };
  }
  return {
    note: `memory.low ${workload}: ${asked}, capped at the ${formatBytes(scopeBytes)} of ${where}: ${formatBytes(s.bytes)} holds ${minutes(s.holdsSeconds)} of writes at ${a.written.writeRate}`,
    warning: `memory.low ${workload}: ${a.written.window} of writes at ${a.written.writeRate} (${formatBytes(s.wanted)}) is more than the memory of ${where} (${formatBytes(scopeBytes)}); the cache holds ${minutes(s.holdsSeconds)} at most: lower window, or give ${workload} more nodes (memory.mems)`,
  };
}
