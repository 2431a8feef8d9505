// Microchip/Adaptec arcconf text (raid-cli.md §6) → model. Reads GETCONFIG n AL|AD|LD|PD, GETSTATUS n,
// LIST and GETVERSION. GETCONFIG does not print the controller number (it is the command's argument),
// so the caller says which controller an output belongs to (default 1, as in every fixture's command).
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
import { judgeArcconfUnit } from './protection.js';

type Section = 'controller' | 'ld' | 'pd' | 'task' | null;

interface LdFacts {
  ld: string;
  props: Map<string, string>;
  task: string | null;
}

interface CtlFacts {
  n: string;
  props: Map<string, string>;
  /** Subsection name → properties ("Controller Battery Information", "Green Backup Information" ...). */
  subs: Map<string, Map<string, string>>;
  listed: string | null;
  lds: Map<string, LdFacts>;
  incomplete: string | null;
}

export class ArcconfReader {
  private readonly ctls = new Map<string, CtlFacts>();
  private readonly hostFindings: Finding[] = [];

  /** `exitCode`: a live call's exit status (null for a saved file); non-zero makes the read incomplete. */
  add(output: string, source = 'output', controller = '1', exitCode: number | null = null): void {
    const lines = output.replace(/\r/g, '').split('\n');
    let section: Section = null;
    let sub: string | null = null;
    let ld: LdFacts | null = null;
    let task: Map<string, string> | null = null;
    let completed = false;
    let found: number | null = null;
    let ctl = this.facts(controller, false);
    for (let i = 0; i < lines.length; i++) {
      const raw = lines[i] ?? '';
      const line = raw.trim();
      if (line === '') continue;
      let m: RegExpExecArray | null;
      m = /^Controllers found:\s*(\d+)/i.exec(line);
      if (m) {
        found = Number(m[1]);
        continue;
      }
      if (/^Command completed successfully\./.test(line)) {
        completed = true;
        continue;
      }
      if (/^Controller information$/i.test(line)) {
        section = 'controller';
        sub = null;
        ctl = this.facts(controller, true);
        continue;
      }
      if (/^Logical device information$/i.test(line)) {
        section = 'ld';
        continue;
      }
      if (/^Physical Device information$/i.test(line)) {
        section = 'pd';
        ld = null;
        continue;
      }
      m = /^Logical device number (\d+)$/i.exec(line);
      if (m) {
        ctl = this.facts(controller, true);
        ld = this.ld(ctl, m[1] as string);
        section = 'ld';
        continue;
      }
      if (/^Logical device Task:$/i.test(line)) {
        section = 'task';
        task = new Map();
        ctl = this.facts(controller, true);
        continue;
      }
      m = /^Controller (\d+):\s*:\s*(.*)$/.exec(line);
      if (m) {
        // LIST: "Controller 1: : Optimal, Slot 10, Mixed, Adaptec SmartRAID 3204-8i, ..."
        this.facts(m[1] as string, true).listed = m[2] as string;
        continue;
      }
      m = /^Controller #(\d+)$/.exec(line);
      if (m) {
        this.facts(m[1] as string, true);
        continue;
      }
      // A subsection title sits between dashed lines: "Controller Battery Information".
      if (section === 'controller' && /^-{10,}$/.test((lines[i - 1] ?? '').trim()) && !line.includes(':')) {
        sub = line;
        continue;
      }
      const pair = colonPair(line);
      if (!pair) continue;
      const key = normKey(pair[0]);
      if (section === 'controller') {
        const target = sub ? this.sub(ctl, sub) : ctl.props;
        if (!target.has(key)) target.set(key, pair[1]);
      } else if (section === 'ld' && ld) {
        if (!ld.props.has(key)) ld.props.set(key, pair[1]);
      } else if (section === 'task' && task) {
        task.set(key, pair[1]);
        const n = task.get('logical device');
        const op = task.get('current operation');
        if (n !== undefined && op !== undefined) {
          const pct = task.get('percentage complete');
          const detail = [task.get('status'), pct !== undefined ? `${pct}%` : undefined].filter(Boolean);
          this.ld(ctl, n).task = detail.length > 0 ? `${op} (${detail.join(', ')})` : op;
        }
      }
    }
    if (found !== null && found > 0) this.facts(controller, true);
    const parsed = this.ctls.get(controller);
    if (exitCode !== null && exitCode !== 0 && parsed) {
      parsed.incomplete ??= `arcconf: ${source} exited with status ${exitCode}`;
    } else if (!completed && parsed) {
      // Every complete arcconf output ends with "Command completed successfully." (raid-cli.md §6):
      // without it the output may be truncated, so this controller is read but never changed.
      parsed.incomplete = `arcconf output ${source} does not end with "Command completed successfully." (truncated?)`;
    } else if (!completed && found === null) {
      this.hostFindings.push({
        severity: 'unknown',
        message: `arcconf: ${source} is not arcconf output I recognise`,
      });
    }
    if (found === 0) this.hostFindings.push({ severity: 'info', message: 'arcconf: Controllers found: 0' });
  }

  private facts(n: string, create: boolean): CtlFacts {
    let f = this.ctls.get(n);
    if (!f) {
      f = { n, props: new Map(), subs: new Map(), listed: null, lds: new Map(), incomplete: null };
      if (create) this.ctls.set(n, f);
    }
    return f;
  }

  private sub(ctl: CtlFacts, name: string): Map<string, string> {
    const key = normKey(name);
    return getOrCreate(ctl.subs, key, () => new Map());
  }

  private ld(ctl: CtlFacts, n: string): LdFacts {
    return getOrCreate(ctl.lds, n, () => ({ ld: n, props: new Map(), task: null }));
  }

  result(): ParsedOutput {
    const controllers = [...this.ctls.values()].sort((a, b) => Number(a.n) - Number(b.n)).map(toController);
    return { controllers, findings: [...this.hostFindings] };
  }
}

function toController(f: CtlFacts): RaidController {
  const c = emptyController('arcconf', f.n, `arcconf:${f.n}`);
  const get = (k: string) => text(f.props.get(k));
  const listed = f.listed?.split(',').map((s) => s.trim()) ?? [];
  c.model = get('controller model') ?? listed[3] ?? null;
  c.status = get('controller status') ?? listed[0] ?? null;
  c.healthy = c.status === null ? null : /^(optimal|ok)$/i.test(c.status);
  const mode = get('controller mode') ?? listed[2] ?? null;
  c.mode =
    mode === null
      ? null
      : /hba/i.test(mode)
        ? 'hba'
        : /mixed/i.test(mode)
          ? 'mixed'
          : /raid/i.test(mode)
            ? 'raid'
            : null;
  const cacheProps = f.subs.get('cache properties');
  c.cacheStatus = text(cacheProps?.get('cache status')) ?? get('cache status');
  const memory = get('installed memory') ?? text(cacheProps?.get('cache memory'));
  const mb = memory ? /^(\d+)\s*MB/.exec(memory) : null;
  c.cachePresent = mb ? Number(mb[1]) > 0 : c.cacheStatus === 'Ok' ? true : null;
  c.protection = protectionOf(f);
  const nbwcWord = text(cacheProps?.get('no-battery write cache')) ?? get('no-battery write cache');
  const nbwc = nbwcWord === 'Enabled' ? true : nbwcWord === 'Disabled' ? false : null;
  for (const ld of [...f.lds.values()].sort((a, b) => Number(a.ld) - Number(b.ld))) {
    c.logicalDrives.push(toDrive(c, ld, nbwc));
  }
  if ([...f.lds.values()].some((ld) => ld.props.has('caching')) || f.subs.has('green backup information')) {
    // raid-cli.md §6/§10: which SETCACHE tokens SmartRAID (per-LD "Caching") accepts is not confirmed.
    c.readOnlyReason =
      'SmartRAID (per-LD "Caching") cache-mode tokens are not verified (raid-cli.md §10); isolate only reads this controller';
  }
  if (f.incomplete) markIncomplete(c, f.incomplete, '');
  return c;
}

/**
 * Backup unit by generation (raid-cli.md §6): Series 2/5 battery `Status: Optimal|Not Installed`;
 * Series 6 ZMM `ZMM Optimal|ZMM not installed`; Series 7/8 AFM `Overall Backup Unit Status:
 * Ready|Not Ready|Not Present`; SmartRAID `Backup Power Status: Ok`.
 */
function protectionOf(f: CtlFacts): Protection {
  const p = unknownProtection();
  const battery = f.subs.get('controller battery information');
  const zmm = f.subs.get('controller zmm information');
  const backup = f.subs.get('controller cache backup unit information');
  const green = f.subs.get('green backup information');
  if (battery) {
    p.kind = 'bbu';
    p.state = text(battery.get('status'));
  } else if (zmm) {
    p.kind = 'flash-backed';
    p.state = text(zmm.get('status'));
  } else if (backup) {
    p.kind = 'supercap';
    p.state = text(backup.get('overall backup unit status'));
  } else if (green) {
    p.kind = 'flash-backed';
    p.state = text(green.get('backup power status'));
  } else {
    return p;
  }
  if (f.incomplete) return p;
  p.present = true;
  judgeArcconfUnit(p, {
    battery: battery || undefined,
    zmm: zmm || undefined,
    backup: backup || undefined,
    green: green || undefined,
  });
  if (p.condition === 'absent') {
    p.kind = 'none';
    p.present = false;
  }
  p.charging = p.condition === 'charging';
  p.replacementRequired =
    p.condition === 'replace' || p.condition === 'failed' ? true : p.healthy ? false : null;
  return p;
}

interface Mode {
  write: WritePolicy;
  /** The configured mode keeps caching without backup power (`wb`). */
  unprotected: boolean | null;
}

/**
 * Write-cache words, old and new: "Enabled (write-back) when protected by battery" / "On when
 * protected by battery/ZMM" = wbb (self-protecting); "Enabled (write-back)" / "Enabled" / "On" = wb
 * (stays on without backup: check_raid-issue47-zmm-not-installed-WB-on.txt); "Disabled
 * (write-through)" / "Disabled" / "Off" = wt.
 */
export function decodeArcconfWrite(value: string | null): Mode {
  if (value === null) return { write: 'unknown', unprotected: null };
  const v = value.toLowerCase();
  // "Write-cache mode : Not supported" (check_raid-1-getconfig-no-battery-no-wc.txt): the controller
  // cannot cache this drive's writes, so they go through.
  if (v === 'not supported') return { write: 'write-through', unprotected: false };
  if (/^(enabled|on)\b.*when protected/.test(v)) return { write: 'write-back', unprotected: false };
  if (/^(enabled|on)( \(write-back\))?$/.test(v)) return { write: 'always-write-back', unprotected: true };
  if (/^(disabled|off)( \(write-through\))?$/.test(v)) return { write: 'write-through', unprotected: false };
  return { write: 'unknown', unprotected: null };
}

function toDrive(c: RaidController, ld: LdFacts, nbwc: boolean | null): LogicalDrive {
  const d = emptyDrive(`ld${ld.ld}`, `arcconf:${c.address}/ld${ld.ld}`);
  const get = (k: string) => text(ld.props.get(k));
  d.name = get('logical device name');
  d.raidLevel = get('raid level');
  d.state = get('status of logical device');
  setOsDevice(c, d, get('disk name'));
  d.activeOperation = ld.task;
  const setting = decodeArcconfWrite(get('write-cache setting'));
  const caching = get('caching');
  if (caching !== null) {
    // SmartRAID: per-LD "Caching" + controller "No-Battery Write Cache" (like ssacli).
    const on = caching === 'Enabled' ? true : caching === 'Disabled' ? false : null;
    d.defaultWrite =
      on === false
        ? 'write-through'
        : on && nbwc !== null
          ? nbwc
            ? 'always-write-back'
            : 'write-back'
          : 'unknown';
    d.currentWrite =
      on === false
        ? 'write-through'
        : on && c.cacheStatus === 'Ok' && nbwc === false && c.protection.healthy
          ? 'write-back'
          : d.defaultWrite === 'always-write-back'
            ? 'always-write-back'
            : 'unknown';
    d.writeBackIfBadBattery = nbwc;
  } else {
    d.defaultWrite = setting.write;
    d.writeBackIfBadBattery = setting.unprotected;
    const mode = get('write-cache mode');
    const status = get('write-cache status');
    if (mode !== null) {
      // Old wording: "Write-cache mode" is what the controller does now.
      const m = decodeArcconfWrite(mode);
      d.currentWrite =
        m.write === 'always-write-back' && setting.unprotected === false ? 'write-back' : m.write;
    } else if (status !== null) {
      d.currentWrite =
        status === 'Off'
          ? 'write-through'
          : status === 'On'
            ? setting.write === 'unknown'
              ? 'unknown'
              : setting.write === 'write-through'
                ? 'unknown'
                : setting.write
            : 'unknown';
    }
  }
  const read = get('read-cache status') ?? get('read-cache mode') ?? get('read-cache setting');
  d.readAhead =
    read === null ? null : /^(on|enabled)/i.test(read) ? 'on' : /^(off|disabled)/i.test(read) ? 'off' : null;
  return d;
}

export function parseArcconf(
  outputs: { text: string; source?: string; controller?: string }[],
): ParsedOutput {
  const reader = new ArcconfReader();
  for (const o of outputs) reader.add(o.text, o.source, o.controller);
  return reader.result();
}
