// storcli/perccli (and storcli2/perccli2) output → model. One accumulator takes any number of
// outputs (`/cALL show all J`, `/cN/vall show all J`, `/cN/bbu|cv show all J`, `show J`, text
// `show all`) and merges them per controller, so `raid parse` can read a support bundle and
// `observe` can combine its calls.
import {
  emptyController,
  emptyDrive,
  type Finding,
  type LogicalDrive,
  type ParsedOutput,
  type Protection,
  type RaidController,
  type RaidTool,
  unknownProtection,
} from '../../model/raid.js';
import { getOrCreate, normKey, text, yesNo, markIncomplete } from '../words.js';
import { type CacheWords, decodeCacheList, decodeCacheString, decodeInitialWrite } from './cache.js';
import { setOsDevice } from '../os-device.js';
import { judgeStorcliUnit } from './protection.js';
import { storcliTextToJson } from './text.js';

type Json = Record<string, unknown>;

interface VdFacts {
  vd: string;
  dg: string | null;
  type: string | null;
  state: string | null;
  name: string | null;
  current: CacheWords | null;
  defaults: CacheWords | null;
  initialWrite: string | null;
  diskCachePolicy: string | null;
  activeOps: string | null;
  /** `OS Drive Name` from `/cN/vall show all` (VDn Properties / VD Properties). */
  osDriveName: string | null;
}

interface CtlFacts {
  ctl: string;
  schema2: boolean;
  model: string | null;
  status: string | null;
  personality: string | null;
  driver: string | null;
  onBoardMemory: string | null;
  /** HwCfg `BBU` / `Energy Pack`: Present | Absent. */
  packHw: string | null;
  /** Status `BBU Status` / `Energy Pack Status`: bitfield number or NA. */
  packStatus: unknown;
  nextBatteryLearn: string | null;
  protKind: 'bbu' | 'cachevault' | null;
  /** Protection properties by normalised name (state, replacement required, learn cycle active ...). */
  prot: Map<string, string>;
  /** `use /cx/cv`: the card has a CacheVault, not a BBU (megaraid-dashboard-bbu_show_all-failure-use-cv.json). */
  bbuPathRefused: boolean;
  /** The unit's own `/cN/bbu|cv show all` was read: only it prints the firmware fault flags. */
  detailRead: boolean;
  /** A read of this controller was not complete (exit status, no Command Status): unknown. */
  incomplete: string | null;
  overviewBbu: string | null;
  overviewHealth: string | null;
  vds: Map<string, VdFacts>;
  pdcByDg: Map<string, string>;
  failures: string[];
}

export class StorcliReader {
  private readonly ctls = new Map<string, CtlFacts>();
  private readonly hostFindings: Finding[] = [];
  private noController = false;

  constructor(private readonly tool: 'storcli' | 'perccli') {}

  /**
   * Add one saved or live output. Bad output adds an `unknown` finding and nothing else. `exitCode`
   * is a live call's exit status: a non-zero exit with a `Success` verdict is a contradiction, so
   * what the output says about its controllers becomes unknown.
   */
  add(output: string, source = 'output', exitCode: number | null = null): void {
    let doc: unknown;
    const trimmed = output.trim();
    if (trimmed === '') {
      this.hostFindings.push({ severity: 'unknown', message: `${this.tool}: ${source} is empty` });
      return;
    }
    if (trimmed.startsWith('{')) {
      try {
        doc = JSON.parse(trimmed);
      } catch {
        this.hostFindings.push({
          severity: 'unknown',
          message: `${this.tool}: ${source} is not valid JSON (truncated?); its controllers are unknown`,
        });
        return;
      }
    } else {
      doc = storcliTextToJson(output);
    }
    const list = (doc as Json | null)?.Controllers;
    if (!Array.isArray(list) || list.length === 0) {
      this.hostFindings.push({
        severity: 'unknown',
        message: `${this.tool}: ${source} has no "Controllers" list; not ${this.tool} output`,
      });
      return;
    }
    for (const entry of list) {
      this.addEntry(entry as Json, source);
      const status = ((entry as Json)['Command Status'] ?? {}) as Json;
      const ctl = text(status.Controller);
      if (exitCode !== null && exitCode !== 0 && status.Status === 'Success' && ctl !== null) {
        this.facts(ctl).incomplete ??=
          `${this.tool}: ${source} exited with status ${exitCode} after printing Success`;
      }
    }
  }

  private addEntry(entry: Json, source: string): void {
    const status = (entry['Command Status'] ?? {}) as Json;
    const data = entry['Response Data'] as Json | undefined;
    const ok = status.Status === 'Success';
    const description = text(status.Description);
    const details = Array.isArray(status['Detailed Status']) ? (status['Detailed Status'] as Json[]) : [];
    const ctlId = text(status.Controller);
    if (!ok && /no controller found/i.test(description ?? '')) {
      this.noController = true;
      return;
    }
    if (data && typeof data === 'object') {
      const overview = data['System Overview'];
      if (Array.isArray(overview)) this.readOverview(overview as Json[]);
      if ('Controller Count' in data && ctlId === null) return;
    }
    if (ctlId === null) {
      if (!ok)
        this.hostFindings.push({
          severity: 'unknown',
          message: `${this.tool}: ${source}: ${failureText(description, details)}`,
        });
      return;
    }
    const useCv = details.some((d) => /use \/cx\/cv/i.test(String(d.ErrMsg ?? '')));
    if (!data || typeof data !== 'object') {
      // A set/delete verdict or a refused show: no data about the controller itself.
      if (useCv) this.facts(ctlId).bbuPathRefused = true;
      else if (!ok) {
        this.hostFindings.push({
          severity: 'warning',
          message: `${this.tool} /c${ctlId}: ${failureText(description, details)}`,
        });
      }
      return;
    }
    const ctl = this.facts(ctlId);
    // On a CacheVault card `/cx/bbu show all` fails with "use /cx/cv": not "no battery" (§3.3).
    if (useCv) ctl.bbuPathRefused = true;
    // `Failure` can still carry full Response Data (ErrCd 59 fixture, raid-cli.md §3.5): keep the data.
    else if (!ok) ctl.failures.push(failureText(description, details));
    this.readData(ctl, data);
  }

  private facts(ctl: string): CtlFacts {
    return getOrCreate(this.ctls, ctl, () => ({
      ctl,
      schema2: false,
      model: null,
      status: null,
      personality: null,
      driver: null,
      onBoardMemory: null,
      packHw: null,
      packStatus: undefined,
      nextBatteryLearn: null,
      protKind: null,
      prot: new Map(),
      bbuPathRefused: false,
      detailRead: false,
      incomplete: null,
      overviewBbu: null,
      overviewHealth: null,
      vds: new Map(),
      pdcByDg: new Map(),
      failures: [],
    }));
  }

  private readOverview(rows: Json[]): void {
    for (const row of rows) {
      const ctl = text(row.Ctl);
      if (ctl === null) continue;
      const f = this.facts(ctl);
      f.model ??= text(row.Model);
      // Raw on purpose: "N/A" is the answer here (no BBU), not a missing value.
      f.overviewBbu = typeof row.BBU === 'string' ? row.BBU.trim() : null;
      f.overviewHealth = text(row.Hlth);
    }
  }

  private readData(f: CtlFacts, data: Json): void {
    const basics = obj(data.Basics);
    f.model = text(basics?.Model) ?? text(basics?.['Product Name']) ?? text(data['Product Name']) ?? f.model;
    const version = obj(data.Version);
    f.driver = text(version?.['Driver Name']) ?? text(data['Driver Name']) ?? f.driver;
    const status = obj(data.Status);
    if (status) {
      f.status = text(status['Controller Status']) ?? f.status;
      f.personality =
        text(status['Controller Personality']) ?? text(status['Current Personality']) ?? f.personality;
      // `BBU Status` was renamed `Energy Pack Status` (phe-cALL_show_all-MR216i-no-cache-NRWTD.json).
      if ('BBU Status' in status) f.packStatus = status['BBU Status'];
      if ('Energy Pack Status' in status) f.packStatus = status['Energy Pack Status'];
    }
    const hw = obj(data.HwCfg);
    if (hw) {
      f.packHw = text(hw.BBU) ?? text(hw['Energy Pack']) ?? f.packHw;
      f.onBoardMemory =
        text(hw['On Board Memory Size']) ??
        (typeof hw['DDR Memory Size(MiB)'] === 'number' ? `${hw['DDR Memory Size(MiB)']}MiB` : null) ??
        f.onBoardMemory;
    }
    const tasks = obj(data['Scheduled Tasks']);
    if (tasks) f.nextBatteryLearn = text(tasks['Next Battery Learn']) ?? f.nextBatteryLearn;
    this.readProtection(f, data);
    const topology = data.TOPOLOGY;
    if (Array.isArray(topology)) {
      for (const row of topology as Json[]) {
        // The drive-group row (Arr '-') carries the group's PD cache setting: dflt/dsbl/enbl.
        const dg = text(row.DG);
        const pdc = text(row.PDC);
        if (dg !== null && pdc !== null && row.Arr === '-') f.pdcByDg.set(dg, pdc);
      }
    }
    const vdList = data['VD LIST'];
    if (Array.isArray(vdList)) for (const row of vdList as Json[]) this.readVdRow(f, row);
    for (const [key, value] of Object.entries(data)) {
      // `/c0/v0` arrays and `VD0 Properties` from `/cx/vall show all` (megaraid-dashboard, puppet).
      if (/^\/c\d+\/v\d+$/.test(key) && Array.isArray(value)) {
        for (const row of value as Json[]) this.readVdRow(f, row);
      }
      const props = /^VD(\d+) Properties$/.exec(key);
      if (props) this.readVdProperties(f, props[1] as string, obj(value));
    }
    const vds = data['Virtual Drives'];
    if (Array.isArray(vds)) {
      // storcli2 `vall show all`: [{ "VD Info": {...}, "VD Properties": {...} }] (perccli2-status-H965i-vall.json).
      for (const item of vds as Json[]) {
        const info = obj(item['VD Info']);
        if (!info) continue;
        const vd = this.readVdRow(f, info);
        if (vd) this.readVdProperties(f, vd.vd, obj(item['VD Properties']));
      }
    }
  }

  private readVdRow(f: CtlFacts, row: Json): VdFacts | null {
    const dgvd = text(row['DG/VD']);
    const m = dgvd ? /^(\d+)\/(\d+)$/.exec(dgvd) : null;
    if (!m) return null;
    const vd = this.vd(f, m[2] as string);
    vd.dg = m[1] as string;
    vd.type = text(row.TYPE) ?? vd.type;
    vd.state = text(row.State) ?? vd.state;
    vd.name = text(row.Name) ?? vd.name;
    if ('CurrentCache' in row || 'DefaultCache' in row) {
      f.schema2 = true;
      vd.current = decodeCacheList(row.CurrentCache);
      vd.defaults = decodeCacheList(row.DefaultCache);
    } else if ('Cache' in row) {
      vd.current = decodeCacheString(row.Cache);
    }
    return vd;
  }

  private readVdProperties(f: CtlFacts, vdNumber: string, props: Json | null): void {
    if (!props) return;
    const vd = this.vd(f, vdNumber);
    vd.initialWrite = text(props['Write Cache(initial setting)']) ?? vd.initialWrite;
    vd.diskCachePolicy =
      text(props['Disk Cache Policy']) ?? text(props['Drive Write Cache Policy']) ?? vd.diskCachePolicy;
    vd.activeOps = text(props['Active Operations']) ?? vd.activeOps;
    vd.osDriveName = text(props['OS Drive Name']) ?? vd.osDriveName;
  }

  private vd(f: CtlFacts, vdNumber: string): VdFacts {
    return getOrCreate(f.vds, vdNumber, () => ({
      vd: vdNumber,
      dg: null,
      type: null,
      state: null,
      name: null,
      current: null,
      defaults: null,
      initialWrite: null,
      diskCachePolicy: null,
      activeOps: null,
      osDriveName: null,
    }));
  }

  /**
   * Battery / CacheVault / Energy Pack. `show all` embeds a one-row table (`BBU_Info`,
   * `Cachevault_Info`: Model, State, Next Learn ...); `/cx/bbu|cv show all` gives Property/Value
   * lists (`Cachevault_Info`, `Firmware_Status`, `Properties`, raid-cli.md §3.3); storcli2 has
   * `Energy Pack Info` rows (§3.6).
   */
  private readProtection(f: CtlFacts, data: Json): void {
    // Firmware-status flags share names with gauges ("Temperature: OK" vs "Temperature: 40 C"): keep
    // them apart with a prefix.
    const sections: [string, 'bbu' | 'cachevault' | null, string][] = [
      ['BBU_Info', 'bbu', ''],
      ['Cachevault_Info', 'cachevault', ''],
      ['BBU_Firmware_Status', null, 'fw:'],
      ['Firmware_Status', null, 'fw:'],
      ['Properties', null, ''],
      ['GasGaugeStatus', null, 'gas:'],
      ['BBU_Capacity_Info', null, 'gas:'],
    ];
    for (const [name, kind, prefix] of sections) {
      const rows = data[name];
      if (!Array.isArray(rows) || rows.length === 0) continue;
      if (kind) f.protKind = kind;
      // Property/Value lists are the unit's own `show all` (raid-cli.md §3.3); `show all` of the
      // controller embeds one-row tables instead.
      if (prefix === 'fw:' && rows.some((r) => r && typeof r === 'object' && 'Property' in (r as Json))) {
        f.detailRead = true;
      }
      for (const row of rows as Json[]) {
        if ('Property' in row) {
          const key = text(row.Property);
          const value = text(row.Value);
          if (key && value !== null) f.prot.set(prefix + normKey(key), value);
        } else {
          for (const [k, v] of Object.entries(row)) {
            const value = text(v);
            if (value !== null) f.prot.set(prefix + normKey(k), value);
          }
        }
      }
    }
    const pack = data['Energy Pack Info'];
    if (Array.isArray(pack) && pack.length > 0) {
      const row = pack[0] as Json;
      f.protKind = /batt/i.test(String(row.Type ?? '')) ? 'bbu' : 'cachevault';
      const status = text(row.Status);
      if (status) f.prot.set('state', status);
    }
  }

  result(): ParsedOutput {
    const findings = [...this.hostFindings];
    if (this.noController && this.ctls.size === 0) {
      findings.push({ severity: 'info', message: `${this.tool}: No Controller found` });
    }
    const controllers = [...this.ctls.values()]
      .sort((a, b) => Number(a.ctl) - Number(b.ctl))
      .map((f) => this.toController(f));
    return { controllers, findings };
  }

  private toController(f: CtlFacts): RaidController {
    const tool: RaidTool = f.schema2 ? (this.tool === 'perccli' ? 'perccli2' : 'storcli2') : this.tool;
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
      c.logicalDrives.push(this.toDrive(c, f, vd));
    }
    return c;
  }

  private toDrive(c: RaidController, f: CtlFacts, vd: VdFacts): LogicalDrive {
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

function failureText(description: string | null, details: Json[]): string {
  const msgs = details.map(
    (d) => `${text(d.ErrMsg) ?? 'error'}${d.ErrCd !== undefined ? ` (ErrCd ${d.ErrCd})` : ''}`,
  );
  const desc = description && description !== 'None' ? description : 'command failed';
  return msgs.length > 0 ? `${desc}: ${msgs.join('; ')}` : desc;
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

function obj(value: unknown): Json | null {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : null;
}

/** Parse any number of storcli/perccli outputs into one result. */
export function parseStorcli(
  outputs: { text: string; source?: string }[],
  tool: 'storcli' | 'perccli',
): ParsedOutput {
  const reader = new StorcliReader(tool);
  for (const o of outputs) reader.add(o.text, o.source);
  return reader.result();
}
