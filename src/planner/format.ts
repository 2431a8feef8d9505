import { cgroupTarget, describeChange, showValue } from '../model/describe.js';
import { formatBytes, plural } from '../model/units.js';
import type { Plan } from '../model/plan.js';
import { formatWorkloadDisks } from '../topology/disks-format.js';
import { RESERVED_REASON } from './json.js';
import { formatRaidDisks } from './raid/disks-format.js';

/** Human view of a plan: allocation per workload, then each change as target setting: from → to. */
export function formatPlan(plan: Plan, policySource: string): string {
  const lines: string[] = [`Policy: ${policySource}`, '', 'Allocation:'];
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
  else lines.push(`Changes (${plan.changes.length}, in the order apply makes them):`);
  plan.changes.forEach((c, i) => {
    // systemd changes read as the command that makes them: `systemctl set-property UNIT PROP=VALUE`.
    const what =
      c.backend === 'systemd'
        ? `${describeChange(c)}  (now ${showValue(c.from)})`
        : `${cgroupTarget(c)} ${c.setting}: ${showValue(c.from)} → ${c.to}`;
    lines.push(`  ${String(i + 1).padStart(3)}. ${what}${c.note ? `  [${c.note}]` : ''}`);
  });
  if (plan.notes.length) {
    lines.push('', 'Notes:');
    for (const n of plan.notes) lines.push(`  - ${n}`);
  }
  if (plan.warnings.length) {
    lines.push('', 'Warnings:');
    for (const w of plan.warnings) lines.push(`  - ${w}`);
  }
  return `${lines.join('\n')}\n`;
}
