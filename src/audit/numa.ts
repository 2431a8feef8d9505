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
