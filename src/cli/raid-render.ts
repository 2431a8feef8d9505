// Text for `raid show` / `raid check` and the monitoring-plugin verdict. JSON output is the model
// itself (model.ts), so the two cannot drift apart.
import { findingText, type Verdict } from '../model/finding.js';
import type { RaidController, RaidObservation } from '../model/raid.js';
import { writeBackVerdict } from '../model/raid-safety.js';

export function renderCheck(v: Verdict, controllers: number): string {
  const sorted = v.findings;
  const first = sorted[0];
  const head =
    first === undefined
      ? `RAID OK - ${controllers} controller${controllers === 1 ? '' : 's'}, cache policy safe`
      : `RAID ${v.status} - ${findingText(first)}${sorted.length > 1 ? ` (+${sorted.length - 1} more)` : ''}`;
  return [head, ...sorted.slice(1).map((f) => `${f.severity.toUpperCase()}: ${findingText(f)}`)].join('\n');
}

export function renderShow(
  obs: Pick<RaidObservation, 'controllers' | 'findings'> & { mdArrays?: RaidObservation['mdArrays'] },
): string {
  const lines: string[] = [];
  for (const c of obs.controllers) lines.push(...renderController(c));
  if (obs.controllers.length === 0) lines.push(noControllerLine(obs.findings));
  const host = obs.findings;
  if (host.length > 0) {
    lines.push('');
    for (const f of host) lines.push(`${f.severity.toUpperCase()}: ${findingText(f)}`);
  }
  return lines.join('\n');
}

/**
 * What to say when no controller was read: "none" only when nothing says one is there. A vendor tool
 * that timed out or failed (UNKNOWN), or a RAID driver with no tool to ask (WARNING), is a controller
 * not read, never the absence of one.
 */
function noControllerLine(findings: RaidObservation['findings']): string {
  const unread = findings.filter((f) => f.severity === 'unknown' || f.severity === 'warning');
  if (unread.length === 0) return 'no hardware RAID controller with a cache was found';
  const unknown = unread.some((f) => f.severity === 'unknown');
  return `no RAID controller could be read: ${unknown ? 'whether one has a cache is unknown' : 'one is there but no tool read it'} (see below)`;
}

/**
 * A next-learn time as a person reads it: storcli's value carries the controller's own counter
 * ("2026/05/09  20:21:41 (831673301 seconds)": seconds since 2000-01-01 by its clock), which means
 * nothing beside the date; --json keeps the tool's words as they were.
 */
export function learnTime(raw: string): string {
  return raw
    .replace(/\s*\(\d+ seconds?\)\s*$/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

function renderController(c: RaidController): string[] {
  const p = c.protection;
  const prot =
    p.present === false
      ? 'no battery/CacheVault'
      : `${p.kind ?? 'protection'} ${p.state ?? 'state unknown'} → ${p.condition}${p.faults.length > 0 ? ` (${p.faults.join(', ')})` : ''}${p.charging ? ', charging' : ''}${p.learnActive ? ', learn cycle running' : ''}${p.replacementRequired ? ', REPLACE' : ''}${p.nextLearn ? `, next learn ${learnTime(p.nextLearn)}` : ''}`;
  const out = [
    `${c.id}  ${c.model ?? '(model unknown)'}  status ${c.status ?? 'unknown'}${c.mode ? `  ${c.mode} mode` : ''}`,
    `  protection: ${prot}`,
    `  write-back safe now: ${c.writeBackSafe ? 'yes' : `no (${writeBackVerdict(c).reasons.join('; ')})`}`,
  ];
  for (const d of c.logicalDrives) {
    out.push(
      `  ${d.target}  ${d.raidLevel ?? '?'} ${d.state ?? '?'}  write ${d.currentWrite} (default ${d.defaultWrite})  read-ahead ${d.readAhead ?? '?'}  io ${d.ioPolicy ?? '?'}  disk cache ${d.diskCache ?? '?'}${d.activeOperation ? `  [${d.activeOperation}]` : ''}`,
    );
  }
  for (const f of c.findings) out.push(`  ${f.severity.toUpperCase()}: ${findingText(f)}`);
  return out;
}
