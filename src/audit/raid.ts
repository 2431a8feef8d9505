// The RAID check: every controller's and the host's findings under the shared verdict.
import { type Finding, type Verdict, verdictOf } from '../model/finding.js';
import type { ParsedOutput } from '../model/raid.js';

export function checkVerdict(out: Pick<ParsedOutput, 'controllers' | 'findings'>): Verdict {
  return verdictOf(allFindings(out));
}

export function allFindings(out: Pick<ParsedOutput, 'controllers' | 'findings'>): Finding[] {
  return [...out.controllers.flatMap((c) => c.findings), ...out.findings];
}
