// irqbalance kept off the exclusive CPUs and off the IRQs isolate pins: isolate's own environment
// file for irqbalance.service, named by a drop-in of its own, sets IRQBALANCE_BANNED_CPULIST and
// IRQBALANCE_ARGS (the operator's words plus --banirq=N). Pure: the planner, the systemd backend and
// saved plans read it alike.
//
// Why an environment file and not Environment=: Debian's unit reads EnvironmentFile=-/etc/default/irqbalance,
// and a value from an EnvironmentFile= overrides Environment= (systemd.exec(5)), so an operator's
// IRQBALANCE_ARGS= there would silently win over a drop-in's Environment=. EnvironmentFile= is a list
// read in order, a later file overriding an earlier one: the drop-in appends isolate's file, whose
// values merge the operator's (union, never dropping theirs). ExecStart= is left as the package has it.
import { CpuSet, formatMask } from './cpuset.js';

export const IRQBALANCE_UNIT = 'irqbalance.service';
/** The setting of a systemd change that carries isolate's irqbalance bans. */
export const IRQBALANCE_SETTING = 'IrqbalanceBans';
const DIR = `/etc/systemd/system/${IRQBALANCE_UNIT}.d`;
/** `50-` as isolate's other drop-ins. */
export const IRQBALANCE_DROP_IN = `${DIR}/50-isolate-irqbalance.conf`;
/** In the drop-in directory, where systemd reads only `*.conf`: rollback removes both and the directory. */
export const IRQBALANCE_ENV_FILE = `${DIR}/50-isolate-irqbalance.env`;

/** What irqbalance reads (irqbalance(1) 1.9.2; test/fixtures/irqbalance/1.9.2). */
export const BANNED_CPULIST = 'IRQBALANCE_BANNED_CPULIST';
/** The hex mask before 1.8.0; 1.9.2 logs "IRQBALANCE_BANNED_CPUS is discarded" and ignores it. */
export const BANNED_CPUS = 'IRQBALANCE_BANNED_CPUS';
export const ARGS = 'IRQBALANCE_ARGS';

/** irqbalance.service as systemd and the host report it (src/systemd/irqbalance.ts). */
export interface ObservedIrqbalance {
  /** False: no such unit (irqbalance is not installed). */
  loaded: boolean;
  active: boolean;
  mainPid: number | null;
  /** `irqbalance --version`'s `X.Y.Z`; null when it could not be run or read. */
  version: string | null;
  /** ExecStart= passes $IRQBALANCE_ARGS (Debian's, Fedora's units do): --banirq reaches irqbalance. */
  passesArgs: boolean;
  /** The operator's values: the unit's Environment=, then its other EnvironmentFile=s over it (later files winning), as systemd applies them. */
  operator: Record<string, string>;
  /** Why an operator file could not be read (then nothing is planned: their values would be dropped). */
  problems: string[];
  /** isolate's values now (env file assignments, one per line); '' when its drop-in is not loaded. */
  ours: string;
  /** Whether the running irqbalance started with `ours` (its /proc/PID/environ); null: not running or unreadable. */
  running: Record<string, string> | null;
  /** /sys/devices/system/cpu/isolated ∪ nohz_full: irqbalance's own default ban when none is set. */
  kernelIsolated: string;
}

/** `X.Y.Z` → comparable; null for anything else. */
export function parseVersion(text: string): [number, number, number] | null {
  const m = /irqbalance version (\d{1,4})\.(\d{1,4})(?:\.(\d{1,4}))?/.exec(text);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : null;
}

/** IRQBALANCE_BANNED_CPULIST came with 1.8.0; before it only the hex mask IRQBALANCE_BANNED_CPUS. */
export function bannedVariable(version: string): typeof BANNED_CPULIST | typeof BANNED_CPUS | null {
  const v = parseVersion(`irqbalance version ${version}`);
  if (!v) return null;
  return v[0] > 1 || (v[0] === 1 && v[1] >= 8) ? BANNED_CPULIST : BANNED_CPUS;
}

/**
 * An EnvironmentFile= as systemd reads it (systemd.exec(5)): `KEY=VALUE` lines, `#`/`;` comments,
 * values in double quotes (backslash escapes) or single quotes, a trailing backslash continuing a
 * line. Returns the assignments (a later one of a name wins) or why it cannot be read.
 */
export function parseEnvFile(text: string): Record<string, string> | { error: string } {
  const out: Record<string, string> = {};
  const lines = text.replace(/\\\n/g, '').split('\n');
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!m) return { error: `line ${i + 1} is not KEY=VALUE` };
    const v = m[2]!;
    if (v.startsWith('"')) {
      const q = /^"((?:[^"\\]|\\.)*)"\s*$/.exec(v);
      if (!q) return { error: `line ${i + 1}: unterminated double quote` };
      out[m[1]!] = q[1]!.replace(/\\(.)/g, '$1');
    } else if (v.startsWith("'")) {
      const q = /^'([^']*)'\s*$/.exec(v);
      if (!q) return { error: `line ${i + 1}: unterminated single quote` };
      out[m[1]!] = q[1]!;
    } else out[m[1]!] = v.trimEnd();
  }
  return out;
}

/** Words isolate writes unquoted-safe into IRQBALANCE_ARGS (options, numbers, paths, module names). */
const SAFE_ARGS = /^[A-Za-z0-9_=,.:/+@-]*$/;

/** What isolate wants irqbalance to run with, or why it cannot say (left to the operator). */
export function irqbalanceValue(
  obs: ObservedIrqbalance,
  exclusive: CpuSet,
  pinned: readonly number[],
): { value: string; banned: CpuSet; banirqs: number[] } | { problem: string } {
  const variable = obs.version ? bannedVariable(obs.version) : null;
  if (!variable) {
    return {
      problem: `its version is unknown (irqbalance --version: ${obs.version ?? 'no answer'}), so which variable bans CPUs is unknown`,
    };
  }
  if (obs.problems.length > 0) return { problem: obs.problems.join('; ') };
  // The operator's ban, whichever variable holds it (never dropped); else irqbalance's own default,
  // which any value set here replaces (irqbalance(1): isolated and adaptive-ticks CPUs).
  let banned = exclusive;
  let theirs = false;
  for (const [name, form] of [
    [BANNED_CPULIST, 'list'],
    [BANNED_CPUS, 'mask'],
  ] as const) {
    const v = obs.operator[name];
    if (v === undefined || v.trim() === '') continue;
    try {
      banned = banned.union(form === 'list' ? CpuSet.parse(v) : CpuSet.parseMask(v));
      theirs = true;
    } catch {
      return { problem: `the operator's ${name}="${v.slice(0, 40)}" is not a CPU ${form}` };
    }
  }
  if (!theirs && obs.kernelIsolated) banned = banned.union(CpuSet.parse(obs.kernelIsolated));
  const args = (obs.operator[ARGS] ?? '').split(/\s+/).filter(Boolean);
  if (!args.every((w) => SAFE_ARGS.test(w)))
    return { problem: `the operator's ${ARGS} holds characters isolate does not copy (quotes, $, ...)` };
  const already = new Set(
    args.flatMap((w, i) => {
      const m = /^(?:--banirq=|-i)(\d+)$/.exec(w) ?? (/^(--banirq|-i)$/.test(w) ? [w, args[i + 1]] : null);
      return m?.[1] && /^\d+$/.test(m[1]) ? [Number(m[1])] : [];
    }),
  );
  const banirqs = [...new Set(pinned)].filter((n) => !already.has(n)).sort((a, b) => a - b);
  const allArgs = [...args, ...banirqs.map((n) => `--banirq=${n}`)].join(' ');
  const ban =
    variable === BANNED_CPULIST
      ? `${BANNED_CPULIST}=${banned}`
      : `${BANNED_CPUS}=${formatMask(banned, null)}`;
  return { value: `${ban}\n${ARGS}="${allArgs}"`, banned, banirqs };
}

/** isolate's environment file: a header naming its author, then the value's assignments. */
export function irqbalanceEnvText(value: string): string {
  return `# Written by isolate (quiet: irqs): irqbalance leaves the exclusive CPUs and the IRQs isolate
# pins alone. Read after the operator's EnvironmentFile=s (later wins); the operator's own values are
# merged in. Removed by "isolate rollback".
${value}
`;
}

export function irqbalanceDropInText(): string {
  return `# Written by isolate (quiet: irqs): irqbalance reads isolate's ban after the operator's files.
# Removed by "isolate rollback", which restarts irqbalance once.
[Service]
EnvironmentFile=${IRQBALANCE_ENV_FILE}
`;
}

/** The assignment lines of isolate's env file (its value), '' for none. */
export function valueOfEnvText(text: string): string {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .join('\n');
}

/** Whether a process environment holds every assignment of a value (what irqbalance started with). */
export function runsWith(env: Record<string, string>, value: string): boolean {
  const want = parseEnvFile(value);
  if ('error' in want) return false;
  return Object.entries(want).every(([k, v]) => env[k] === v);
}

/** A value on one line, for plans and logs. */
export function showIrqbalanceValue(value: string): string {
  return value.split('\n').join(' ');
}
