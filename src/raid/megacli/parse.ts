// MegaCli / MegaCli64 text (raid-cli.md §4) → model. Accepts any mix of -LDInfo, -LDPDInfo,
// -AdpBbuCmd, -AdpAllInfo and -adpCount outputs; facts are merged per adapter. A -ShowSummary, told
// from its content, is read on its own (summary.ts): it names no adapter to merge by.
import {
  emptyController,
  emptyDrive,
  type Finding,
  type LogicalDrive,
  type ParsedOutput,
  type Protection,
  type RaidController,
  type WritePolicy,
  unknownProtection,
} from '../../model/raid.js';
import { colonPair, getOrCreate, normKey, text, yesNo, markIncomplete } from '../words.js';
import { judgeMegacliBbu } from './protection.js';
import { isShowSummary, readShowSummary, type SummaryFacts, summaryController } from './summary.js';

interface VdFacts {
  vd: string;
  props: Map<string, string>;
}

interface AdapterFacts {
  adapter: string;
  adp: Map<string, string>;
  bbu: Map<string, string> | null;
  /** `BBU Firmware Status:` and `GasGuageStatus:` blocks: their Voltage/Temperature are flags, not gauges. */
  bbuFw: Map<string, string>;
  bbuGauge: Map<string, string>;
  /** Why what this adapter's outputs said cannot be trusted (cut short, crashed); null when complete. */
  incomplete: string | null;
  /** The -AdpBbuCmd output itself was incomplete: the battery is unknown. */
  bbuIncomplete: boolean;
  bbuFailed: boolean;
  bbuAbsent: boolean;
  vds: Map<string, VdFacts>;
}

type Block = 'adapter' | 'bbu' | 'vd' | 'pd' | null;

/**
 * One output read line by line: the block a line belongs to (an adapter's properties, its BBU with
 * the firmware-status and gas-gauge sub-blocks, a virtual drive, a physical drive), each property
 * kept in the facts of the adapter or drive the last header named, the first value of a key winning.
 */
class OutputPass {
  readonly touched = new Set<AdapterFacts>();
  sawBbu = false;
  sawAnything = false;
  printedCode: string | null = null;
  sawCount = false;
  private sub: 'fw' | 'gauge' | null = null;
  private adapter: AdapterFacts | null = null;
  private block: Block = null;
  private vd: VdFacts | null = null;

  constructor(
    private readonly source: string,
    private readonly facts: (adapter: string) => AdapterFacts,
    private readonly hostFindings: Finding[],
  ) {}

  line(raw: string): void {
    const line = raw.replace(/\t/g, ' ');
    if (this.header(line)) return;
    this.property(raw, line);
  }

  /** A line that opens a block or ends the output; true when it was one. */
  private header(line: string): boolean {
    const t = line.trim();
    let m: RegExpExecArray | null;
    m = /^Adapter #?(\d+)(?:\s+--\s+Virtual Drive Information:|\s*$)/.exec(t);
    if (m) {
      this.enter(m[1] as string, 'adapter');
      this.vd = null;
      this.sawAnything = true;
      return true;
    }
    m = /^BBU status for Adapter:\s*(\d+)/.exec(t);
    if (m) {
      this.enterBbu(m[1] as string);
      this.sawAnything = true;
      return true;
    }
    m = /^BBU \w+ Info for Adapter:\s*(\d+)|^BBU Properties for Adapter:\s*(\d+)/.exec(t);
    if (m) {
      this.enterBbu((m[1] ?? m[2]) as string);
      return true;
    }
    if (this.block === 'bbu' && /^BBU Firmware Status\s*:\s*$/.test(t)) {
      this.sub = 'fw';
      return true;
    }
    if (this.block === 'bbu' && /^(GasGuageStatus|BBU GasGauge Status)\s*:/.test(t)) {
      this.sub = 'gauge';
      return true;
    }
    m = /^Adapter (\d+): Get BBU Status Failed\./.exec(t);
    if (m) {
      // No BBU: "Get BBU Status Failed." (+ "required hardware component is not present" on 8.07),
      // check_raid-issue32-bbu-absent-exit-0x22.txt / -0x01.txt.
      this.enter(m[1] as string, 'bbu').bbuFailed = true;
      this.sawAnything = true;
      this.sawBbu = true;
      return true;
    }
    if (/required hardware component is not present/i.test(line) && this.adapter && this.block === 'bbu') {
      this.adapter.bbuAbsent = true;
      return true;
    }
    m = /^Exit Code:\s*(0x[0-9A-Fa-f]+)/.exec(t);
    if (m) {
      this.printedCode = m[1] as string;
      return true;
    }
    if (/^Controller Count:\s*\d+/.test(t)) {
      // -adpCount exits with the count (0x01 for one adapter): not an error (glpi-adpCount-exit-0x01.txt).
      this.sawAnything = true;
      this.sawCount = true;
      return true;
    }
    m = /^Virtual (?:Drive|Disk):\s*(\d+)/i.exec(t);
    if (m) {
      this.enterVd(m[1] as string);
      return true;
    }
    if (/^PD:\s*\d+ Information/.test(t)) {
      this.block = 'pd';
      return true;
    }
    return false;
  }

  private enter(adapter: string, block: Block): AdapterFacts {
    this.adapter = this.facts(adapter);
    this.touched.add(this.adapter);
    this.block = block;
    return this.adapter;
  }

  private enterBbu(adapter: string): void {
    this.enter(adapter, 'bbu').bbu ??= new Map();
    this.sub = null;
    this.sawBbu = true;
  }

  private enterVd(vd: string): void {
    if (!this.adapter) {
      this.hostFindings.push({
        severity: 'unknown',
        message: `megacli: ${this.source}: virtual drive without an adapter header`,
      });
      return;
    }
    this.vd = { vd, props: new Map() };
    this.adapter.vds.set(vd, this.vd);
    this.block = 'vd';
  }

  /** A `key: value` line, kept in the current block's facts (the first value of a key wins). */
  private property(raw: string, line: string): void {
    const adapter = this.adapter;
    const pair = colonPair(line);
    if (!pair || !adapter) return;
    const key = normKey(pair[0]);
    const value = pair[1];
    if (this.block === 'vd' && this.vd) {
      if (!this.vd.props.has(key)) this.vd.props.set(key, value);
    } else if (this.block === 'bbu' && adapter.bbu) {
      // Older MegaCli prints gauge lines after the GasGuageStatus flags without indent: those
      // are top-level again (netdata-AdpBbuCmd-old.txt "Relative State of Charge", "isSOHGood").
      if (this.sub !== null && raw.startsWith(' ')) {
        const target = this.sub === 'fw' ? adapter.bbuFw : adapter.bbuGauge;
        if (!target.has(key)) target.set(key, value);
      } else if (!adapter.bbu.has(key)) adapter.bbu.set(key, value);
    } else if (this.block === 'adapter') {
      if (!adapter.adp.has(key)) adapter.adp.set(key, value);
    }
  }
}

export class MegacliReader {
  private readonly adapters = new Map<string, AdapterFacts>();
  private readonly hostFindings: Finding[] = [];
  private readonly summaries: SummaryFacts[] = [];

  /**
   * `exitCode` is the process exit status of a live call (null for a saved file). MegaCli ends every
   * complete output with `Exit Code: 0xNN` and exits with that code (raid-cli.md §4); an output
   * without it, or a process that exited otherwise, was cut short (MegaCli crashes mid-output):
   * nothing it said is trusted for a decision.
   */
  add(output: string, source = 'output', exitCode: number | null = null): void {
    if (isShowSummary(output)) {
      this.summaries.push(readShowSummary(output, source, exitCode));
      return;
    }
    const pass = new OutputPass(source, (id) => this.facts(id), this.hostFindings);
    for (const raw of output.replace(/\r/g, '').split('\n')) pass.line(raw);
    if (!pass.sawAnything) {
      this.hostFindings.push({
        severity: 'unknown',
        message: `megacli: ${source} is not MegaCli output I recognise; give -AdpAllInfo, -LDInfo (or -LDPDInfo) and -AdpBbuCmd outputs`,
      });
    }
    const incomplete = this.incompleteness(pass, source, exitCode);
    if (incomplete !== null && pass.sawAnything) {
      for (const a of pass.touched) {
        a.incomplete ??= incomplete;
        if (pass.sawBbu) a.bbuIncomplete = true;
      }
      if (pass.touched.size === 0) this.hostFindings.push({ severity: 'unknown', message: incomplete });
    }
  }

  /** Why one output cannot be trusted (no `Exit Code:`, another exit status, an error code), or null. */
  private incompleteness(pass: OutputPass, source: string, exitCode: number | null): string | null {
    const printedCode = pass.printedCode;
    const printed = printedCode === null ? null : Number.parseInt(printedCode, 16);
    if (printedCode === null) {
      return `megacli: ${source} does not end with "Exit Code:" (cut short or crashed)`;
    }
    if (exitCode !== null && exitCode !== printed) {
      return `megacli: ${source} printed Exit Code ${printedCode} but the process exited with ${exitCode} (crashed?)`;
    }
    if (printedCode !== '0x00' && !pass.sawCount && !this.anyBbuFailure()) {
      return `megacli: ${source} ended with Exit Code ${printedCode}`;
    }
    return null;
  }

  private anyBbuFailure(): boolean {
    return [...this.adapters.values()].some((a) => a.bbuFailed);
  }

  private facts(adapter: string): AdapterFacts {
    return getOrCreate(this.adapters, adapter, () => ({
      adapter,
      adp: new Map(),
      bbu: null,
      bbuFw: new Map(),
      bbuGauge: new Map(),
      incomplete: null,
      bbuIncomplete: false,
      bbuFailed: false,
      bbuAbsent: false,
      vds: new Map(),
    }));
  }

  result(): ParsedOutput {
    const controllers = [...this.adapters.values()]
      .sort((a, b) => Number(a.adapter) - Number(b.adapter))
      .map((f) => toController(f));
    const findings = [...this.hostFindings];
    if (this.summaries.length === 0) return { controllers, findings };
    if (controllers.length > 0) {
      // Matching a summary to an adapter would be a guess. Its drives are left to the outputs that
      // name their adapter; when those describe no drive at all, the summary's drives are unknown.
      const described = controllers.some((c) => c.logicalDrives.length > 0);
      for (const s of this.summaries) {
        const listed = s.drives.length;
        findings.push({
          severity: listed > 0 && !described ? 'unknown' : 'info',
          message: `megacli: ${s.source}: -ShowSummary names no adapter number, so it is not merged with the other outputs${listed > 0 && !described ? `; its ${listed === 1 ? '1 virtual drive is' : `${listed} virtual drives are`} described by no other output (give -LDInfo)` : ''}`,
        });
      }
      return { controllers, findings };
    }
    if (this.summaries.length > 1) {
      findings.push({
        severity: 'unknown',
        message: `megacli: ${this.summaries.length} -ShowSummary outputs (${this.summaries.map((s) => s.source).join(', ')}) name no adapter number to tell their controllers apart; not read`,
      });
      return { controllers, findings };
    }
    const one = summaryController(this.summaries[0] as SummaryFacts);
    return { controllers: one.controller ? [one.controller] : [], findings: [...findings, ...one.findings] };
  }
}

function toController(f: AdapterFacts): RaidController {
  const c = emptyController('megacli', f.adapter, `megacli:/a${f.adapter}`);
  c.model = text(f.adp.get('product name'));
  const memory = f.adp.get('memory');
  c.cachePresent = memory === 'Present' ? true : memory === 'Absent' ? false : null;
  // MegaCli prints no "controller status" line. -AdpAllInfo "Device Present" counters are the
  // closest stated health: no degraded/offline VDs, no critical/failed disks, no uncorrectable errors.
  const counters = ['degraded', 'offline', 'critical disks', 'failed disks', 'memory uncorrectable errors'];
  const values = counters.map((k) => f.adp.get(k));
  if (values.every((v) => v !== undefined)) {
    const bad = values.some((v) => Number.parseInt(v as string, 10) !== 0);
    c.healthy = !bad;
    c.status = bad ? 'Degraded' : 'Optimal';
  }
  c.protection = protectionOf(f);
  for (const vd of [...f.vds.values()].sort((a, b) => Number(a.vd) - Number(b.vd))) {
    c.logicalDrives.push(toDrive(c, vd));
  }
  if (f.incomplete) markIncomplete(c, f.incomplete);
  return c;
}

function protectionOf(f: AdapterFacts): Protection {
  const p = unknownProtection();
  const hw = f.adp.get('bbu');
  if (f.bbuIncomplete) {
    // Cut short or crashed: nothing it printed about the battery counts, least of all "Optimal".
    return { ...p, kind: 'bbu' };
  }
  if (f.bbuAbsent || hw === 'Absent') {
    return { ...p, kind: 'none', present: false, healthy: false, state: 'Absent', condition: 'absent' };
  }
  if (f.bbuFailed) {
    // 8.01 prints only "Get BBU Status Failed.": no BBU is likely, but the output does not say so.
    return {
      ...p,
      kind: 'bbu',
      state: 'Get BBU Status Failed',
      unrecognised: ['Get BBU Status Failed (no reason given)'],
    };
  }
  const b = f.bbu;
  if (!b) {
    if (hw === 'Present') return { ...p, kind: 'bbu', present: true };
    return p;
  }
  p.kind = 'bbu';
  p.present = true;
  p.state = text(b.get('battery state'));
  const fw = f.bbuFw;
  // Flags sit under "BBU Firmware Status:"; very old captures print them at the top level.
  const flagOf = (k: string) => fw.get(k) ?? b.get(k);
  const replace = yesNo(flagOf('battery replacement required'));
  const aboutToFail = yesNo(flagOf('pack is about to fail & should be replaced'));
  p.replacementRequired = replace === true || aboutToFail === true ? true : replace === false ? false : null;
  p.learnActive = yesNo(flagOf('learn cycle active'));
  const chargingStatus = text(flagOf('charging status'));
  // check_raid-issue39-bbu-charging.txt: "Charging Status : None" yet "Charging current: 512 mA" and
  // "Fully Charged: No" — current flowing into the pack is charging, whatever the status word says.
  const current = /^(\d+)\s*mA/.exec(f.bbuGauge.get('charging current') ?? b.get('charging current') ?? '');
  if (chargingStatus !== null) p.charging = /^charging$/i.test(chargingStatus);
  if (current && Number(current[1]) > 0) p.charging = true;
  else if (current && p.charging === null) p.charging = false;
  p.nextLearn = text(b.get('next learn time'));
  const flags = new Map(fw);
  if (fw.size === 0) {
    // Top-level Voltage/Temperature are gauges in mV/°C, not the firmware's OK flag.
    for (const [k, v] of b) if (k !== 'voltage' && k !== 'temperature') flags.set(k, v);
  }
  judgeMegacliBbu(p, b, flags, f.bbuGauge);
  if (p.charging && p.condition === 'healthy') {
    p.condition = 'charging';
    p.healthy = false;
  }
  return p;
}

interface CachePolicy {
  write: WritePolicy;
  readAhead: LogicalDrive['readAhead'];
  ioPolicy: LogicalDrive['ioPolicy'];
  cachedBadBbu: boolean | null;
}

/**
 * "WriteBack, ReadAhead, Direct, No Write Cache if Bad BBU" (check_raid-3-ldinfo-WB.txt);
 * "Write Cache OK if Bad BBU" = CachedBadBBU (check_raid-issue39-ldinfo-CachedBadBBU.txt).
 * Write-back without the BBU clause is unknown: it could be either mode.
 */
export function decodeMegacliPolicy(value: string | undefined): CachePolicy {
  const out: CachePolicy = { write: 'unknown', readAhead: null, ioPolicy: null, cachedBadBbu: null };
  if (!value) return out;
  let write: 'wb' | 'wt' | null = null;
  for (const word of value.split(',').map((w) => w.trim())) {
    if (word === 'WriteBack') write = 'wb';
    else if (word === 'WriteThrough') write = 'wt';
    else if (word === 'ReadAhead') out.readAhead = 'on';
    else if (word === 'ReadAheadNone') out.readAhead = 'off';
    else if (word === 'ReadAdaptive') out.readAhead = 'adaptive';
    else if (word === 'Direct') out.ioPolicy = 'direct';
    else if (word === 'Cached') out.ioPolicy = 'cached';
    else if (word === 'No Write Cache if Bad BBU') out.cachedBadBbu = false;
    else if (word === 'Write Cache OK if Bad BBU') out.cachedBadBbu = true;
  }
  if (write === 'wt') out.write = 'write-through';
  else if (write === 'wb' && out.cachedBadBbu === false) out.write = 'write-back';
  else if (write === 'wb' && out.cachedBadBbu === true) out.write = 'always-write-back';
  return out;
}

function toDrive(c: RaidController, vd: VdFacts): LogicalDrive {
  const d = emptyDrive(`l${vd.vd}`, `megacli:/a${c.address}/l${vd.vd}`);
  d.name = text(vd.props.get('name'));
  d.raidLevel = text(vd.props.get('raid level'));
  d.state = text(vd.props.get('state'));
  const current = decodeMegacliPolicy(vd.props.get('current cache policy'));
  const defaults = decodeMegacliPolicy(vd.props.get('default cache policy'));
  d.currentWrite = current.write;
  d.defaultWrite = defaults.write;
  d.readAhead = current.readAhead;
  d.ioPolicy = current.ioPolicy;
  d.writeBackIfBadBattery = current.cachedBadBbu ?? defaults.cachedBadBbu;
  const disk = vd.props.get('disk cache policy');
  d.diskCache =
    disk === 'Enabled'
      ? 'enabled'
      : disk === 'Disabled'
        ? 'disabled'
        : disk === "Disk's Default"
          ? 'default'
          : null;
  return d;
}

export function parseMegacli(outputs: { text: string; source?: string }[]): ParsedOutput {
  const reader = new MegacliReader();
  for (const o of outputs) reader.add(o.text, o.source);
  return reader.result();
}
