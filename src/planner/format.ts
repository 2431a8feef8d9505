import { formatBytes, plural } from '../model/units.js';
import type { Plan } from '../model/plan.js';
import { formatWorkloadDisks } from '../topology/disks-format.js';
import { formatChanges, summaryLine } from './format-changes.js';
import { RESERVED_REASON } from './json.js';
import { formatRaidDisks } from './raid/disks-format.js';

/**
 * Human view of a plan: a summary and the warnings first (on a large host they used to follow 150
 * changes), the allocation per workload, then the changes as target setting: from → to, runs of alike
 * IRQ and queue changes one line each unless `verbose`.
 */
export function formatPlan(plan: Plan, policySource: string, opts: { verbose?: boolean } = {}): string {
  const lines: string[] = [
    `Policy: ${policySource}`,
    summaryLine(plan.changes, plan.warnings.length, plan.notes.length),
  ];
  if (plan.warnings.length) {
    lines.push('', 'Warnings:');
    for (const w of plan.warnings) lines.push(`  - ${w}`);
  }
  lines.push('', 'Allocation:');
  for (const a of plan.allocation.workloads) {
    const mem = Object.entries(a.memory)
      .map(([k, v]) => `${k}=${v === 'max' ? 'max' : formatBytes(v as number)}`)
      .join(' ');
    const cores =
      a.class === 'exclusive'
        ? `  ${plural(a.cores.length, 'core')} on node${a.nodes.length === 1 ? '' : 's'} ${a.nodes.join(',')}`
        : '';
    lines.push(`  ${a.name} (${a.class}) → ${a.target}`);
    lines.push(`    cpus ${a.cpus}${cores}  mems ${a.mems.join(',') || '-'}${mem ? `  memory ${mem}` : ''}`);
    lines.push(`    why: ${a.reason}`);
  }
  lines.push(`  reserved (housekeeping) cpus ${plan.allocation.reserved.toString() || '-'}`);
  if (!plan.allocation.reserved.isEmpty) lines.push(`    why: ${RESERVED_REASON}`);
  if (plan.layout) lines.push(`  cgroup layout: ${plan.layout}`);
  if (plan.disks?.length) {
    const drives = new Map((plan.raidDisks ?? []).map((t) => [t.disk, t.drive]));
    lines.push('', 'Disks:', ...formatWorkloadDisks(plan.disks, { findings: false, raidDrives: drives }));
  }
  if (plan.raidDisks?.length) lines.push('', 'RAID:', ...formatRaidDisks(plan.raidDisks));
  lines.push('');
  if (plan.changes.length === 0) lines.push('No changes: the host already matches the policy.');
  else {
    const listed = formatChanges(plan.changes, !!opts.verbose);
    const grouped = listed.length < plan.changes.length ? '; alike ones grouped, --verbose lists each' : '';
    lines.push(`Changes (${plan.changes.length}, in the order apply makes them${grouped}):`, ...listed);
  }
  if (plan.notes.length) {
    lines.push('', 'Notes:');
    for (const n of plan.notes) lines.push(`  - ${n}`);
  }
  return `${lines.join('\n')}\n`;
}
