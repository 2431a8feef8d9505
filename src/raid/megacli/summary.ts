// MegaCli `-ShowSummary -aALL` (what inventory agents such as GLPI collect), read from the three real
// captures ../shared/fixtures/raid/megacli/glpi-ShowSummary-*.txt:
//
//   System / Hardware / Storage               top-level sections, at column 0
//     Controller: ProductName "PERC H710P Mini(Bus 0, Dev 0)", Status "Optimal"
//     BBU:        BBU Type "BBU", Status "Healthy"       — no section at all when none is fitted (H310)
//     Enclosure, PD: not read
//     Virtual Drives: "Virtual drive : Target Id 0 ,VD name raid11", Size, State, RAID Level
//   Exit Code: 0x00
//
// It prints no cache policy, none of the battery's fault flags and no adapter number, so the
// controller it describes is read only and its drives' write policy is unknown: nothing is ever
// changed on the strength of a summary. The live reader never asks for one (live.ts).
import {
  emptyController,
  emptyDrive,
  type Finding,
  type Protection,
  type RaidController,
  unknownProtection,
} from '../../model/raid.js';
import { colonPair, markIncomplete, normKey, text } from '../words.js';

export const SUMMARY_READ_ONLY =
  'MegaCli -ShowSummary prints no cache policy and no battery fault flags: read only (give -LDInfo and -AdpBbuCmd outputs to judge it)';

interface SummaryDrive {
  targetId: string;
  name: string | null;
  props: Map<string, string>;
}

export interface SummaryFacts {
  source: string;
  controllers: Map<string, string>[];
  /** One map per BBU section; absent when the output printed none. */
  bbus: Map<string, string>[];
  drives: SummaryDrive[];
  /** Why the output cannot be read (a line not understood); null when it can. */
  unreadable: string | null;
  /** Why what it said cannot be trusted (cut short, crashed); null when complete. */
  incomplete: string | null;
}

/** A -ShowSummary has a `Hardware` section with a `Controller` block; no other MegaCli output does. */
export function isShowSummary(output: string): boolean {
  const t = output.replace(/\r/g, '');
  return /^Hardware[ \t]*$/m.test(t) && /^[ \t]+Controller[ \t]*$/m.test(t);
}

/** `exitCode`: the process exit status of a live call, null for a saved file (as MegacliReader.add). */
export function readShowSummary(output: string, source: string, exitCode: number | null): SummaryFacts {
  const f: SummaryFacts = {
    source,
    controllers: [],
    bbus: [],
    drives: [],
    unreadable: null,
    incomplete: null,
  };
  let section: string | null = null;
  let block: Map<string, string> | null = null;
  let printedCode: string | null = null;
  for (const raw of output.replace(/\r/g, '').split('\n')) {
    const line = raw.replace(/\t/g, '        ');
    const code = /^Exit Code:\s*(0x[0-9A-Fa-f]+)\s*$/.exec(line.trim());
    if (code) {
      printedCode = code[1] as string;
      continue;
    }
    if (line.trim() === '') continue;
    const pair = colonPair(line);
    if (!pair) {
      // A heading: at column 0 a section (System, Hardware, Storage), indented a block in it.
      const heading = line.trim();
      if (!/^\s/.test(line)) {
        section = heading;
        block = null;
      } else if (section === 'Hardware' && heading === 'Controller') {
        block = new Map();
        f.controllers.push(block);
      } else if (section === 'Hardware' && heading === 'BBU') {
        block = new Map();
        f.bbus.push(block);
      } else block = null; // Enclosure, PD, Virtual Drives: their lines are read below or not at all.
      continue;
    }
    const [key, value] = pair;
    if (section === 'Storage' && normKey(key) === 'virtual drive') {
      const m = /^Target Id (\d+)\s*,\s*VD name\s*(.*)$/.exec(value);
      if (!m) {
        f.unreadable ??= `"${line.trim()}" is not a virtual drive line I recognise`;
        block = null;
        continue;
      }
      block = new Map();
      f.drives.push({ targetId: m[1] as string, name: text(m[2]), props: block });
      continue;
    }
    if (block && !block.has(normKey(key))) block.set(normKey(key), value);
  }
  const printed = printedCode === null ? null : Number.parseInt(printedCode, 16);
  if (printedCode === null) {
    f.incomplete = `megacli: ${source} does not end with "Exit Code:" (cut short or crashed)`;
  } else if (exitCode !== null && exitCode !== printed) {
    f.incomplete = `megacli: ${source} printed Exit Code ${printedCode} but the process exited with ${exitCode} (crashed?)`;
  } else if (printedCode !== '0x00') {
    f.incomplete = `megacli: ${source} ended with Exit Code ${printedCode}`;
  }
  return f;
}

/**
 * The controller a summary describes, or a host finding when it cannot be attributed. With one
 * `Controller` block in a `-aALL` summary the host has one adapter, adapter 0; the address is only a
 * name here, since the controller is read only and none of its drives is ever a change target.
 * Several blocks (no capture shows that layout) leave the drives and BBU without an owner: unknown.
 */
export function summaryController(f: SummaryFacts): {
  controller: RaidController | null;
  findings: Finding[];
} {
  if (f.unreadable) {
    return {
      controller: null,
      findings: [
        { severity: 'unknown', message: `megacli: ${f.source}: -ShowSummary: ${f.unreadable}; not read` },
      ],
    };
  }
  if (f.controllers.length !== 1) {
    return {
      controller: null,
      findings: [
        {
          severity: 'unknown',
          message: `megacli: ${f.source}: -ShowSummary lists ${f.controllers.length} controllers and names no adapter number, so its drives and batteries cannot be attributed; not read (give -AdpAllInfo, -LDInfo and -AdpBbuCmd outputs)`,
        },
      ],
    };
  }
  const adp = f.controllers[0] as Map<string, string>;
  const c = emptyController('megacli', '0', 'megacli:/a0');
  // "PERC H310 Mini(Bus 0, Dev 0)": the PCI location is not part of the model.
  c.model = text(adp.get('productname')?.replace(/\s*\(Bus \d+, Dev \d+\)\s*$/, ''));
  c.status = text(adp.get('status'));
  c.healthy = c.status === null ? null : /^optimal$/i.test(c.status);
  c.protection = f.incomplete ? unknownProtection() : protectionOf(f.bbus);
  c.readOnlyReason = SUMMARY_READ_ONLY;
  for (const d of f.drives) {
    // The summary names drives by target id only; as targets they are never used (read only).
    const drive = emptyDrive(`l${d.targetId}`, `megacli:/a0/l${d.targetId}`);
    drive.name = d.name;
    drive.raidLevel = text(d.props.get('raid level'));
    drive.state = text(d.props.get('state'));
    c.logicalDrives.push(drive);
  }
  if (f.incomplete) markIncomplete(c, f.incomplete);
  return { controller: c, findings: [] };
}

/**
 * No BBU block in a complete summary: none is fitted (the H310 Mini capture). A block: present, its
 * status word kept but not judged — the summary prints none of the flags (learn cycle, replacement
 * required, pack about to fail) the -AdpBbuCmd truth table needs, so the unit stays unknown; a word
 * other than "Healthy" is reported as one isolate does not know.
 */
function protectionOf(bbus: Map<string, string>[]): Protection {
  const p = unknownProtection();
  if (bbus.length === 0) {
    return { ...p, kind: 'none', present: false, healthy: false, condition: 'absent' };
  }
  const b = bbus[0] as Map<string, string>;
  const type = text(b.get('bbu type'));
  p.kind = type !== null && /^bbu$/i.test(type) ? 'bbu' : null;
  p.present = true;
  p.state = text(b.get('status'));
  if (p.state !== null && !/^healthy$/i.test(p.state)) p.unrecognised = [`BBU Status: ${p.state}`];
  if (bbus.length > 1) p.unrecognised = [...p.unrecognised, `${bbus.length} BBU sections for one controller`];
  return p;
}
