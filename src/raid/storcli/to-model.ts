// A controller's facts → the model: its tool (storcli2/perccli2 by their schema), status, mode,
// cache memory, protection (judged by protection.ts) and logical drives with their cache policies.
import {
  emptyController,
  emptyDrive,
  type LogicalDrive,
  type Protection,
  type RaidController,
  type RaidTool,
  unknownProtection,
} from '../../model/raid.js';
import { setOsDevice } from '../os-device.js';
import { markIncomplete, yesNo } from '../words.js';
import { decodeInitialWrite } from './cache.js';
import type { CtlFacts, VdFacts } from './facts.js';
import { judgeStorcliUnit } from './protection.js';

export function toController(f: CtlFacts, reader: 'storcli' | 'perccli'): RaidController {
  const tool: RaidTool = f.schema2 ? (reader === 'perccli' ? 'perccli2' : 'storcli2') : reader;
  const c = emptyController(tool, f.ctl, `${tool}:/c${f.ctl}`);
  c.model = f.model;
  c.status = f.status ?? expandHealth(f.overviewHealth);
  // storcli prints `Optimal`; storcli on an IT HBA prints `OK` (netdata-mpt3sas-controllers-info.json).
  c.healthy = c.status === null ? null : c.status === 'Optimal' || c.status === 'OK';
  c.mode = modeOf(f);
  c.cachePresent = memoryPresent(f.onBoardMemory);
  c.protection = protectionOf(f);
  for (const msg of f.failures) c.findings.push({ severity: 'warning', message: msg, target: c.id });
  if (f.incomplete) markIncomplete(c, f.incomplete);
  if (f.schema2) {
    // raid-cli.md §3.6/§10: storcli2/perccli2 set syntax is not in public sources.
    c.readOnlyReason = `${tool} set syntax is not verified (raid-cli.md §10); isolate only reads this controller`;
  }
  for (const vd of [...f.vds.values()].sort((a, b) => Number(a.vd) - Number(b.vd))) {
    c.logicalDrives.push(toDrive(c, f, vd));
  }
  return c;
}

function toDrive(c: RaidController, f: CtlFacts, vd: VdFacts): LogicalDrive {
  const d = emptyDrive(`v${vd.vd}`, `${c.tool}:/c${f.ctl}/v${vd.vd}`);
  d.name = vd.name;
  d.raidLevel = vd.type;
  d.state = vd.state;
  const cur = vd.current;
  if (cur) {
    d.currentWrite = cur.write;
    d.readAhead = cur.readAhead;
    d.ioPolicy = cur.ioPolicy;
    d.writeBackIfBadBattery = cur.write === 'unknown' ? null : cur.write === 'always-write-back';
  }
  d.defaultWrite = vd.defaults ? vd.defaults.write : decodeInitialWrite(vd.initialWrite);
  d.diskCache = diskCacheOf(vd.diskCachePolicy ?? (vd.dg !== null ? (f.pdcByDg.get(vd.dg) ?? null) : null));
  d.activeOperation = vd.activeOps === 'None' ? null : vd.activeOps;
  setOsDevice(c, d, vd.osDriveName);
  return d;
}

function protectionOf(f: CtlFacts): Protection {
  const p = unknownProtection();
  const hw = f.packHw?.toLowerCase() ?? null;
  const overview = f.overviewBbu;
  if (hw === 'absent' || (f.protKind === null && overview === 'N/A' && hw === null)) {
    // HwCfg `BBU = Absent` (storcli-check-text-3ctrl-cv-bbu-nobbu.txt ctrl 1) / System Overview `BBU N/A`.
    return { ...p, kind: 'none', present: false, healthy: false, state: 'Absent', condition: 'absent' };
  }
  p.kind = f.protKind ?? (f.bbuPathRefused ? 'cachevault' : null);
  if (hw === 'present' || f.protKind !== null) p.present = true;
  const state = f.prot.get('state') ?? f.prot.get('battery state') ?? null;
  p.state = state ?? (overview === 'Opt' ? 'Optimal' : null);
  const replacement = yesNo(
    f.prot.get('fw:replacement required') ??
      f.prot.get('fw:battery replacement required') ??
      f.prot.get('replacement required'),
  );
  const aboutToFail = yesNo(f.prot.get('fw:pack is about to fail & should be replaced'));
  p.replacementRequired = replacement === true || aboutToFail === true ? true : replacement;
  // `BBU Status` is an undocumented bitfield; bit 3 (8) = charging (raid-cli.md §3.3, [R16b]).
  const raw = f.packStatus;
  const bits =
    typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  const chargingField = f.prot.get('fw:charging status') ?? f.prot.get('charging status');
  if (chargingField) p.charging = /^charging$/i.test(chargingField);
  else if (Number.isInteger(bits)) p.charging = (bits & 8) !== 0;
  const learnField = yesNo(f.prot.get('fw:learn cycle active') ?? f.prot.get('learn cycle active'));
  if (learnField !== null) p.learnActive = learnField;
  // During a learn cycle storcli reports the BBU state as something other than Optimal
  // ("unknown" in [R17a]), so an Optimal state means no learn is running.
  else if (p.state === 'Optimal') p.learnActive = false;
  p.nextLearn = f.prot.get('next learn time') ?? f.prot.get('next learn') ?? f.nextBatteryLearn;
  if (f.incomplete !== null) return p;
  judgeStorcliUnit(p, {
    kind: p.kind === 'cachevault' ? 'cachevault' : p.kind === 'bbu' ? 'bbu' : null,
    prot: state === null && p.state !== null ? new Map([...f.prot, ['state', p.state]]) : f.prot,
    packStatus: f.packStatus,
    detailRead: f.detailRead,
  });
  return p;
}

function expandHealth(hlth: string | null): string | null {
  if (hlth === 'Opt') return 'Optimal';
  return hlth;
}

function modeOf(f: CtlFacts): RaidController['mode'] {
  if (f.driver === 'mpt3sas') return 'hba';
  const p = f.personality?.toUpperCase() ?? '';
  if (p.startsWith('HBA')) return 'hba';
  if (p.startsWith('RAID')) return 'raid';
  // A tri-mode card in "JBOD-Mode" still runs RAID VDs (MR216i fixture: JBOD-Mode + a RAID1 VD).
  if (p.startsWith('JBOD')) return 'mixed';
  return null;
}

function memoryPresent(size: string | null): boolean | null {
  if (size === null) return null;
  const m = /^(\d+(?:\.\d+)?)\s*(KB|MB|GB|MiB|GiB)$/i.exec(size.trim());
  if (!m) return null;
  return Number(m[1]) > 0;
}

function diskCacheOf(value: string | null): LogicalDrive['diskCache'] {
  if (value === null) return null;
  const v = value.toLowerCase();
  if (v === 'enabled' || v === 'enbl' || v === 'on') return 'enabled';
  if (v === 'disabled' || v === 'dsbl' || v === 'off') return 'disabled';
  if (v === "disk's default" || v === 'dflt' || v === 'default') return 'default';
  return null;
}
