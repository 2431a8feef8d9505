// The cgroup v2 files isolate writes, and when two of their values are the same to the kernel: CPU
// lists by their CPUs, memory sizes by their pages, controllers as a set, io lines per device.
import { sameCpuList } from '../model/cpuset.js';
import { IO_FILES, type IoFile, sameIoValue } from '../model/io.js';
import { pageAlign, parseBytes } from '../model/units.js';
import { normCgPath } from './fsutil.js';

export const CPU_LISTS = new Set(['cpuset.cpus', 'cpuset.mems', 'cpuset.cpus.exclusive']);
const MEMORY = new Set(['memory.min', 'memory.low', 'memory.high', 'memory.max']);
export const PLAIN = new Set([
  ...CPU_LISTS,
  ...MEMORY,
  'cpuset.cpus.partition',
  'cpu.weight',
  'cpu.idle',
  'memory.oom.group',
]);

/** The cgroup v2 per-device io files: a change carries one device's line (model/io.ts). */
export const IO = new Set<string>(IO_FILES);

export function isKnownSetting(setting: string): boolean {
  return (
    PLAIN.has(setting) ||
    IO.has(setting) ||
    setting === 'mkdir' ||
    setting === 'cgroup.subtree_control' ||
    setting === 'cgroup.procs'
  );
}

/** The words of a value (a controller list), none when absent. */
export function tokens(v: string | null): string[] {
  return v ? v.split(/\s+/).filter(Boolean) : [];
}

export function sameValue(setting: string, a: string | null, b: string | null): boolean {
  if (a === null || b === null) return a === b;
  if (IO.has(setting)) return sameIoValue(setting as IoFile, a, b);
  if (CPU_LISTS.has(setting)) return sameCpuList(a, b);
  if (MEMORY.has(setting)) {
    const x = parseBytes(a);
    const y = parseBytes(b);
    if (x === null || y === null) return a.trim() === b.trim();
    if (x === 'max' || y === 'max') return x === y;
    // The kernel stores page counts: a written value reads back rounded down to the page.
    return pageAlign(x) === pageAlign(y);
  }
  if (setting === 'cgroup.subtree_control') {
    const ta = new Set(tokens(a));
    const tb = new Set(tokens(b));
    return ta.size === tb.size && [...ta].every((t) => tb.has(t));
  }
  if (setting === 'cgroup.procs' || setting === 'mkdir') {
    return a === b || (setting === 'cgroup.procs' && normCgPath(a) === normCgPath(b));
  }
  return a.trim() === b.trim();
}
