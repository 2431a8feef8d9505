// Interrupts delivered to the exclusive CPUs over the check's window, judged: a device IRQ there is
// work the policy meant to keep off (a warning), unless it is one isolate cannot or should not move —
// a kernel-managed IRQ, or the NIC of a workload whose `irqs.on: own` puts its queues there (info).
// Receive processing (NET_RX) is reported, not judged: loopback traffic of the workload itself
// raises it on its own CPUs, and the counters cannot tell whose packets they were.
import type { DeliveredReport, DeliveredSource } from '../irq/delivered.js';
import type { Finding } from '../model/finding.js';

const LIST_CAP = 6;

function describe(s: DeliveredSource): string {
  const where = Object.entries(s.perCpu)
    .map(([cpu, n]) => `${n} on CPU ${cpu}`)
    .join(', ');
  return `${s.kind === 'irq' ? `IRQ ${s.id} (${s.name})` : s.name}: ${where}`;
}

function list(sources: DeliveredSource[]): string {
  const shown = sources.slice(0, LIST_CAP).map(describe).join('; ');
  return sources.length > LIST_CAP ? `${shown}; and ${sources.length - LIST_CAP} more (--json)` : shown;
}

/**
 * Findings for one window. `expected`: IRQ number → why it may land on the exclusive CPUs
 * (kernel-managed; a NIC placed on its workload's own cores).
 */
export function interruptFindings(r: DeliveredReport, expected: ReadonlyMap<string, string>): Finding[] {
  const secs = `${(r.windowMs / 1000).toFixed(1)} s`;
  const out: Finding[] = [];
  const irqs = r.sources.filter((s) => s.kind === 'irq');
  const stray = irqs.filter((s) => !expected.has(s.id));
  const allowed = irqs.filter((s) => expected.has(s.id));
  if (stray.length > 0) {
    out.push({
      severity: 'warning',
      message: `device interrupts on the exclusive CPUs ${r.cpus} in ${secs}: ${list(stray)}; "isolate plan" shows the changes that move them (a refused write is named by "isolate apply")`,
    });
  }
  for (const s of allowed.slice(0, LIST_CAP)) {
    out.push({
      severity: 'info',
      message: `interrupts on the exclusive CPUs in ${secs}: ${describe(s)} (${expected.get(s.id)})`,
    });
  }
  const rx = r.sources.filter((s) => s.kind === 'softirq');
  if (rx.length > 0) {
    out.push({
      severity: 'info',
      message: `receive processing on the exclusive CPUs in ${secs}: ${list(rx)} (the workload's own loopback traffic counts here too)`,
    });
  }
  if (r.unknown.length > 0) {
    out.push({
      severity: 'info',
      message: `interrupt counts partly unknown: ${r.unknown.slice(0, 3).join('; ')}`,
    });
  }
  return out;
}
