// HPE ssacli / hpssacli / hpacucli text (raid-cli.md §5) → model. Reads `ctrl all show status`,
// `ctrl all show config [detail]` and `ctrl slot=N ld all show [detail]` outputs, skipping prompts
// and advisory banners (check_raid-ld-show-firmware-upgrade-banner.txt).
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
import { setOsDevice } from '../os-device.js';
import { colonPair, getOrCreate, normKey, text, markIncomplete } from '../words.js';
import { cacheStatusFindings, judgeSsacliUnit } from './protection.js';

interface LdFacts {
  ld: string;
  props: Map<string, string>;
  summary: string | null;
}

interface CtlFacts {
  slot: string;
  model: string;
  headerFlags: string;
  /** A live read that exited non-zero: what it printed about this controller is unknown. */
  incomplete: string | null;
  props: Map<string, string>;
  lds: Map<string, LdFacts>;
}

export class SsacliReader {
  private readonly ctls = new Map<string, CtlFacts>();
  private readonly hostFindings: Finding[] = [];
  private noControllers = false;

  /**
   * ssacli prints no completion marker, so for a live call the exit status is the only sign that the
   * output is whole (`exitCode`, null for a saved file): non-zero makes every controller it printed
   * unknown.
   */
  add(output: string, source = 'output', exitCode: number | null = null): void {
    const lines = output.replace(/\r/g, '').split('\n');
    const touched = new Set<CtlFacts>();
    let ctl: CtlFacts | null = null;
    let ld: LdFacts | null = null;
    let ldIndent = 0;
    let sawAnything = false;
    for (const raw of lines) {
      if (raw.trim() === '' || raw.startsWith('#')) continue;
      const indent = raw.length - raw.trimStart().length;
      const line = raw.trim();
      let m: RegExpExecArray | null;
      m = indent === 0 ? /^Error:\s*(.*)$/.exec(line) : null;
      if (m) {
        sawAnything = true;
        if (/no controllers detected/i.test(m[1] as string)) this.noControllers = true;
        else this.hostFindings.push({ severity: 'warning', message: `ssacli: ${source}: ${m[1]}` });
        continue;
      }
      m = indent === 0 ? /^(.*?) in Slot (\S+)(.*)$/.exec(line) : null;
      if (m) {
        ctl = this.facts(m[2] as string, (m[1] as string).trim(), m[3] ?? '');
        touched.add(ctl);
        ld = null;
        sawAnything = true;
        continue;
      }
      if (!ctl) continue;
      if (ld && indent <= ldIndent) ld = null;
      m = /^Logical Drive:\s*(\d+)$/.exec(line);
      if (m) {
        ld = this.ld(ctl, m[1] as string);
        ldIndent = indent;
        continue;
      }
      m = /^logicaldrive (\d+)\s*\((.*)\)$/.exec(line);
      if (m) {
        this.ld(ctl, m[1] as string).summary = m[2] as string;
        continue;
      }
      const pair = colonPair(line);
      if (!pair) continue;
      if (ld) {
        if (!ld.props.has(normKey(pair[0]))) ld.props.set(normKey(pair[0]), pair[1]);
      } else if (indent === 3) {
        // Controller properties sit at indent 3; deeper lines are ports, cages, arrays, drives.
        if (!ctl.props.has(normKey(pair[0]))) ctl.props.set(normKey(pair[0]), pair[1]);
      }
    }
    if (!sawAnything) {
      this.hostFindings.push({
        severity: 'unknown',
        message: `ssacli: ${source} is not ssacli output I recognise`,
      });
    }
    if (exitCode !== null && exitCode !== 0) {
      const why = `ssacli: ${source} exited with status ${exitCode} (cut short or failed)`;
      for (const c of touched) c.incomplete ??= why;
      if (touched.size === 0 && !this.noControllers)
        this.hostFindings.push({ severity: 'unknown', message: why });
    }
  }

  private facts(slot: string, model: string, flags: string): CtlFacts {
    return getOrCreate(this.ctls, slot, () => ({
      slot,
      model,
      headerFlags: flags,
      incomplete: null,
      props: new Map(),
      lds: new Map(),
    }));
  }

  private ld(ctl: CtlFacts, n: string): LdFacts {
    return getOrCreate(ctl.lds, n, () => ({ ld: n, props: new Map(), summary: null }));
  }

  result(): ParsedOutput {
    const findings = [...this.hostFindings];
    if (this.noControllers && this.ctls.size === 0) {
      findings.push({ severity: 'info', message: 'ssacli: No controllers detected' });
    }
    return { controllers: [...this.ctls.values()].map(toController), findings };
  }
}

function toController(f: CtlFacts): RaidController {
  const c = emptyController('ssacli', `slot=${f.slot}`, `ssacli:slot=${f.slot}`);
  const get = (k: string) => text(f.props.get(k));
  c.model = f.model;
  c.status = get('controller status');
  c.healthy = c.status === null ? null : c.status === 'OK';
  const mode = get('controller mode') ?? /\((HBA|RAID) Mode\)/.exec(f.headerFlags)?.[1] ?? null;
  c.mode =
    mode === null
      ? null
      : /^hba/i.test(mode)
        ? 'hba'
        : /^mixed/i.test(mode)
          ? 'mixed'
          : /^raid/i.test(mode)
            ? 'raid'
            : null;
  const board = get('cache board present');
  c.cachePresent = board === 'True' ? true : board === 'False' ? false : null;
  c.cacheStatus = get('cache status');
  // Gen10 wording (netdata-P408i-a-Gen10-smartpqi.txt) vs one switch (netdata-P212_P410i-config-detail.txt).
  c.diskCacheByUsage = f.props.has('configured drive write cache policy')
    ? true
    : f.props.has('drive write cache')
      ? false
      : null;
  if (/^Dynamic Smart Array/i.test(f.model)) {
    // Driver (software) RAID without cache or battery (check_raid-issue139-B140i-dynamic-smart-array.txt).
    c.cachePresent = false;
    c.readOnlyReason = 'Dynamic Smart Array is software RAID: no controller cache';
  }
  c.protection = protectionOf(f);
  if (f.incomplete) {
    c.protection = { ...unknownProtection(), kind: c.protection.kind };
    markIncomplete(c, f.incomplete);
  }
  if (!c.readOnlyReason)
    c.findings.push(...cacheStatusFindings(c.cacheStatus, get('cache status details'), c.id));
  const nbwc = get('no-battery write cache');
  const noBatteryWriteCache = nbwc === 'Enabled' ? true : nbwc === 'Disabled' ? false : null;
  for (const ld of [...f.lds.values()].sort((a, b) => Number(a.ld) - Number(b.ld))) {
    c.logicalDrives.push(toDrive(c, f, ld, noBatteryWriteCache));
  }
  return c;
}

function protectionOf(f: CtlFacts): Protection {
  const p = unknownProtection();
  const source = text(f.props.get('cache backup power source'));
  if (source === 'Batteries') p.kind = 'bbu';
  else if (source === 'Capacitors') p.kind = 'flash-backed';
  const count = text(f.props.get('battery/capacitor count'));
  p.state = text(f.props.get('battery/capacitor status'));
  if (count !== null) p.present = Number(count) > 0;
  if (p.state !== null) p.present = true;
  if (p.present === false) p.kind = 'none';
  if (p.state !== null) {
    p.charging = /recharging|charging/i.test(p.state);
    p.replacementRequired = /replace|failed/i.test(p.state);
  }
  if (p.state === null && count === null) return p;
  return judgeSsacliUnit(p, p.state, count);
}

/**
 * Configured policy = LD `Caching` (older `Array Accelerator`) + controller `No-Battery Write Cache`;
 * effective = also `Cache Status`, cache ratio and battery (libstoragemgmt's rule, raid-cli.md §5).
 */
function toDrive(c: RaidController, f: CtlFacts, ld: LdFacts, nbwc: boolean | null): LogicalDrive {
  const d = emptyDrive(`ld${ld.ld}`, `ssacli:slot=${f.slot}/ld${ld.ld}`);
  const get = (k: string) => text(ld.props.get(k));
  d.name = get('logical drive label') ?? get('disk name');
  d.raidLevel = get('fault tolerance') ?? /RAID [^,]+/.exec(ld.summary ?? '')?.[0] ?? null;
  d.state = get('status') ?? (ld.summary?.split(',').pop()?.trim() || null);
  setOsDevice(c, d, get('disk name'));
  const caching = get('caching') ?? get('array accelerator');
  const enabled = caching === 'Enabled' ? true : caching === 'Disabled' ? false : null;
  d.defaultWrite =
    enabled === false
      ? 'write-through'
      : enabled === true && nbwc !== null
        ? nbwc
          ? 'always-write-back'
          : 'write-back'
        : 'unknown';
  d.currentWrite = effectiveWrite(c, f, enabled, nbwc);
  d.writeBackIfBadBattery = nbwc;
  const dwc =
    text(f.props.get('configured drive write cache policy')) ?? text(f.props.get('drive write cache'));
  d.diskCache =
    dwc === null
      ? null
      : /^enable/i.test(dwc)
        ? 'enabled'
        : /^disable/i.test(dwc)
          ? 'disabled'
          : /^default/i.test(dwc)
            ? 'default'
            : null;
  return d;
}

function effectiveWrite(
  c: RaidController,
  f: CtlFacts,
  caching: boolean | null,
  nbwc: boolean | null,
): WritePolicy {
  if (caching === false) return 'write-through';
  if (caching === null) return 'unknown';
  if (c.cacheStatus !== null && c.cacheStatus !== 'OK') return 'write-through';
  // "Cache Ratio: 100% Read / 0% Write" leaves no cache for writes (netdata-P212_P410i-config-detail.txt).
  const ratio = /(\d+)% Write/.exec(f.props.get('cache ratio') ?? f.props.get('accelerator ratio') ?? '');
  if (ratio && Number(ratio[1]) === 0) return 'write-through';
  if (c.cacheStatus !== 'OK' || nbwc === null) return 'unknown';
  if (nbwc) return 'always-write-back';
  if (c.protection.healthy === true) return 'write-back';
  if (c.protection.healthy === false) return 'write-through';
  return 'unknown';
}

export function parseSsacli(outputs: { text: string; source?: string }[]): ParsedOutput {
  const reader = new SsacliReader();
  for (const o of outputs) reader.add(o.text, o.source);
  return reader.result();
}
