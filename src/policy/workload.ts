// A workload of a HostPolicy, field by field (load.ts reads the document and its top level): each
// field's value checked against what isolate can do with it, every error naming its field and the fix.
import { UserError } from '../model/errors.js';
import { parseIo } from './io.js';
import { allowOnly, boolean, exact, object, oneOf } from './validate.js';
import { isNicName } from '../model/irq.js';
import { CpuSet } from '../model/cpuset.js';
import type { FieldErrors, FieldPath } from '../model/field.js';
import { parseRate, parseWindow } from './rate.js';
import { describe, parseMemoryAmount } from './size.js';
import { formatBytes } from '../model/units.js';
import type {
  DeviceRef,
  DiskSource,
  JvmSpec,
  Match,
  MemoryAmount,
  MemorySpec,
  WorkloadSpec,
} from '../model/policy.js';
import type { CollectedErrors } from './collected-errors.js';

function parseIrqs(value: unknown, path: FieldPath, errors: FieldErrors): NonNullable<WorkloadSpec['irqs']> {
  const v = object(value, path, errors, 'a mapping like { nics: [eth0], on: housekeeping }');
  allowOnly(v, path, ['nics', 'on'], errors);
  const on =
    v.on === undefined
      ? 'housekeeping'
      : oneOf(v.on, ['housekeeping', 'own'] as const, [...path, 'on'], errors);
  if (v.nics === undefined) return { on };
  if (!Array.isArray(v.nics) || v.nics.length === 0) {
    errors.fail(
      [...path, 'nics'],
      `expected a non-empty list of NIC names like [eth0]; got ${describe(v.nics)}`,
    );
  }
  const nics = v.nics.map((n, i) => {
    if (typeof n !== 'string' || !isNicName(n)) {
      errors.fail([...path, 'nics', i], `expected a network interface name (e.g. eth0); got ${describe(n)}`);
    }
    return n;
  });
  return { nics, on };
}

export function parseWorkload(value: unknown, path: FieldPath, errors: CollectedErrors): WorkloadSpec {
  const w = object(value, path, errors, 'a workload mapping with name, class and match');
  // Each field is read on whatever the others hold (errors.attempt): one run names every mistake.
  const check = (read: () => void) => errors.attempt(read, undefined);
  check(() =>
    allowOnly(
      w,
      path,
      ['name', 'class', 'cores', 'numa', 'near', 'irqs', 'disks', 'io', 'match', 'memory', 'cpu', 'jvm'],
      errors,
    ),
  );
  check(() => {
    if (typeof w.name !== 'string' || !/^[a-z0-9]([a-z0-9_-]{0,62}[a-z0-9])?$/.test(w.name)) {
      errors.fail(
        [...path, 'name'],
        `expected a name of lowercase letters, digits, "-" or "_" (at most 64, e.g. kafka); got ${describe(w.name)}`,
      );
    }
  });
  check(() => {
    if (w.class !== 'exclusive' && w.class !== 'batch') {
      errors.fail([...path, 'class'], `expected "exclusive" or "batch"; got ${describe(w.class)}`);
    }
  });
  const cls = w.class;
  for (const key of ['cores', 'numa', 'near', 'irqs']) {
    check(() => {
      if (cls === 'batch' && w[key] !== undefined) {
        errors.fail(
          [...path, key],
          `only exclusive workloads take ${key}; batch workloads get every CPU the others leave`,
        );
      }
    });
  }
  check(() => {
    if (cls === 'batch' && w.disks !== undefined) {
      errors.fail(
        [...path, 'disks'],
        "only exclusive workloads take disks; batch workloads are held back on the exclusive workloads' disks — move disks to the exclusive workload (e.g. kafka)",
      );
    }
  });
  check(() => {
    if (cls === 'exclusive' && w.cpu !== undefined) {
      errors.fail(
        [...path, 'cpu'],
        'cpu (weight/idle) is for batch workloads; exclusive workloads own their cores',
      );
    }
  });

  let cores: WorkloadSpec['cores'];
  if (cls === 'exclusive') {
    cores = errors.attempt(() => {
      if (w.cores === undefined)
        errors.fail([...path, 'cores'], 'exclusive workloads need cores: N or cores: "50%"');
      return parseCores(w.cores, [...path, 'cores'], errors);
    }, undefined);
  }
  let numa: WorkloadSpec['numa'] = 'single';
  if (w.numa !== undefined) {
    check(() => {
      if (w.numa !== 'single' && w.numa !== 'spread') {
        errors.fail([...path, 'numa'], `expected "single" or "spread"; got ${describe(w.numa)}`);
      }
      numa = w.numa;
    });
  }

  const match = errors.attempt(() => parseMatch(w.match, [...path, 'match'], errors), undefined);
  const spec: WorkloadSpec = {
    name: w.name as string,
    class: cls as WorkloadSpec['class'],
    numa,
    near: errors.attempt(() => parseNear(w.near, [...path, 'near'], errors), []),
    // A stand-in only while another field's error is pending: settle() throws before it is used.
    match: match ?? { kind: 'cgroup', path: '/' },
    memory: errors.attempt(() => parseMemory(w.memory, [...path, 'memory'], errors), { mems: 'local' }),
    path,
  };
  if (cores) spec.cores = cores;
  if (w.cpu !== undefined) {
    const cpu = errors.attempt(() => parseCpu(w.cpu, [...path, 'cpu'], errors), undefined);
    if (cpu) spec.cpu = cpu;
  }
  let disksRead = true;
  if (w.disks !== undefined) {
    const disks = errors.attempt(() => parseDisks(w.disks, [...path, 'disks'], errors), undefined);
    if (disks) spec.disks = disks;
    else disksRead = false;
  }
  // The JVM options are judged against the match, the io settings against the disks: not read
  // against a stand-in after those failed (their own error would mislead).
  if (w.jvm !== undefined && match) {
    const jvm = errors.attempt(() => parseJvm(w.jvm, match, [...path, 'jvm'], errors), undefined);
    if (jvm) spec.jvm = jvm;
  }
  if (disksRead) {
    const io = errors.attempt(
      () => parseIo(w.io, cls as WorkloadSpec['class'], spec.disks !== undefined, [...path, 'io'], errors),
      undefined,
    );
    if (io) spec.io = io;
  }
  if (cls === 'exclusive') {
    spec.irqs = errors.attempt(
      () => (w.irqs === undefined ? { on: 'housekeeping' } : parseIrqs(w.irqs, [...path, 'irqs'], errors)),
      { on: 'housekeeping' },
    );
  }
  return spec;
}

function parseCores(
  value: unknown,
  path: FieldPath,
  errors: FieldErrors,
): NonNullable<WorkloadSpec['cores']> {
  if (typeof value === 'number') {
    const expected = 'a whole number of physical cores, 1 or more';
    exact(value, path, errors, expected);
    if (!Number.isSafeInteger(value) || value < 1) errors.fail(path, `expected ${expected}; got ${value}`);
    return { count: value };
  }
  if (typeof value === 'string') {
    const m = /^(\d+(?:\.\d+)?)%$/.exec(value.trim());
    if (m) {
      const p = Number(m[1]);
      if (p > 0 && p <= 100) return { percent: p };
    }
  }
  return errors.fail(
    path,
    `expected a whole number of cores (e.g. 8) or a percentage of a node's cores (e.g. "50%"); got ${describe(value)}`,
  );
}

function parseNear(value: unknown, path: FieldPath, errors: FieldErrors): DeviceRef[] {
  if (value === undefined) return [];
  if (!Array.isArray(value))
    errors.fail(path, `expected a list like [nic:eth0, disk:sda]; got ${describe(value)}`);
  return value.map((v, i) => {
    const m = typeof v === 'string' ? /^(nic|disk|scsi):(.+)$/s.exec(v) : null;
    // A NIC: any name the kernel allows (ethü); a disk or SCSI host: the kernel's own ASCII names.
    const named = m && (m[1] === 'nic' ? isNicName(m[2]!) : /^[A-Za-z0-9_.:@-]+$/.test(m[2]!));
    if (!m || !named) {
      errors.fail(
        [...path, i],
        `expected nic:NAME, disk:NAME or scsi:hostN (e.g. nic:eth0); got ${describe(v)}`,
      );
    }
    return { kind: m[1] as DeviceRef['kind'], name: m[2]! };
  });
}

/** Most data directories one workload may name: a broker has one per disk, a few dozen at most. */
export const MAX_DISK_PATHS = 256;
/** PATH_MAX: a longer path cannot be opened. */
const MAX_PATH_LENGTH = 4095;

function parseDisks(value: unknown, path: FieldPath, errors: FieldErrors): DiskSource {
  const d = object(
    value,
    path,
    errors,
    'a mapping with paths: [DIR, ...] or kafkaConfig: /etc/kafka/server.properties',
  );
  allowOnly(d, path, ['paths', 'kafkaConfig'], errors);
  if ((d.paths === undefined) === (d.kafkaConfig === undefined)) {
    errors.fail(
      path,
      `set exactly one of paths (the data directories, e.g. [/data1/kafka-logs]) or kafkaConfig (the broker's server.properties); got ${d.paths === undefined ? 'neither' : 'both'}`,
    );
  }
  if (d.kafkaConfig !== undefined) {
    return { kind: 'kafkaConfig', file: absolutePath(d.kafkaConfig, [...path, 'kafkaConfig'], errors) };
  }
  if (!Array.isArray(d.paths) || d.paths.length === 0) {
    errors.fail(
      [...path, 'paths'],
      `expected a non-empty list of absolute directories (e.g. [/data1/kafka-logs, /data2/kafka-logs]); got ${describe(d.paths)}`,
    );
  }
  if (d.paths.length > MAX_DISK_PATHS) {
    errors.fail(
      [...path, 'paths'],
      `${d.paths.length} paths; at most ${MAX_DISK_PATHS} (one per data directory)`,
    );
  }
  const seen = new Map<string, number>();
  return {
    kind: 'paths',
    paths: d.paths.map((p, i) => {
      const abs = absolutePath(p, [...path, 'paths', i], errors);
      const prev = seen.get(abs);
      if (prev !== undefined) {
        errors.fail([...path, 'paths', i], `${abs} is also paths[${prev}]; name each directory once`);
      }
      seen.set(abs, i);
      return abs;
    }),
  };
}

/** An absolute path, normalised (no `.`, `..`, doubled or trailing `/`), or a one-line error. */
function absolutePath(value: unknown, path: FieldPath, errors: FieldErrors): string {
  const expected = 'an absolute path (e.g. /data1/kafka-logs)';
  if (typeof value !== 'string' || !value.startsWith('/')) {
    errors.fail(path, `expected ${expected}; got ${describe(value)}`);
  }
  if (value.length > MAX_PATH_LENGTH || /[\u0000-\u001f\u007f]/.test(value)) {
    errors.fail(
      path,
      `expected ${expected} without control characters, at most ${MAX_PATH_LENGTH} characters`,
    );
  }
  const parts = value.split('/').filter((s) => s !== '' && s !== '.');
  if (parts.includes('..')) {
    errors.fail(path, `expected ${expected} without ".." parts; got ${describe(value)}`);
  }
  return `/${parts.join('/')}`;
}

/** Largest uid: uid_t is 32 bits and (uid_t)-1 means "no user". */
const MAX_UID = 4294967294;

/** Controllers whose v1 hierarchy a `cgroup:` match may name (YARN: cpu; Storm: cpu or memory). */
const V1_MATCH_CONTROLLERS = ['cpu', 'cpuacct', 'memory', 'blkio', 'pids', 'devices', 'freezer', 'cpuset'];

function parseMatch(value: unknown, path: FieldPath, errors: FieldErrors): Match {
  const m = object(value, path, errors, 'a mapping with one of systemdUnit, cgroup or process');
  allowOnly(m, path, ['systemdUnit', 'cgroup', 'process', 'hierarchy'], errors);
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
  const p = object(m.process, [...path, 'process'], errors, 'a mapping with cmdline, exe and/or user');
  allowOnly(p, [...path, 'process'], ['cmdline', 'exe', 'user'], errors);
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

function parseMemory(value: unknown, path: FieldPath, errors: FieldErrors): MemorySpec {
  if (value === undefined) return { mems: 'local' };
  const m = object(value, path, errors, 'a mapping with min, low, high, max and/or mems');
  allowOnly(m, path, ['min', 'low', 'high', 'max', 'mems'], errors);
  const spec: MemorySpec = { mems: 'local' };
  for (const key of ['min', 'low', 'high', 'max'] as const) {
    if (m[key] === undefined) continue;
    const amount =
      key === 'low' && m.low !== null && typeof m.low === 'object' && !Array.isArray(m.low)
        ? parseCacheWindow(m.low as Record<string, unknown>, [...path, 'low'], errors)
        : parseMemoryAmount(m[key], key === 'high' || key === 'max');
    if (typeof amount === 'string') errors.fail([...path, key], amount);
    spec[key] = amount;
  }
  const { high, max } = spec;
  if (high && max && 'bytes' in high && 'bytes' in max && max.bytes < high.bytes) {
    errors.fail(
      [...path, 'max'],
      `max (${formatBytes(max.bytes)}) is below high (${formatBytes(high.bytes)}); max must be at least high`,
    );
  }
  if (high && max && 'unlimited' in high && !('unlimited' in max)) {
    errors.fail([...path, 'max'], 'max is below high (high is "max"); max must be at least high');
  }
  if (m.mems !== undefined) {
    if (m.mems === 'local' || m.mems === 'all') spec.mems = m.mems;
    else if (typeof m.mems === 'string' || typeof m.mems === 'number')
      spec.mems = cpuList(m.mems, [...path, 'mems'], errors, 'node');
    else
      errors.fail(
        [...path, 'mems'],
        `expected "local", "all" or a node list like "0-1"; got ${describe(m.mems)}`,
      );
  }
  return spec;
}

/** `low: { writeRate: 170MB/s, window: 10m }`: the page cache that holds `window` of Kafka's writes. */
function parseCacheWindow(m: Record<string, unknown>, path: FieldPath, errors: FieldErrors): MemoryAmount {
  allowOnly(m, path, ['writeRate', 'window'], errors);
  const rate = parseRate(m.writeRate);
  const window = parseWindow(m.window);
  if (m.writeRate === undefined)
    errors.fail([...path, 'writeRate'], 'missing: the rate the workload writes at, e.g. writeRate: 170MB/s');
  else if (typeof rate === 'string') errors.fail([...path, 'writeRate'], rate);
  if (m.window === undefined)
    errors.fail(
      [...path, 'window'],
      'missing: how many minutes of writes the cache should hold, e.g. window: 10m',
    );
  else if (typeof window === 'string') errors.fail([...path, 'window'], window);
  return {
    writeRate: typeof rate === 'number' ? rate : 0,
    windowSeconds: typeof window === 'number' ? window : 0,
    written: { writeRate: String(m.writeRate), window: String(m.window) },
  };
}

function parseCpu(value: unknown, path: FieldPath, errors: FieldErrors): NonNullable<WorkloadSpec['cpu']> {
  const c = object(value, path, errors, 'a mapping with weight and/or idle');
  allowOnly(c, path, ['weight', 'idle'], errors);
  const out: NonNullable<WorkloadSpec['cpu']> = {};
  if (c.weight !== undefined) {
    const expected = 'a whole number from 1 to 10000 (cgroup cpu.weight)';
    exact(c.weight, [...path, 'weight'], errors, expected);
    if (!Number.isSafeInteger(c.weight) || (c.weight as number) < 1 || (c.weight as number) > 10000) {
      errors.fail([...path, 'weight'], `expected ${expected}; got ${describe(c.weight)}`);
    }
    out.weight = c.weight as number;
  }
  if (c.idle !== undefined) out.idle = boolean(c.idle, [...path, 'idle'], errors);
  if (out.idle && out.weight !== undefined) {
    errors.fail(
      [...path, 'weight'],
      'idle: true ignores weight (the kernel reports weight 0); set one of them',
    );
  }
  return out;
}

/** An environment variable's name as systemd's Environment= takes one. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

function parseJvm(value: unknown, match: Match, path: FieldPath, errors: FieldErrors): JvmSpec {
  const j = object(
    value,
    path,
    errors,
    'a mapping like { activeProcessorCount: auto, optionsVariable: KAFKA_OPTS }',
  );
  allowOnly(j, path, ['activeProcessorCount', 'optionsVariable'], errors);
  if (match.kind !== 'systemdUnit') {
    errors.fail(
      path,
      'jvm: is for systemdUnit workloads (isolate writes the option into a drop-in of the unit); match the workload by systemdUnit or remove jvm:',
    );
  }
  if (j.activeProcessorCount !== 'auto') {
    errors.fail(
      [...path, 'activeProcessorCount'],
      `expected "auto" (the workload's CPU count); got ${describe(j.activeProcessorCount)}`,
    );
  }
  if (typeof j.optionsVariable !== 'string' || !ENV_NAME.test(j.optionsVariable)) {
    errors.fail(
      [...path, 'optionsVariable'],
      `expected the environment variable the unit's launcher reads JVM options from (KAFKA_OPTS for Kafka's scripts, JDK_JAVA_OPTIONS for a plain java launcher); got ${describe(j.optionsVariable)}`,
    );
  }
  return { activeProcessorCount: 'auto', optionsVariable: j.optionsVariable };
}

export function cpuList(value: unknown, path: FieldPath, errors: FieldErrors, what = 'CPU'): CpuSet {
  exact(value, path, errors, `a ${what} list like "0-3,8"`);
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string')
    errors.fail(path, `expected a ${what} list like "0-3,8"; got ${describe(value)}`);
  try {
    const set = CpuSet.parse(text);
    if (set.isEmpty) errors.fail(path, `expected a non-empty ${what} list like "0-3,8"`);
    return set;
  } catch (err) {
    if (err instanceof UserError) throw err;
    return errors.fail(path, `expected a ${what} list like "0-3,8"; got ${describe(text)}`);
  }
}
