// Schemas for the documents isolate reads back from disk (saved plans, journals): written as small
// checks that compose, so every field is named in the one line a refusal prints ("changes[3].to:
// expected a string"). A document read back is input like any other: nothing in it is used before
// every field has been checked, and a field isolate does not write is refused, not ignored.
import { UserError } from './errors.js';
import { IO_PROPERTY_SHOWN } from './io.js';
import { CGROUP_SETTINGS, type ChangeBackend, RAID_SETTINGS } from './plan.js';
import { IRQBALANCE_SETTING } from './irqbalance.js';
import { JVM_OPTIONS_SETTING } from './jvm-options.js';
import { IRQ_SETTINGS, irqTargetProblem } from './irq.js';
import { SYSTEMD_PROPERTY } from './systemd.js';

/** A check returns what is wrong (prefixed by where), or null. */
export type Check = (value: unknown, at: string) => string | null;

const show = (v: unknown) => {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

export const str =
  (maxLength = 64 * 1024): Check =>
  (v, at) =>
    typeof v !== 'string'
      ? `${at}: expected a string, found ${show(v)}`
      : v.length > maxLength
        ? `${at}: longer than ${maxLength} characters`
        : v.includes('\0')
          ? `${at}: contains a NUL byte`
          : null;

export const matching =
  (re: RegExp, what: string, maxLength = 4096): Check =>
  (v, at) =>
    str(maxLength)(v, at) ?? (re.test(v as string) ? null : `${at}: ${show(v)} is not ${what}`);

export const int =
  (min: number, max: number): Check =>
  (v, at) =>
    typeof v === 'number' && Number.isSafeInteger(v) && v >= min && v <= max
      ? null
      : `${at}: expected an integer from ${min} to ${max}, found ${show(v)}`;

export const oneOf =
  (values: readonly unknown[]): Check =>
  (v, at) =>
    values.includes(v) ? null : `${at}: ${show(v)} is not one of ${values.map((x) => show(x)).join(', ')}`;

export const nullable =
  (c: Check): Check =>
  (v, at) =>
    v === null ? null : c(v, at);

export const either =
  (a: Check, b: Check): Check =>
  (v, at) =>
    a(v, at) === null || b(v, at) === null ? null : a(v, at);

export const arrayOf =
  (item: Check, maxItems = 1_000_000): Check =>
  (v, at) => {
    if (!Array.isArray(v)) return `${at}: expected a list, found ${show(v)}`;
    if (v.length > maxItems) return `${at}: more than ${maxItems} items`;
    for (const [i, x] of v.entries()) {
      const bad = item(x, `${at}[${i}]`);
      if (bad) return bad;
    }
    return null;
  };

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** An object with exactly these fields (`optional` may be absent); any other field is refused. */
export const object =
  (required: Record<string, Check>, optional: Record<string, Check> = {}): Check =>
  (v, at) => {
    if (!isPlainObject(v)) return `${at}: expected an object, found ${show(v)}`;
    for (const [k, c] of Object.entries(required)) {
      if (!Object.hasOwn(v, k)) return `${at}.${k}: missing`;
      const bad = c(v[k], `${at}.${k}`);
      if (bad) return bad;
    }
    for (const k of Object.keys(v)) {
      if (Object.hasOwn(required, k)) continue;
      const c = Object.hasOwn(optional, k) ? optional[k] : undefined;
      if (!c) return `${at}.${k}: not a field isolate writes`;
      const bad = c(v[k], `${at}.${k}`);
      if (bad) return bad;
    }
    return null;
  };

/** An object used as a map: keys matching `key`, every value checked by `value`. */
export const record =
  (key: RegExp, value: Check, maxKeys = 10_000): Check =>
  (v, at) => {
    if (!isPlainObject(v)) return `${at}: expected an object, found ${show(v)}`;
    const keys = Object.keys(v);
    if (keys.length > maxKeys) return `${at}: more than ${maxKeys} entries`;
    for (const k of keys) {
      if (!key.test(k)) return `${at}: ${show(k)} is not a valid key`;
      const bad = value(v[k], `${at}.${k}`);
      if (bad) return bad;
    }
    return null;
  };

/** A cgroup path relative to its mount: absolute, and never leaving its tree. */
const cgroupPath: Check = (v, at) =>
  matching(/^\/[^\0]*$/, 'a cgroup path starting with "/"')(v, at) ??
  ((v as string).split('/').some((seg) => seg === '..' || seg === '.')
    ? `${at}: ${show(v)} leaves its tree ("." or "..")`
    : null);

const SETTINGS: Record<ChangeBackend, readonly string[]> = {
  cgroupfs: CGROUP_SETTINGS,
  raid: RAID_SETTINGS,
  systemd: [
    'Slice',
    'ActiveState',
    JVM_OPTIONS_SETTING,
    IRQBALANCE_SETTING,
    ...Object.values(SYSTEMD_PROPERTY),
    ...Object.keys(IO_PROPERTY_SHOWN),
  ],
  irq: IRQ_SETTINGS,
};

const TARGETS: Record<ChangeBackend, Check> = {
  cgroupfs: cgroupPath,
  // A unit name as systemd spells one: no path, no option, nothing a shell would read.
  systemd: matching(/^[A-Za-z0-9:_.@\\-]+\.(service|slice|scope|socket|mount)$/, 'a systemd unit name', 256),
  // `storcli:/c0/v0`: the tool family, then the vendor's own address.
  raid: matching(/^[a-z0-9]+:[A-Za-z0-9/_=.:-]+$/, 'a RAID target such as storcli:/c0/v0', 256),
  // Checked with the setting below (irqTargetProblem): only these three kinds of directory.
  irq: str(256),
};

/** An IRQ change's target must be the directory its setting lives in, and nothing else. */
const irqTarget: Check = (v, at) => {
  if (!isPlainObject(v)) return null;
  const bad = irqTargetProblem(String(v.target), String(v.setting));
  return bad ? `${at}.target: ${bad}` : null;
};

/** Whose IRQ or NIC queue a change was planned for (IrqOwner): a PCI address, an IRQ's handlers and chip. */
const irqOwner: Check = object(
  { pci: nullable(matching(/^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/, 'a PCI address', 32)) },
  { actions: arrayOf(str(256), 4096), chip: str(1024) },
);

/** One Change, in full: its backend's settings and target shape, `hierarchy` only for cgroup v1. */
export const change: Check = (v, at) => {
  if (!isPlainObject(v)) return `${at}: expected an object, found ${show(v)}`;
  const backend = v.backend as ChangeBackend;
  const known = oneOf(Object.keys(SETTINGS))(backend, `${at}.backend`);
  if (known) return known;
  const fields = object(
    {
      backend: oneOf([backend]),
      target: TARGETS[backend],
      setting: oneOf(SETTINGS[backend]),
      from: nullable(str()),
      to: str(),
    },
    {
      workload: str(256),
      note: str(4096),
      ...(backend === 'irq' ? { owner: irqOwner } : {}),
      ...(backend === 'cgroupfs'
        ? {
            hierarchy: matching(/^[a-z0-9_=,]+$/, 'a cgroup v1 mount such as "cpuset" or "cpu,cpuacct"', 256),
            startTime: matching(/^\d{1,20}$/, 'a start time in clock ticks since boot', 20),
          }
        : {}),
    },
  )(v, at);
  if (fields) return fields;
  if (v.startTime !== undefined && v.setting !== 'cgroup.procs' && v.setting !== 'tasks')
    return `${at}.startTime: only a process or thread move names a task's start time`;
  return backend === 'irq' ? irqTarget(v, at) : null;
};

/** An absolute path without NULs (tool paths): never a PATH lookup. */
export const absolutePath = matching(/^\/[^\0]*$/, 'an absolute path');

/** How changes are carried out (ops/plan.ts ExecutorOptions), as saved in plans and journals. */
export const executorOptions: Check = object(
  {},
  {
    raid: object(
      { timeoutMs: int(1, 24 * 3600 * 1000) },
      { toolPaths: record(/^[a-z0-9]+$/, absolutePath, 32) },
    ),
  },
);

/** An ISO 8601 timestamp as `Date.prototype.toISOString` writes it. */
export const timestamp = matching(
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/,
  'an ISO 8601 UTC time',
  64,
);

/** A sha256 in lower-case hex (fingerprints, policy hashes, checksums). */
export const sha256Hex = matching(/^[0-9a-f]{64}$/, 'a sha256 in hex', 64);

/** A workload's name as a key of a saved document (the policy loader's own names fit it). */
export const WORKLOAD_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

const ROLLBACK_FIX = 'upgrade isolate, or run the rollback with the version that wrote it';

/**
 * A state file written in a format newer than this isolate reads. Across an upgrade and back (a
 * downgrade, a fleet rolled out in waves) the older binary meets the newer one's journal, baseline,
 * assignment or saved plan: fields it does not know may carry meaning it would drop, so the file is
 * refused whole, never read as its own. The fix is said in the one line: the newer isolate, or its
 * rollback, reads it.
 */
export class NewerFormatError extends UserError {
  constructor(file: string, what: string, version: number, known: number, fix = ROLLBACK_FIX) {
    super(
      `${what} ${file} was written in format version ${version}, this isolate reads up to version ${known}: ${fix}`,
    );
    this.name = 'NewerFormatError';
  }
}

/**
 * Refuses a document whose `version` is a format newer than `known`, before its schema is checked
 * (the schema would name a field, hiding that the whole file is from the future). Older versions and
 * a missing or malformed `version` are left to the schema.
 */
export function refuseNewerFormat(
  data: unknown,
  file: string,
  what: string,
  known: number,
  fix?: string,
): void {
  if (!isPlainObject(data)) return;
  const v = data.version;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v > known) {
    throw new NewerFormatError(file, what, v, known, fix);
  }
}
