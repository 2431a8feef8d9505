// Exclusive workloads' disks → the RAID logical drives they are, by the OS device name the vendor tool
// prints for each drive (never by order or size: a guess here would blame or trust the wrong cache).
// Pure: the disks and the RAID observation come in, ties, notes and warnings go out.
import type { WorkloadDisks } from '../../model/disks.js';
import type { RaidDiskTie } from '../../model/raid-disks.js';
import type { LogicalDrive, RaidController, RaidObservation } from '../../model/raid.js';

export interface RaidDiskPlan {
  ties: RaidDiskTie[];
  notes: string[];
  warnings: string[];
}

export function tieDisksToRaid(
  disks: readonly WorkloadDisks[],
  exclusive: ReadonlySet<string>,
  obs: RaidObservation,
): RaidDiskPlan {
  const out: RaidDiskPlan = { ties: [], notes: [], warnings: [] };
  const named = new Map<string, { c: RaidController; d: LogicalDrive }[]>();
  for (const c of obs.controllers) {
    for (const d of c.logicalDrives) {
      if (d.osDevice !== null) named.set(d.osDevice, [...(named.get(d.osDevice) ?? []), { c, d }]);
    }
  }
  for (const w of disks) {
    if (!exclusive.has(w.workload)) continue;
    const dirsWord = w.source.startsWith('kafkaConfig') ? 'log dirs' : 'data dirs';
    for (const disk of w.disks) {
      const dirs = w.dirs.filter((d) => d.disks.includes(disk.name)).map((d) => d.path);
      const claims = named.get(disk.name) ?? [];
      if (claims.length > 1) {
        out.notes.push(
          `raid: ${disk.name} (${w.workload}'s ${dirsWord}) is named by ${claims.map((x) => x.d.target).join(' and ')}; which logical drive holds it is unknown`,
        );
        continue;
      }
      const claim = claims[0];
      if (!claim) {
        if (disk.raid) out.notes.push(unmatched(disk.name, disk.raid, w.workload, dirsWord, obs));
        continue;
      }
      const { c, d } = claim;
      const tie: RaidDiskTie = {
        workload: w.workload,
        disk: disk.name,
        dirs,
        dirsWord,
        controller: c.id,
        model: c.model,
        drive: d.target,
        currentWrite: d.currentWrite,
        defaultWrite: d.defaultWrite,
        protection: { kind: c.protection.kind, state: c.protection.state, condition: c.protection.condition },
      };
      out.ties.push(tie);
      if (d.currentWrite === 'write-through') out.warnings.push(writeThroughWarning(tie, disk.rotational));
    }
  }
  return out;
}

function unmatched(
  disk: string,
  raid: { vendor: string; model: string; driver?: string },
  workload: string,
  dirsWord: string,
  obs: RaidObservation,
): string {
  const what = `${disk} (${workload}'s ${dirsWord}) is a RAID virtual drive (${raid.vendor} ${raid.model}${raid.driver ? `, ${raid.driver}` : ''})`;
  const why =
    obs.controllers.length === 0
      ? 'no controller was read'
      : obs.controllers.some((c) => c.logicalDrives.some((d) => d.osDevice !== null))
        ? 'no logical drive the vendor tools list names it'
        : `the vendor tool's output names no OS disk for its logical drives (storcli/perccli print it only in /cN/vall show all, MegaCli never)`;
  return `raid: ${what}, but ${why}; its write cache is not tied to it (see isolate raid show)`;
}

function writeThroughWarning(t: RaidDiskTie, rotational: boolean | null): string {
  const media = rotational === false ? 'the drives' : 'the platters';
  const p = t.protection;
  const kind =
    p.kind === 'cachevault'
      ? 'CacheVault'
      : p.kind === 'bbu'
        ? 'battery'
        : p.kind === null || p.kind === 'none'
          ? 'battery/flash backup'
          : `${p.kind} backup`;
  const unit =
    p.condition === 'unknown'
      ? `the state of its ${kind} is unknown${p.state ? ` (${p.state})` : ''}`
      : `its ${kind} is ${p.condition}${p.state && p.state.toLowerCase() !== p.condition ? ` (${p.state})` : ''}`;
  const why =
    t.defaultWrite === 'write-back' || t.defaultWrite === 'always-write-back'
      ? `configured write-back, but the controller writes through: ${unit}; it stays so until the backup is known healthy`
      : p.condition === 'healthy'
        ? `write-through is configured and ${unit}: raid.writeCache: write-back would enable the self-protecting write-back`
        : `write-through is configured and ${unit}: isolate will not enable write-back until the backup is known healthy`;
  return `raid: ${t.workload}'s appends on ${t.disk} (${t.drive}, ${t.dirsWord} ${t.dirs.join(', ')}) wait for ${media}: the write cache is write-through — ${why} (raid policy: docs/raid.md)`;
}
