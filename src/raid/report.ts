// Text for `raid show` / `raid check` and the monitoring-plugin verdict. JSON output is the model
// itself (model.ts), so the two cannot drift apart.
import type { Finding, ParsedOutput, RaidController, RaidObservation, Severity } from './model.js';
import { writeBackVerdict } from './safety.js';

export interface CheckVerdict {
  /** Monitoring-plugin exit code: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN. */
  code: 0 | 1 | 2 | 3;
  label: 'OK' | 'WARNING' | 'CRITICAL' | 'UNKNOWN';
  findings: Finding[];
}

/**
 * Worst finding wins, ranked CRITICAL > UNKNOWN > WARNING > OK: a controller isolate could not read
 * (hung tool, garbage output) is worse than a known warning, because it might hide a critical one.
 */
export function checkVerdict(out: Pick<ParsedOutput, 'controllers' | 'findings'>): CheckVerdict {
  const findings = allFindings(out).filter((f) => f.severity !== 'info');
  const has = (s: Severity) => findings.some((f) => f.severity === s);
  if (has('critical')) return { code: 2, label: 'CRITICAL', findings };
  if (has('unknown')) return { code: 3, label: 'UNKNOWN', findings };
  if (has('warning')) return { code: 1, label: 'WARNING', findings };
  return { code: 0, label: 'OK', findings };
}

export function allFindings(out: Pick<ParsedOutput, 'controllers' | 'findings'>): Finding[] {
  return [...out.controllers.flatMap((c) => c.findings), ...out.findings];
}

const RANK: Record<Severity, number> = { critical: 0, unknown: 1, warning: 2, info: 3 };

export function renderCheck(v: CheckVerdict, controllers: number): string {
  const sorted = [...v.findings].sort((a, b) => RANK[a.severity] - RANK[b.severity]);
  const first = sorted[0];
  const head =
    first === undefined
      ? `RAID OK - ${controllers} controller${controllers === 1 ? '' : 's'}, cache policy safe`
      : `RAID ${v.label} - ${findingText(first)}${sorted.length > 1 ? ` (+${sorted.length - 1} more)` : ''}`;
  return [head, ...sorted.slice(1).map((f) => `${f.severity.toUpperCase()}: ${findingText(f)}`)].join('\n');
}

function findingText(f: Finding): string {
  return f.target ? `${f.target}: ${f.message}` : f.message;
}

export function renderShow(
  obs: Pick<RaidObservation, 'controllers' | 'findings'> & { mdArrays?: RaidObservation['mdArrays'] },
): string {
  const lines: string[] = [];
  for (const c of obs.controllers) lines.push(...renderController(c));
  if (obs.controllers.length === 0) lines.push('no hardware RAID controller with a cache was found');
  const host = obs.findings;
  if (host.length > 0) {
    lines.push('');
    for (const f of host) lines.push(`${f.severity.toUpperCase()}: ${findingText(f)}`);
  }
  return lines.join('\n');
}

function renderController(c: RaidController): string[] {
  const p = c.protection;
  const prot =
    p.present === false
      ? 'no battery/CacheVault'
      : `${p.kind ?? 'protection'} ${p.state ?? 'state unknown'} → ${p.condition}${p.faults.length > 0 ? ` (${p.faults.join(', ')})` : ''}${p.charging ? ', charging' : ''}${p.learnActive ? ', learn cycle running' : ''}${p.replacementRequired ? ', REPLACE' : ''}${p.nextLearn ? `, next learn ${p.nextLearn}` : ''}`;
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
