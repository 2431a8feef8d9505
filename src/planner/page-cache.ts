// memory.low from a write rate and a catch-up window: the page cache that holds the last `window`
// of what the workload writes, so a consumer that fell that far behind still reads from memory,
// not from the disks batch jobs share. The operators' arithmetic, made by the planner and shown in
// the plan ("80 GB of cache holds ~8 minutes at 170 MB/s"): rate × window. More than 75 % of the
// workload's NUMA nodes' memory is refused before this is reached (allocate.ts, DERIVED_SHARE_MAX).
import type { MemoryAmount } from '../model/policy.js';
import { formatBytes, pageAlign } from '../model/units.js';

export type CacheWindow = Extract<MemoryAmount, { writeRate: number }>;

export interface CacheSizing {
  /** memory.low, page-aligned. */
  bytes: number;
  /** rate × window. */
  wanted: number;
}

export function sizeCache(a: CacheWindow): CacheSizing {
  const wanted = a.writeRate * a.windowSeconds;
  return { bytes: pageAlign(wanted), wanted };
}

function minutes(seconds: number): string {
  return seconds >= 120 ? `${(seconds / 60).toFixed(1)} min` : `${seconds.toFixed(0)} s`;
}

function rateWords(bytesPerSec: number): string {
  return `${(bytesPerSec / 1e6).toFixed(1)} MB/s (${formatBytes(bytesPerSec)}/s)`;
}

/** The arithmetic in one line for the plan, as a note. */
export function cacheSizingText(
  workload: string,
  a: CacheWindow,
  s: CacheSizing,
  nodes: readonly number[],
  scopeBytes: number,
): { note: string } {
  const asked = `${a.written.writeRate} × ${a.written.window} = ${rateWords(a.writeRate)} × ${minutes(a.windowSeconds)} = ${formatBytes(s.wanted)} (${s.wanted} bytes)`;
  const where = `node${nodes.length === 1 ? '' : 's'} ${nodes.join(',')}`;
  return {
    note: `memory.low ${workload}: ${asked} of page cache kept from reclaim${scopeBytes > 0 ? ` (${where} ${nodes.length === 1 ? 'has' : 'have'} ${formatBytes(scopeBytes)})` : ''}: a consumer up to ${minutes(a.windowSeconds)} behind reads from memory`,
  };
}
