// `isolate check` for people: a monitoring-plugin first line, then the details.
import { plural } from '../model/units.js';
import { describeUse, type IoReport } from './io.js';
import type { CheckReport } from './report.js';

export function formatCheck(r: CheckReport): string {
  const lines: string[] = [];
  lines.push(
    `ISOLATE ${r.status} - ${r.summary} | processes=${r.stats.processes} threads=${r.stats.threads} violations=${r.counts.violations} kernel_violations=${r.counts.kernelViolations} scan_ms=${r.stats.scanMs}`,
  );
  for (const w of r.workloads) {
    const mem = Object.entries(w.memoryByNode)
      .map(([n, b]) => `N${n}=${(b / 2 ** 20).toFixed(1)}MiB`)
      .join(' ');
    lines.push(
      `  ${w.name} (${w.class}) ${w.target}: cpus ${w.cpus} (effective ${w.effectiveCpus ?? 'unknown, cpuset.cpus.effective not readable'}), mems ${w.mems.join(',')}, partition ${w.partition ?? 'n/a, no cpuset.cpus.partition'}, ${plural(w.threads, 'thread')}, ${w.outside.length} outside its CPUs${mem ? `, memory ${mem}` : ''}`,
    );
    const psi = Object.entries(w.pressure)
      .filter(([, p]) => p?.some)
      .map(([r, p]) => `${r} some ${p!.some!.avg10.toFixed(2)}%/${p!.some!.avg60.toFixed(2)}%`)
      .join(', ');
    if (psi) lines.push(`    pressure (avg10/avg60 of time stalled): ${psi}`);
    for (const t of w.outside.slice(0, 10))
      lines.push(`    outside: pid ${t.pid} tid ${t.tid} ${t.comm} Cpus_allowed_list ${t.cpus}`);
  }
  for (const f of r.findings) lines.push(`  ${f.severity.toUpperCase()}: ${f.message}`);
  for (const t of r.violations.slice(0, 20)) {
    lines.push(
      `    violation: pid ${t.pid} tid ${t.tid} ${t.comm} in ${t.cgroup ?? '?'} Cpus_allowed_list ${t.cpus}`,
    );
  }
  if (r.counts.violations > 20) lines.push(`    ... and ${r.counts.violations - 20} more (use --json)`);
  if (r.unfenced.length > 0) {
    // Examples from three processes, not three threads of one.
    const pids = new Set<number>();
    const examples = r.unfenced.filter((t) => pids.size < 3 && !pids.has(t.pid) && pids.add(t.pid));
    lines.push(
      `  not fenced by this policy (strict: false), listed only: ${r.counts.unfenced} thread(s), e.g. ${examples
        .map((t) => `pid ${t.pid} ${t.comm} in ${t.cgroup ?? '?'}`)
        .join(', ')}`,
    );
  }
  for (const t of r.kernelViolations.slice(0, 10))
    lines.push(`    kernel thread: pid ${t.pid} ${t.comm} Cpus_allowed_list ${t.cpus}`);
  lines.push(
    `  per-CPU kernel threads (not counted): ${r.perCpuKernelThreads.count}, ${r.perCpuKernelThreads.onExclusive} on exclusive CPUs${r.perCpuKernelThreads.sample.length ? ` (e.g. ${r.perCpuKernelThreads.sample.slice(0, 4).join(', ')})` : ''}`,
  );
  if (r.unboundWorkqueueWorkers.length > 0) {
    lines.push(
      `  unbound workqueue workers on exclusive CPUs (not counted): ${r.unboundWorkqueueWorkers.length}; workqueue cpumask ${r.workqueueCpumask ?? '?'} (set /sys/devices/virtual/workqueue/cpumask to the housekeeping CPUs to move them)`,
    );
  }
  if (r.interrupts) {
    const i = r.interrupts;
    const total = i.sources.reduce((n, s) => n + s.total, 0);
    lines.push(
      `  interrupts on exclusive CPUs ${i.cpus || '-'} in ${(i.windowMs / 1000).toFixed(1)} s: ${total === 0 ? 'none' : i.sources.map((s) => `${s.kind === 'irq' ? `IRQ ${s.id} (${s.name})` : s.name} ${s.total}`).join(', ')}`,
    );
  }
  if (r.io) lines.push(...formatIo(r.io));
  if (r.irqs.length === 0) lines.push('  NIC IRQs: none found');
  for (const q of r.irqs) {
    lines.push(
      `  NIC IRQ ${q.irq} (${q.nic}) → CPUs ${q.affinity}${q.overlapsExclusive ? ' (on exclusive CPUs)' : ''}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** I/O per workload on the exclusive workloads' disks over the window, and each one's io pressure. */
function formatIo(io: IoReport): string[] {
  const pct = (x: number | null) => (x === null ? '?' : `${(x * 100).toFixed(1)}%`);
  const lines = [
    `  io on ${io.disks.map((d) => `${d.name} (${d.dev}, ${d.of.join(', ')})`).join(', ')} in ${(io.windowMs / 1000).toFixed(1)} s:`,
  ];
  for (const w of io.workloads) {
    const uses = io.disks.map((d) => {
      const u = w.disks[d.name];
      return u === null || u === undefined
        ? `${d.name} unknown`
        : u.rios + u.wios === 0
          ? `${d.name} none`
          : describeUse(d.name, u);
    });
    const p = w.pressure;
    const psi = p
      ? `; io pressure some ${pct(p.some)} full ${pct(p.full)} of the window (avg10 ${pct(p.someAvg10)}/${pct(p.fullAvg10)})`
      : '; io pressure unknown';
    lines.push(`    ${w.name} (${w.class}): ${uses.join(', ')}${psi}`);
  }
  for (const n of io.notes) lines.push(`    note: ${n}`);
  return lines;
}
