// How much of a workload's memory sits on which NUMA node (`memory.numa_stat`).

/** Resident bytes per node from `memory.numa_stat` (anon + file). */
export function numaBytes(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const [key, ...rest] = line.trim().split(/\s+/);
    if (key !== 'anon' && key !== 'file') continue;
    for (const kv of rest) {
      const m = /^N(\d+)=(\d+)$/.exec(kv);
      if (m) out[m[1]!] = (out[m[1]!] ?? 0) + Number(m[2]);
    }
  }
  return out;
}

/**
 * Bytes per node of a process's anonymous memory (its heap and stacks) from `/proc/PID/numa_maps`:
 * each mapping with `anon=` pages, its `N<node>=<pages>` counts times its `kernelpagesize_kB`. Where
 * a cgroup has no `memory.numa_stat` of its own (cgroup v1: the cpuset is not the memory cgroup).
 */
export function numaMapsAnonBytes(text: string, into: Record<string, number> = {}): Record<string, number> {
  for (const line of text.split('\n')) {
    if (!/ anon=\d/.test(line)) continue;
    const kb = Number(/ kernelpagesize_kB=(\d+)/.exec(line)?.[1] ?? 4);
    for (const m of line.matchAll(/ N(\d+)=(\d+)/g)) {
      into[m[1]!] = (into[m[1]!] ?? 0) + Number(m[2]) * kb * 1024;
    }
  }
  return into;
}
