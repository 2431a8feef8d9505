// irqbalance.service as the host has it: whether it is installed and running, the version of its
// binary (which variable bans CPUs), the operator's values from the unit's Environment= and
// EnvironmentFile=s, isolate's own values and whether the running daemon started with them. Only
// where systemd runs the host.
import { statSync } from 'node:fs';
import path from 'node:path';
import { describeUntrusted, untrustedPath } from '../sys/trust.js';
import { ReadRefused, readBoundedIfPresent, readTrimSync } from '../sys/read.js';
import {
  IRQBALANCE_ENV_FILE,
  IRQBALANCE_UNIT,
  type ObservedIrqbalance,
  parseEnvFile,
  parseVersion,
  valueOfEnvText,
} from '../model/irqbalance.js';
import { parseEnvironmentProperty, splitAssignment } from '../model/jvm-options.js';
import { systemctl } from './systemctl.js';
import { systemdRuns } from './observe.js';

const SMALL = { maxBytes: 256 * 1024 };
const VERSION_TIMEOUT_MS = 5_000;

/** ExecStart's `path=` and `argv[]=` from systemctl show's `{ path=... ; argv[]=... ; ... }`. */
export function execStartOf(value: string): { path: string; argv: string } | null {
  const p = /\bpath=([^ ;]+)/.exec(value);
  const a = /\bargv\[\]=([^;]*)/.exec(value);
  return p && a ? { path: p[1]!, argv: a[1]!.trim() } : null;
}

/** EnvironmentFiles= lines (`/etc/default/irqbalance (ignore_errors=yes)`) → the files, in order. */
export function environmentFilesOf(lines: readonly string[]): { file: string; optional: boolean }[] {
  return lines.flatMap((l) => {
    const m = /^EnvironmentFiles=(\S+)(?: \(ignore_errors=(yes|no)\))?$/.exec(l);
    return m ? [{ file: m[1]!, optional: m[2] === 'yes' }] : [];
  });
}

/** `KEY=VALUE\0...` of /proc/PID/environ. */
export function parseEnviron(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of text.split('\0')) {
    const i = kv.indexOf('=');
    if (i > 0) out[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return out;
}

/** The environment irqbalance runs with now; null when it does not run or it cannot be read. */
export function runningEnv(root: string, pid: number | null): Record<string, string> | null {
  if (!pid) return null;
  try {
    const text = readBoundedIfPresent(path.join(root, 'proc', String(pid), 'environ'), SMALL);
    return text === null ? null : parseEnviron(text);
  } catch {
    return null;
  }
}

/** Versions by binary (path, size, mtime): the agent asks every round, the binary rarely changes. */
const versions = new Map<string, string | null>();

/** `irqbalance --version` of the unit's binary (root-owned only), as `X.Y.Z`. */
async function versionOf(bin: string): Promise<string | null> {
  if (!path.isAbsolute(bin) || untrustedPath(bin)) return null;
  let key: string;
  try {
    const st = statSync(bin);
    key = `${bin}:${st.size}:${st.mtimeMs}`;
  } catch {
    return null;
  }
  if (versions.has(key)) return versions.get(key) ?? null;
  const { execa } = await import('execa');
  const r = await execa(bin, ['--version'], {
    timeout: VERSION_TIMEOUT_MS,
    reject: false,
    stdin: 'ignore',
    env: {},
    extendEnv: false,
  });
  const v = parseVersion(`${r.stdout}\n${r.stderr}`);
  const version = v ? v.join('.') : null;
  if (!r.timedOut) versions.set(key, version);
  return version;
}

/**
 * The operator's Environment= assignments (the unit's and every drop-in's, as `systemctl show -p
 * Environment` prints them, a later one of a name winning). systemd applies Environment= first and
 * every EnvironmentFile= over it (systemd.exec(5)), so the files' values are merged over these. isolate's
 * own drop-in adds only an EnvironmentFile=, never an Environment= line: nothing of isolate's is here.
 * An unreadable property is a problem (nothing is planned: the operator's values would be dropped).
 */
export function operatorEnvironment(property: string, problems: string[]): Record<string, string> {
  const list = parseEnvironmentProperty(property);
  if (list === null) {
    problems.push(`its Environment= cannot be read (${JSON.stringify(property).slice(0, 80)})`);
    return {};
  }
  const out: Record<string, string> = {};
  for (const a of list) {
    const kv = splitAssignment(a);
    if (kv) out[kv[0]] = kv[1];
  }
  return out;
}

/**
 * The unit from its `systemctl show` text (every line: EnvironmentFiles= is printed once per file),
 * the files it names and the running daemon's environment.
 */
export function irqbalanceFromShow(
  root: string,
  show: string,
): Omit<ObservedIrqbalance, 'version'> & { bin: string | null } {
  const lines = show.split('\n');
  const prop = (name: string) =>
    lines
      .filter((l) => l.startsWith(`${name}=`))
      .map((l) => l.slice(name.length + 1))
      .at(-1) ?? '';
  const loaded = prop('LoadState') === 'loaded';
  const active = prop('ActiveState') === 'active';
  const pid = Number(prop('MainPID'));
  const exec = execStartOf(prop('ExecStart'));
  const files = environmentFilesOf(lines);
  const problems: string[] = [];
  const operator = operatorEnvironment(prop('Environment'), problems);
  let ours = '';
  for (const f of files) {
    let text: string | null = null;
    try {
      text = readBoundedIfPresent(path.join(root, f.file), SMALL);
    } catch (err) {
      problems.push(`${f.file}: ${err instanceof ReadRefused ? err.reason : String(err)}`);
      continue;
    }
    if (f.file === IRQBALANCE_ENV_FILE) {
      ours = text === null ? '' : valueOfEnvText(text);
      continue;
    }
    if (text === null) {
      if (!f.optional) problems.push(`${f.file} is missing (systemd will not start irqbalance)`);
      continue;
    }
    const parsed = parseEnvFile(text);
    if ('error' in parsed) problems.push(`${f.file}: ${parsed.error}`);
    else Object.assign(operator, parsed);
  }
  const isolated = ['isolated', 'nohz_full']
    .map((f) => readTrimSync(path.join(root, 'sys/devices/system/cpu', f)) ?? '')
    .filter((v) => /^[0-9,-]+$/.test(v));
  const mainPid = Number.isInteger(pid) && pid > 0 ? pid : null;
  return {
    loaded,
    active,
    mainPid,
    passesArgs: exec !== null && /\$\{?IRQBALANCE_ARGS\}?/.test(exec.argv),
    operator,
    problems,
    ours,
    running: active ? runningEnv(root, mainPid) : null,
    kernelIsolated: isolated.join(','),
    bin: exec?.path ?? null,
  };
}

/** irqbalance.service on this host; undefined when systemd does not run it (or --root is not /). */
export async function observeIrqbalance(root: string): Promise<ObservedIrqbalance | undefined> {
  if (!systemdRuns(root)) return undefined;
  const props = ['LoadState', 'ActiveState', 'MainPID', 'ExecStart', 'Environment', 'EnvironmentFiles'];
  const show = await systemctl(['show', ...props.flatMap((p) => ['-p', p]), '--', IRQBALANCE_UNIT]);
  const { bin, ...seen } = irqbalanceFromShow(root, show);
  if (!seen.loaded) return { ...seen, version: null };
  let version: string | null = null;
  if (bin) {
    const bad = untrustedPath(bin);
    if (bad) seen.problems.push(`${bin} is not run: ${describeUntrusted(bad)}`);
    else version = await versionOf(bin).catch(() => null);
  }
  return { ...seen, version };
}
