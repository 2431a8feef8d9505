// The plan's RAID section: each controller whose logical drives hold exclusive workloads' data, its
// battery/flash, and per drive which workload's directories live there and its write cache now.
import type { RaidDiskTie } from '../../model/raid-disks.js';

export function formatRaidDisks(ties: readonly RaidDiskTie[], indent = '  '): string[] {
  const lines: string[] = [];
  const byController = new Map<string, RaidDiskTie[]>();
  for (const t of ties) byController.set(t.controller, [...(byController.get(t.controller) ?? []), t]);
  for (const [controller, list] of byController) {
    const p = list[0]!.protection;
    const kind =
      p.kind === null || p.kind === 'none' ? 'battery/flash' : p.kind === 'bbu' ? 'battery' : p.kind;
    lines.push(
      `${indent}${controller}${list[0]!.model ? ` (${list[0]!.model})` : ''}: ${kind} ${p.condition}${p.state ? ` (${p.state})` : ''}`,
    );
    const byDrive = new Map<string, RaidDiskTie[]>();
    for (const t of list) byDrive.set(t.drive, [...(byDrive.get(t.drive) ?? []), t]);
    for (const [drive, held] of byDrive) {
      const first = held[0]!;
      const holds = held.map((t) => `${t.workload}'s ${t.dirsWord} ${t.dirs.join(', ')}`).join('; ');
      const write =
        first.currentWrite === first.defaultWrite || first.defaultWrite === 'unknown'
          ? first.currentWrite
          : `${first.currentWrite} (configured ${first.defaultWrite})`;
      lines.push(`${indent}  ${drive} (${first.disk}): holds ${holds}; write cache ${write}`);
    }
  }
  return lines;
}
