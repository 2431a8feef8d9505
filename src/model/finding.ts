// One severity scale for every check isolate runs (host, RAID), and one verdict with the
// monitoring-plugin exit codes, so `check` and `raid check` page for the same reasons.

/** info: worth knowing, never alarming; unknown: isolate could not tell (might hide a critical). */
export type Severity = 'critical' | 'warning' | 'unknown' | 'info';

export interface Finding {
  severity: Severity;
  message: string;
  /** What the finding is about: a cgroup, a workload, a controller or logical drive (`storcli:/c0/v0`). */
  target?: string;
}

export type Status = 'OK' | 'WARNING' | 'CRITICAL' | 'UNKNOWN';

/** Monitoring-plugin exit codes (Nagios, Icinga, Sensu, check_mk). */
export const EXIT_STATUS: Record<Status, 0 | 1 | 2 | 3> = { OK: 0, WARNING: 1, CRITICAL: 2, UNKNOWN: 3 };

export interface Verdict {
  status: Status;
  /** Monitoring-plugin exit code: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN. */
  code: 0 | 1 | 2 | 3;
  /** The findings that count (every one but `info`), worst first. */
  findings: Finding[];
}

/** Worst first: a state isolate could not read ranks above a known warning. */
export const SEVERITY_RANK: Record<Severity, number> = { critical: 0, unknown: 1, warning: 2, info: 3 };

/**
 * Worst finding wins, ranked CRITICAL > UNKNOWN > WARNING > OK: something isolate could not read
 * (hung tool, garbage output) is worse than a known warning, because it might hide a critical one.
 */
export function verdictOf(all: readonly Finding[]): Verdict {
  const findings = all
    .filter((f) => f.severity !== 'info')
    .sort((a, b) => SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity]);
  const worst = findings[0]?.severity;
  const status: Status =
    worst === 'critical'
      ? 'CRITICAL'
      : worst === 'unknown'
        ? 'UNKNOWN'
        : worst === 'warning'
          ? 'WARNING'
          : 'OK';
  return { status, code: EXIT_STATUS[status], findings };
}

export function findingText(f: Finding): string {
  return f.target ? `${f.target}: ${f.message}` : f.message;
}
