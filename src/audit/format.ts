// `isolate check` for people: a monitoring-plugin first line, then the details.
import { plural } from '../model/units.js';
import { describeUse, type IoReport } from './io.js';
import type { IrqInfo } from './irqs.js';
import type { CheckReport } from './report.js';

export function formatCheck(r: CheckReport): string {
  const lines: string[] = [];
  const perf = `processes=${r.stats.processes} threads=${r.stats.threads} violations=${r.counts.violations} kernel_violations=${r.counts.kernelViolations} scan_ms=${r.stats.scanMs}`;
  const head = `ISOLATE ${r.status} - `;
  lines.push(`${head}${statusSummary(r, STATUS_MAX - head.length - perf.length - 3)} | ${perf}`);
  for (const w of r.workloads) {
    const mem = Object.entries(w.memoryByNode)
      .map(([n, b]) => `N${n}=${(b / 2 ** 20).toFixed(1)}MiB`)
      .join(' ');
    lines.push(
      `  ${w.name} (${w.class}) ${w.target}: cpus ${w.cpus} (effective ${w.effectiveCpus ?? 'unknown, cpuset.cpus.effective not readable'}), mems ${w.mems.join(',')}, partition ${w.partition ?? 'n/a, no cpuset.cpus.partition'}, ${plural(w.threads, 'thread')}, ${w.outsideCount} outside its CPUs${mem ? `, memory ${mem}` : ''}`,
    );
    const psi = Object.entries(w.pressure)
      .filter(([, p]) => p?.some)
      .map(([r, p]) => `${r} some ${p!.some!.avg10.toFixed(2)}%/${p!.some!.avg60.toFixed(2)}%`)
      .join(', ');
    if (psi) lines.push(`    pressure (avg10/avg60 of time stalled): ${psi}`);
    for (const t of w.outside.slice(0, OUTSIDE_SHOWN))
      lines.push(`    outside: pid ${t.pid} tid ${t.tid} ${t.comm} Cpus_allowed_list ${t.cpus}`);
    if (w.outsideCount > OUTSIDE_SHOWN)
      lines.push(`    ... and ${w.outsideCount - OUTSIDE_SHOWN} more (use --json)`);
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
  lines.push(...formatNicIrqs(r.irqs));
  return `${lines.join('\n')}\n`;
}

/**
 * The status line's words: a monitoring system shows the first line alone, so it stays under ~200
 * characters with its perfdata. The summary joins every finding of the worst severity; when that is
 * long, the first one (shortened) and how many more there are, each printed in full below.
 */
const STATUS_MAX = 200;

/** The summary in `max` characters (at least 60: a huge perfdata never leaves it nothing). */
function statusSummary(r: CheckReport, max: number): string {
  const room = Math.max(max, 60);
  if (r.summary.length <= room) return r.summary;
  const worst = r.findings.filter((f) => f.severity.toUpperCase() === r.status);
  if (worst.length === 0) return `${r.summary.slice(0, room - 3)}...`;
  const first = worst[0]!.message;
  const more = worst.length > 1 ? ` (+${worst.length - 1} more below)` : ' (in full below)';
  const left = room - more.length;
  return `${first.length > left ? `${first.slice(0, left - 3)}...` : first}${more}`;
}

/** How many `outside:` lines a workload gets; --json has up to 100, and the count has them all. */
const OUTSIDE_SHOWN = 10;

/**
 * NIC IRQs: one line per NIC whose IRQs all stay off the exclusive CPUs (a 48-queue NIC is one line,
 * not 49), and a line for each IRQ that may be delivered on them, the ones to act on.
 */
function formatNicIrqs(irqs: IrqInfo[]): string[] {
  if (irqs.length === 0) return ['  NIC IRQs: none found'];
  const lines: string[] = [];
  const byNic = new Map<string, IrqInfo[]>();
  for (const q of irqs) byNic.set(q.nic, [...(byNic.get(q.nic) ?? []), q]);
  for (const [nic, qs] of byNic) {
    const on = qs.filter((q) => q.overlapsExclusive);
    if (on.length === 0) {
      const cpus = [...new Set(qs.map((q) => q.affinity))];
      lines.push(
        `  NIC ${nic}: ${plural(qs.length, 'IRQ')} off the exclusive CPUs (→ CPUs ${cpus.length <= 3 ? cpus.join('; ') : `${cpus.slice(0, 3).join('; ')}; ...`})`,
      );
      continue;
    }
    for (const q of on) lines.push(`  NIC IRQ ${q.irq} (${nic}) → CPUs ${q.affinity} (on exclusive CPUs)`);
    if (on.length < qs.length)
      lines.push(`  NIC ${nic}: ${qs.length - on.length} more IRQ(s) off the exclusive CPUs`);
  }
  return lines;
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
