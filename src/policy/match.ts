// How a policy finds a workload's processes (`match:`): a systemd unit, a cgroup (with its v1
// hierarchy on v1 hosts), or processes by command line, executable and user.
import type { FieldErrors, FieldPath } from '../model/field.js';
import type { Match } from '../model/policy.js';
import { describe } from './size.js';
import { exact, mapping } from './validate.js';

/** Largest uid: uid_t is 32 bits and (uid_t)-1 means "no user". */
const MAX_UID = 4294967294;

/** Controllers whose v1 hierarchy a `cgroup:` match may name (YARN: cpu; Storm: cpu or memory). */
const V1_MATCH_CONTROLLERS = ['cpu', 'cpuacct', 'memory', 'blkio', 'pids', 'devices', 'freezer', 'cpuset'];

export function parseMatch(value: unknown, path: FieldPath, errors: FieldErrors): Match {
  const m = mapping(value, path, errors, 'a mapping with one of systemdUnit, cgroup or process', [
    'systemdUnit',
    'cgroup',
    'process',
    'hierarchy',
  ]);
  const keys = Object.keys(m).filter((k) => k !== 'hierarchy');
  if (m.hierarchy !== undefined && m.cgroup === undefined) {
    errors.fail(
      [...path, 'hierarchy'],
      'only goes with cgroup: (the v1 controller whose hierarchy that path lies in)',
    );
  }
  if (keys.length !== 1) {
    errors.fail(
      path,
      `set exactly one of systemdUnit, cgroup or process; got ${keys.length === 0 ? 'none' : keys.join(' and ')}`,
    );
  }
  if (m.systemdUnit !== undefined) {
    const u = m.systemdUnit;
    if (typeof u !== 'string' || !/^[A-Za-z0-9:_.\\@-]+\.(service|slice|scope)$/.test(u)) {
      errors.fail(
        [...path, 'systemdUnit'],
        `expected a unit name ending in .service, .slice or .scope (e.g. kafka.service); got ${describe(u)}`,
      );
    }
    return { kind: 'systemdUnit', unit: u };
  }
  if (m.cgroup !== undefined) {
    const c = m.cgroup;
    if (
      typeof c !== 'string' ||
      !/^(\/[A-Za-z0-9_.:@-]+)+$/.test(c) ||
      c.split('/').some((s) => s === '.' || s === '..')
    ) {
      errors.fail(
        [...path, 'cgroup'],
        `expected an absolute cgroup path below the cgroup2 mount, without trailing "/" (e.g. /hadoop-yarn); got ${describe(c)}`,
      );
    }
    const h = m.hierarchy;
    if (h !== undefined && (typeof h !== 'string' || !V1_MATCH_CONTROLLERS.includes(h))) {
      errors.fail(
        [...path, 'hierarchy'],
        `expected a cgroup v1 controller (${V1_MATCH_CONTROLLERS.join(', ')}) whose hierarchy the path lies in; got ${describe(h)}`,
      );
    }
    return { kind: 'cgroup', path: c, hierarchy: typeof h === 'string' ? h : undefined };
  }
  const p = mapping(m.process, [...path, 'process'], errors, 'a mapping with cmdline, exe and/or user', [
    'cmdline',
    'exe',
    'user',
  ]);
  if (p.cmdline === undefined && p.exe === undefined && p.user === undefined) {
    errors.fail([...path, 'process'], 'set at least one of cmdline (a regular expression), exe or user');
  }
  const out: Match = { kind: 'process' };
  if (p.cmdline !== undefined) {
    if (typeof p.cmdline !== 'string' || p.cmdline === '') {
      errors.fail(
        [...path, 'process', 'cmdline'],
        `expected a regular expression; got ${describe(p.cmdline)}`,
      );
    }
    try {
      new RegExp(p.cmdline);
    } catch (err) {
      errors.fail(
        [...path, 'process', 'cmdline'],
        `invalid regular expression: ${(err as Error).message.replace(/^Invalid regular expression: /, '')}`,
      );
    }
    out.cmdline = p.cmdline;
  }
  if (p.exe !== undefined) {
    if (typeof p.exe !== 'string' || !p.exe.startsWith('/')) {
      errors.fail(
        [...path, 'process', 'exe'],
        `expected an absolute path to the executable; got ${describe(p.exe)}`,
      );
    }
    out.exe = p.exe;
  }
  if (p.user !== undefined) {
    const u = p.user;
    const expected = `a user name or numeric uid (0 to ${MAX_UID})`;
    exact(u, [...path, 'process', 'user'], errors, expected);
    const ok =
      (typeof u === 'number' && Number.isSafeInteger(u) && u >= 0 && u <= MAX_UID) ||
      (typeof u === 'string' && /^[a-z_][a-z0-9_-]*\$?$/i.test(u));
    if (!ok) errors.fail([...path, 'process', 'user'], `expected ${expected}; got ${describe(u)}`);
    out.user = u as string | number;
  }
  return out;
}
