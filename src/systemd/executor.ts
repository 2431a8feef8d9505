// The systemd backend: a unit's CPUs and memory are changed through systemd (`systemctl
// set-property --runtime`, drop-ins under /run/systemd/system.control/), never by writing the
// unit's cgroup files, which systemd rewrites on every reload. Rollback removes exactly the
// drop-ins isolate created, then reloads systemd once for all of them (commitUndo).
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { mkdir, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { type ChangeExecutor, StepError, type UndoResult } from '../apply/executor.js';
import { CpuSet } from '../model/cpuset.js';
import { UserError } from '../model/errors.js';
import { isDirLiveSync, ReadRefused, readBoundedIfPresent, readLiveSync, readTrimSync } from '../sys/read.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Change } from '../model/plan.js';
import {
  assignmentOf,
  cpusIn,
  JVM_OPTIONS_SETTING,
  jvmDropInPath,
  jvmDropInText,
  splitAssignment,
  unwritableValue,
} from '../model/jvm-options.js';
import {
  cgroupCpuList,
  isAnchorSlice,
  sliceDropInPath,
  sliceDropInText,
  slicePath,
} from '../model/systemd.js';
import { writeFileAtomic, writeKernelFile } from '../sys/write.js';
import {
  IO_PROPERTY_SHOWN,
  IOLATENCY_OPTION,
  type IoProperty,
  ioClear,
  ioDeviceOf,
  ioEntries,
  ioEntryOf,
  ioLineOf,
  ioSatisfies,
  isIoProperty,
  parseTimespan,
  sameIoEntry,
} from '../model/io.js';

/** The io.max key each cap property sets. */
const IO_CAP_KEY = {
  IOReadBandwidthMax: 'rbps',
  IOWriteBandwidthMax: 'wbps',
  IOReadIOPSMax: 'riops',
  IOWriteIOPSMax: 'wiops',
} as const;
import {
  IRQBALANCE_DROP_IN,
  IRQBALANCE_ENV_FILE,
  IRQBALANCE_SETTING,
  IRQBALANCE_UNIT,
  irqbalanceDropInText,
  irqbalanceEnvText,
  runsWith,
  showIrqbalanceValue,
  valueOfEnvText,
} from '../model/irqbalance.js';
import { environmentFilesOf, runningEnv } from './irqbalance.js';
import { systemdRuns } from './observe.js';
import { type PathUsec, parseShow, setUnitPathUsecList, systemctl } from './systemctl.js';

/** USEC_INFINITY, as D-Bus carries an unlimited latency target. */
const UINT64_MAX = '18446744073709551615';

/**
 * Why a unit's io.latency / io.max is absent: io not enabled there (no io.stat, which every cgroup
 * with io has), or enabled but the kernel built without that policy.
 */
export function ioFileMissing(dir: string, file: 'io.latency' | 'io.max'): string {
  if (readLiveSync(path.join(dir, 'io.stat')) === null)
    return `io is not enabled in ${path.dirname(dir)}'s cgroup.subtree_control`;
  const option = file === 'io.latency' ? IOLATENCY_OPTION : 'CONFIG_BLK_DEV_THROTTLING';
  return `io is enabled there (io.stat exists) but this kernel has no ${file}: it is built without ${option}`;
}

/** Where `set-property --runtime` writes: systemd's own naming (50-<Property>.conf). */
export function runtimeDropIn(unit: string, property: string): string {
  return path.join('/run/systemd/system.control', `${unit}.d`, `50-${property}.conf`);
}

/** Values as systemd means them: CPU lists as sets, sizes as bytes with `infinity`. */
export function sameProperty(property: string, a: string | null, b: string | null): boolean {
  if (a === null || b === null) return a === b;
  if (property === 'AllowedCPUs' || property === 'AllowedMemoryNodes') {
    try {
      return CpuSet.parse(cgroupCpuList(a)).equals(CpuSet.parse(cgroupCpuList(b)));
    } catch {
      return a.trim() === b.trim();
    }
  }
  const norm = (v: string) => (v === 'max' ? 'infinity' : v === '[not set]' ? '' : v.trim());
  return norm(a) === norm(b);
}

/** What `systemctl show` prints for a property no unit file or drop-in sets. */
const PROPERTY_DEFAULT: Record<string, string> = {
  MemoryMin: '0',
  MemoryLow: '0',
  MemoryHigh: 'infinity',
  MemoryMax: 'infinity',
};

/** Every CPU (memory node) the kernel has online: what an unset AllowedCPUs= (AllowedMemoryNodes=) allows. */
const ONLINE_FILE: Record<string, string> = {
  AllowedCPUs: 'sys/devices/system/cpu/online',
  AllowedMemoryNodes: 'sys/devices/system/node/online',
};

/**
 * The unit property a setting is read from (JvmOptions: the variable's assignment in Environment; an
 * io property under the name `systemctl show` prints, IODeviceLatencyTargetSec= as …USec).
 */
const propertyOf = (setting: string) =>
  setting === JVM_OPTIONS_SETTING
    ? 'Environment'
    : isIoProperty(setting)
      ? IO_PROPERTY_SHOWN[setting]
      : setting;

/** A change's live value from a `systemctl show` block; null when the unit is not loaded. */
function liveValue(props: Record<string, string> | undefined, change: Change): string | null {
  if (props?.LoadState !== 'loaded') return null;
  if (change.setting === JVM_OPTIONS_SETTING) {
    const name = splitAssignment(change.to)?.[0] ?? '';
    const found = assignmentOf(props.Environment, name);
    if (found === null)
      throw new StepError(
        `systemctl show -p Environment ${change.target}: cannot parse "${props.Environment}"`,
      );
    return found;
  }
  // One device's entry of a per-device list ("" for none): what the change sets and rollback restores.
  if (isIoProperty(change.setting))
    return ioEntryOf(props[IO_PROPERTY_SHOWN[change.setting]], ioDeviceOf(change.to));
  return props[change.setting] ?? null;
}

const cgroupDir = (root: string, cg: string) => path.join(root, 'sys/fs/cgroup', cg);

const errCodeOf = (err: unknown) => (err as NodeJS.ErrnoException).code ?? String(err);

/** The cgroup file systemd writes a property into, where isolate checks it is in force. */
const KERNEL_FILE: Record<string, string> = {
  AllowedCPUs: 'cpuset.cpus',
  AllowedMemoryNodes: 'cpuset.mems',
};

/** How long apply waits for systemd to write a property into the cgroup (it answers first). */
const IN_FORCE_TRIES = 20;
const IN_FORCE_WAIT_MS = 100;

interface Widened {
  unit: string;
  setting: string;
}

/** isolate's drop-ins are a few short lines (sliceDropInText, jvmDropInText); anything far larger at their names is not isolate's. */
const DROP_IN_MAX_BYTES = 64 * 1024;

export class SystemdExecutor implements ChangeExecutor {
  constructor(readonly root: string) {}

  async ready(): Promise<void> {
    if (!systemdRuns(this.root)) {
      throw new UserError(
        'cannot apply: the plan changes systemd units, but systemd does not run this host (or --root is not /); plan again on the host itself',
        1,
      );
    }
  }

  /** Each unit's ControlGroup as the last read saw it (notInForce's cgroup, without another show). */
  private readonly cgroupOf = new Map<string, string>();

  /** One property of a unit, with what says whether it is loaded and where its cgroup is. */
  private async showUnit(unit: string, property: string): Promise<Record<string, string> | undefined> {
    const [props] = parseShow(
      await systemctl(['show', '-p', property, '-p', 'LoadState', '-p', 'ControlGroup', '--', unit]),
    );
    return props;
  }

  private remember(unit: string, props: Record<string, string> | undefined): void {
    if (props?.LoadState === 'loaded' && props.ControlGroup !== undefined)
      this.cgroupOf.set(unit, props.ControlGroup);
    else this.cgroupOf.delete(unit);
  }

  async read(change: Change): Promise<string | null> {
    if (change.setting === IRQBALANCE_SETTING) return this.readIrqbalance();
    const props = await this.showUnit(change.target, propertyOf(change.setting));
    this.remember(change.target, props);
    return liveValue(props, change);
  }

  /**
   * The live value of each change (null where its unit is not loaded) from one `systemctl show` for
   * all their units: a process and a D-Bus round trip per unit otherwise, and pre-flight and a
   * rollback read a dozen or more. One call per change when the answer is not one block per unit.
   */
  async readMany(changes: readonly Change[]): Promise<(string | null)[]> {
    if (changes.some((c) => c.setting === IRQBALANCE_SETTING)) {
      const rest = changes.filter((c) => c.setting !== IRQBALANCE_SETTING);
      const values = await this.readMany(rest);
      const ours = await this.readIrqbalance();
      return changes.map((c) => (c.setting === IRQBALANCE_SETTING ? ours : (values.shift() ?? null)));
    }
    const units = [...new Set(changes.map((c) => c.target))];
    if (units.length === 0) return [];
    const props = [...new Set(changes.map((c) => propertyOf(c.setting))), 'LoadState', 'ControlGroup'];
    const blocks = parseShow(await systemctl(['show', ...props.flatMap((p) => ['-p', p]), '--', ...units]));
    if (blocks.length !== units.length) {
      const out: (string | null)[] = [];
      for (const c of changes) out.push(await this.read(c));
      return out;
    }
    const byUnit = new Map(units.map((u, i) => [u, blocks[i]]));
    for (const [u, b] of byUnit) this.remember(u, b);
    return changes.map((c) => liveValue(byUnit.get(c.target), c));
  }

  satisfied(change: Change, live: string | null): boolean {
    if (isIoProperty(change.setting)) return sameIoEntry(change.setting, live, change.to);
    return sameProperty(change.setting, live, change.to);
  }

  same(change: Change, a: string | null, b: string | null): boolean {
    if (isIoProperty(change.setting)) return sameIoEntry(change.setting, a, b);
    return sameProperty(change.setting, a, b);
  }

  /** The `Slice=` drop-in of a unit, under --root (which is / whenever systemd is asked). */
  sliceDropIn(unit: string): string {
    return path.join(this.root, sliceDropInPath(unit));
  }

  async apply(change: Change): Promise<{ skipped?: string }> {
    if (change.setting === 'Slice') return this.applySlice(change);
    if (change.setting === JVM_OPTIONS_SETTING) return this.applyJvmOptions(change);
    if (change.setting === IRQBALANCE_SETTING) return this.applyIrqbalance(change);
    if (change.setting === 'ActiveState') return this.applyActive(change);
    await systemctl(['set-property', '--runtime', '--', change.target, `${change.setting}=${change.to}`]);
    const now = await this.read(change);
    if (!this.satisfied(change, now)) {
      throw new StepError(
        `systemctl set-property ${change.target} ${change.setting}=${change.to}: systemd reports "${now ?? '(unit not loaded)'}" afterwards`,
      );
    }
    // systemd answers before it writes the cgroup, and a write it cannot make is only logged.
    let why = await this.notInForce(change, now);
    for (let i = 0; why !== null && i < IN_FORCE_TRIES; i++) {
      await sleep(IN_FORCE_WAIT_MS);
      why = await this.notInForce(change, now);
    }
    if (why !== null) {
      throw new StepError(
        `systemctl set-property ${change.target} ${change.setting}=${change.to}: systemd holds the value but did not put it in force: ${why}`,
      );
    }
    return {};
  }

  /**
   * Whether the kernel has what systemd holds: a CPU or memory-node list systemd could not write to
   * the unit's cgroup (its parent has no cpuset: systemd logs "Failed to set 'cpuset.cpus'" and
   * carries on) is not in force. Only for a unit that runs (has a cgroup) and a non-empty list.
   */
  async notInForce(change: Change, live: string | null): Promise<string | null> {
    if (isIoProperty(change.setting)) return this.ioNotInForce(change, live);
    if (change.setting === IRQBALANCE_SETTING) return this.irqbalanceNotInForce(live);
    const file = KERNEL_FILE[change.setting];
    if (file === undefined || live === null || cgroupCpuList(live) === '') return null;
    let cg = this.cgroupOf.get(change.target);
    if (cg === undefined) {
      const [props] = parseShow(
        await systemctl(['show', '-p', 'ControlGroup', '-p', 'LoadState', '--', change.target]),
      );
      if (props?.LoadState !== 'loaded') return null;
      cg = props.ControlGroup ?? '';
    }
    if (!cg.startsWith('/') || cg.split('/').includes('..')) return null;
    const dir = cgroupDir(this.root, cg);
    if (!isDirLiveSync(dir)) return null;
    const kernel = readLiveSync(path.join(dir, file));
    const where = `${path.posix.join(cg, file)}`;
    if (kernel === null)
      return `${where} does not exist (cpuset is not enabled in ${path.posix.dirname(cg)}'s cgroup.subtree_control)`;
    if (!sameProperty(change.setting, kernel, live)) return `${where} is "${kernel}"`;
    return null;
  }

  /**
   * `ActiveState=active`: start one of isolate's own anchor slices (empty; nothing runs in it). isolate
   * starts nothing else: a service's restart is always the operator's.
   */
  private async applyActive(change: Change): Promise<{ skipped?: string }> {
    if (!isAnchorSlice(change.target) || change.to !== 'active') {
      throw new StepError(
        `${change.target} ActiveState=${change.to}: isolate starts only its own anchor slices (NAME-isolate.slice)`,
      );
    }
    await systemctl(['start', '--', change.target]);
    const now = await this.read(change);
    if (now !== 'active') {
      throw new StepError(
        `systemctl start ${change.target}: systemd reports ActiveState=${now ?? '(not loaded)'}`,
      );
    }
    return {};
  }

  /**
   * `Slice=` cannot be set on a loaded unit through set-property: isolate writes a drop-in (the one
   * safe writer, 0644), reloads systemd and reads the configured slice back. The unit moves at its
   * next start; isolate never restarts it.
   */
  private async applySlice(change: Change): Promise<{ skipped?: string }> {
    const file = this.sliceDropIn(change.target);
    const dir = path.dirname(file);
    if (!existsSync(dir)) await mkdir(dir, { mode: 0o755 });
    await writeFileAtomic(file, sliceDropInText(change.target, change.to), { mode: 0o644 });
    await systemctl(['daemon-reload']);
    const now = await this.read(change);
    if (!this.satisfied(change, now)) {
      throw new StepError(
        `${file}: systemd reports Slice=${now ?? '(unit not loaded)'} for ${change.target} after daemon-reload (a later drop-in of the operator's sets another slice?); remove the conflicting Slice= or name that slice in the policy`,
      );
    }
    return {};
  }

  /** The JVM options drop-in of a unit, under --root (which is / whenever systemd is asked). */
  jvmDropIn(unit: string): string {
    return path.join(this.root, jvmDropInPath(unit));
  }

  /**
   * The JVM options drop-in (model/jvm-options.ts): written through the one safe writer (0644),
   * systemd reloaded, the variable read back as systemd will pass it at the next start. The running
   * JVM keeps the options it started with; isolate never restarts it.
   */
  private async applyJvmOptions(change: Change): Promise<{ skipped?: string }> {
    const file = this.jvmDropIn(change.target);
    const bad = unwritableValue(change.to);
    if (bad) throw new StepError(`${file}: ${change.to.slice(0, 60)}... cannot be written (${bad})`);
    const dir = path.dirname(file);
    if (!existsSync(dir)) await mkdir(dir, { mode: 0o755 });
    await writeFileAtomic(file, jvmDropInText(change.target, change.to, cpusIn(change.to) ?? 0), {
      mode: 0o644,
    });
    await systemctl(['daemon-reload']);
    const now = await this.read(change);
    if (!this.satisfied(change, now)) {
      throw new StepError(
        `${file}: systemd reports ${now === null ? '(unit not loaded)' : `"${now}"`} for ${change.target} after daemon-reload, not "${change.to}" (a later drop-in of the operator's sets the variable?); add -XX:ActiveProcessorCount there, or remove jvm: from the policy`,
      );
    }
    return {};
  }

  /**
   * isolate's irqbalance value: the assignments of its environment file when systemd has loaded the
   * drop-in naming it (EnvironmentFiles=, printed once per file), '' when it has not; null when
   * irqbalance.service is not loaded (not installed).
   */
  private async readIrqbalance(): Promise<string | null> {
    const show = await systemctl([
      'show',
      '-p',
      'LoadState',
      '-p',
      'EnvironmentFiles',
      '--',
      IRQBALANCE_UNIT,
    ]);
    if (!/^LoadState=loaded$/m.test(show)) return null;
    if (!environmentFilesOf(show.split('\n')).some((f) => f.file === IRQBALANCE_ENV_FILE)) return '';
    let text: string | null;
    try {
      text = readBoundedIfPresent(path.join(this.root, IRQBALANCE_ENV_FILE), { maxBytes: DROP_IN_MAX_BYTES });
    } catch (err) {
      throw new StepError(`${IRQBALANCE_ENV_FILE}: ${err instanceof ReadRefused ? err.reason : String(err)}`);
    }
    return text === null ? '' : valueOfEnvText(text);
  }

  /** The running irqbalance (MainPID) started without `live`: it reads its environment only at start. */
  private async irqbalanceNotInForce(live: string | null): Promise<string | null> {
    if (!live) return null;
    const [props] = parseShow(
      await systemctl(['show', '-p', 'ActiveState', '-p', 'MainPID', '--', IRQBALANCE_UNIT]),
    );
    const pid = Number(props?.MainPID ?? 0);
    if (props?.ActiveState !== 'active' || !(pid > 0)) return null;
    const env = runningEnv(this.root, pid);
    if (env === null || runsWith(env, live)) return null;
    return `irqbalance (pid ${pid}) runs without isolate's ban (started before it was written)`;
  }

  /**
   * irqbalance's ban: isolate's environment file and the drop-in naming it, both through the one safe
   * writer (0644), systemd reloaded, the value read back as systemd will pass it, then irqbalance
   * restarted once (try-restart: a stopped irqbalance stays stopped and reads it at its next start)
   * and its new process's environment checked.
   */
  private async applyIrqbalance(change: Change): Promise<{ skipped?: string }> {
    const file = path.join(this.root, IRQBALANCE_ENV_FILE);
    if (/[\x00-\x09\x0b-\x1f\x7f]/.test(change.to))
      throw new StepError(`${file}: the value holds a control character; not written`);
    const dir = path.dirname(file);
    if (!existsSync(dir)) await mkdir(dir, { mode: 0o755 });
    await writeFileAtomic(file, irqbalanceEnvText(change.to), { mode: 0o644 });
    await writeFileAtomic(path.join(this.root, IRQBALANCE_DROP_IN), irqbalanceDropInText(), { mode: 0o644 });
    await systemctl(['daemon-reload']);
    const now = await this.readIrqbalance();
    if (now !== change.to) {
      throw new StepError(
        `${IRQBALANCE_DROP_IN}: after daemon-reload systemd ${now === null ? `does not know ${IRQBALANCE_UNIT}` : `passes ${now ? showIrqbalanceValue(now) : "no value of isolate's"}`}, not ${showIrqbalanceValue(change.to)}`,
      );
    }
    await systemctl(['try-restart', '--', IRQBALANCE_UNIT]);
    let why = await this.irqbalanceNotInForce(now);
    for (let i = 0; why !== null && i < IN_FORCE_TRIES; i++) {
      await sleep(IN_FORCE_WAIT_MS);
      why = await this.irqbalanceNotInForce(now);
    }
    if (why) throw new StepError(`systemctl try-restart ${IRQBALANCE_UNIT}: ${why}`);
    return {};
  }

  /**
   * Back to the value before: isolate's files removed (recognised by their header) when there was
   * none, else its earlier value written again. Staged: commitUndo reloads systemd once, then
   * restarts irqbalance once.
   */
  private async undoIrqbalance(change: Change, previous: string | null): Promise<UndoResult> {
    const env = path.join(this.root, IRQBALANCE_ENV_FILE);
    const dropIn = path.join(this.root, IRQBALANCE_DROP_IN);
    if (previous) {
      await writeFileAtomic(env, irqbalanceEnvText(previous), { mode: 0o644 });
      await writeFileAtomic(dropIn, irqbalanceDropInText(), { mode: 0o644 });
    } else {
      for (const file of [dropIn, env]) {
        let text: string | null;
        try {
          text = readBoundedIfPresent(file, { maxBytes: DROP_IN_MAX_BYTES });
        } catch (err) {
          const why = err instanceof ReadRefused ? err.reason : String(err);
          return { note: `${file} is not isolate's (${why}); left in place` };
        }
        if (text !== null && !text.startsWith('# Written by isolate'))
          return { note: `${file} was not written by isolate; left in place` };
        rmSync(file, { force: true });
      }
      await rmdir(path.dirname(env)).catch(() => {});
    }
    this.staged.push({ change, previous });
    return { pending: true };
  }

  /** A runtime drop-in of `set-property --runtime`, under --root (which is / whenever systemd is asked). */
  runtimeDropIn(unit: string, property: string): string {
    return path.join(this.root, runtimeDropIn(unit, property));
  }

  /** Undos whose drop-in is removed but which systemd sees only after the next daemon-reload. */
  private staged: { change: Change; previous: string | null }[] = [];

  /**
   * Removes exactly isolate's own drop-in, Slice= or JVM options (recognised by its header), and its directory if it is
   * left empty. Staged: in force at commitUndo's daemon-reload. An absent file is staged as well: a
   * crash between the removal and the reload leaves exactly that, and the reload is still owed.
   */
  private async undoOwnDropIn(change: Change, previous: string | null): Promise<UndoResult> {
    const file = change.setting === 'Slice' ? this.sliceDropIn(change.target) : this.jvmDropIn(change.target);
    // Bounded and regular files only: a FIFO or device at isolate's name is not its drop-in.
    let text: string | null;
    try {
      text = readBoundedIfPresent(file, { maxBytes: DROP_IN_MAX_BYTES });
    } catch (err) {
      const why = err instanceof ReadRefused ? err.reason : String(err);
      return { note: `${file} is not isolate's drop-in (${why}); left in place` };
    }
    if (text !== null && !text.startsWith('# Written by isolate')) {
      return { note: `${file} was not written by isolate; left in place` };
    }
    if (text !== null) {
      rmSync(file, { force: true });
      await rmdir(path.dirname(file)).catch(() => {});
    }
    this.staged.push({ change, previous });
    return { pending: true };
  }

  /** The unit's cgroup directory (ControlGroup), or null when it has none (not running) or it is unusable. */
  private async unitCgroup(unit: string): Promise<string | null> {
    let cg = this.cgroupOf.get(unit);
    if (cg === undefined) {
      const [props] = parseShow(
        await systemctl(['show', '-p', 'ControlGroup', '-p', 'LoadState', '--', unit]),
      );
      if (props?.LoadState !== 'loaded') return null;
      cg = props.ControlGroup ?? '';
    }
    if (!cg.startsWith('/') || cg.split('/').includes('..')) return null;
    const dir = cgroupDir(this.root, cg);
    return isDirLiveSync(dir) ? dir : null;
  }

  /**
   * Whether the kernel has a latency target or cap systemd holds: its line in the unit's io.latency /
   * io.max (systemd logs a write it cannot make, such as a device gone, and carries on). A weight is not
   * compared: systemd scales it for io.bfq.weight. Null when the unit runs nowhere or the file is absent.
   */
  private async ioNotInForce(change: Change, live: string | null): Promise<string | null> {
    const path_ = ioDeviceOf(change.to);
    const dev = /^\/dev\/block\/(\d+:\d+)$/.exec(path_)?.[1];
    if (!dev || change.setting === 'IODeviceWeight' || !live) return null;
    const dir = await this.unitCgroup(change.target);
    if (dir === null) return null;
    const file = change.setting === 'IODeviceLatencyTargetSec' ? 'io.latency' : 'io.max';
    const text = readLiveSync(path.join(dir, file));
    if (text === null) return `${file} does not exist in ${dir} (${ioFileMissing(dir, file)})`;
    const line = ioLineOf(file, text, dev);
    const value = live.split(/\s+/).slice(1).join(' ');
    const want =
      file === 'io.latency'
        ? `${dev} target=${parseTimespan(value) === 'infinity' ? 'max' : parseTimespan(value)}`
        : `${dev} ${IO_CAP_KEY[change.setting as Exclude<IoProperty, 'IODeviceLatencyTargetSec' | 'IODeviceWeight'>]}=${value === 'infinity' ? 'max' : value}`;
    return ioSatisfies(file, line, want) ? null : `${file} reads "${line}" for ${dev}`;
  }

  /**
   * One device's entry back as it was. systemd cannot drop a single entry of a list, and an entry it
   * drops stays in the kernel (it writes only the entries it has): a latency target or cap that was not
   * there is first set to infinity (systemd writes target=max / max), then the list is set again without
   * it; a weight, which has no infinity, is cleared in the unit's io.weight / io.bfq.weight directly
   * ("MAJ:MIN default"), which systemd, holding no entry for it, never writes again.
   */
  private async undoIoEntry(change: Change, previous: string | null): Promise<UndoResult> {
    const setting = change.setting as IoProperty;
    const dev = ioDeviceOf(change.to);
    const set = (...values: string[]) =>
      systemctl(['set-property', '--runtime', '--', change.target, ...values.map((v) => `${setting}=${v}`)]);
    if (previous) {
      await set(previous);
      await this.ioReadBack(change, new Map([[dev, previous]]));
      return {};
    }
    const props = await this.showUnit(change.target, IO_PROPERTY_SHOWN[setting]);
    if (props?.LoadState !== 'loaded') return {};
    this.remember(change.target, props);
    if (setting !== 'IODeviceWeight') await set(`${dev} infinity`);
    const others = ioEntries(props[IO_PROPERTY_SHOWN[setting]]).filter((e) => ioDeviceOf(e) !== dev);
    // systemd 252's systemctl refuses the empty IODeviceLatencyTargetSec= (seen in the guest; the caps'
    // and IODeviceWeight='s empty assignments work): that list is given whole over D-Bus instead.
    if (setting === 'IODeviceLatencyTargetSec') await this.setLatencyList(change.target, others);
    else await set('', ...others);
    // The device without an entry, every other device's entry as it was.
    await this.ioReadBack(
      change,
      new Map([[dev, ''], ...others.map((e): [string, string] => [ioDeviceOf(e), e])]),
    );
    // systemd names the drop-in after the D-Bus property (50-IODeviceLatencyTargetUSec.conf).
    if (others.length === 0)
      rmSync(this.runtimeDropIn(change.target, IO_PROPERTY_SHOWN[setting]), { force: true });
    if (setting !== 'IODeviceWeight') return {};
    const majMin = /^\/dev\/block\/(\d+:\d+)$/.exec(dev)?.[1];
    const dir = await this.unitCgroup(change.target);
    if (!majMin || dir === null) return {};
    for (const file of ['io.weight', 'io.bfq.weight'] as const) {
      const f = path.join(dir, file);
      const text = readLiveSync(f);
      if (text === null || ioLineOf(file, text, majMin) === ioClear(file, majMin)) continue;
      try {
        await writeKernelFile(f, Buffer.from(ioClear(file, majMin)));
      } catch (err) {
        return {
          note: `${change.target}: ${file} keeps its line for ${majMin} (${errCodeOf(err)}); systemd has no way to clear one device's weight`,
        };
      }
    }
    return {};
  }

  /**
   * Read a unit's io list back after an undo, as every other systemd undo is (commitUndo): each device's
   * entry must be what was wanted ('' for none; an unlimited entry is none). systemd answers a
   * set-property it does not apply (a later drop-in of the operator's sets the list) with success.
   * A unit not loaded any more holds nothing of isolate's.
   */
  private async ioReadBack(change: Change, wanted: ReadonlyMap<string, string>): Promise<void> {
    const setting = change.setting as IoProperty;
    const shown = IO_PROPERTY_SHOWN[setting];
    const props = await this.showUnit(change.target, shown);
    if (props?.LoadState !== 'loaded') return;
    const wrong: string[] = [];
    for (const [dev, want] of wanted) {
      const seen = ioEntryOf(props[shown], dev);
      if (sameIoEntry(setting, seen, want)) continue;
      wrong.push(
        `${change.target} ${setting} for ${dev}: wanted ${want ? `"${want}"` : 'no entry'}, systemd shows ${seen ? `"${seen}"` : 'no entry'}`,
      );
    }
    if (wrong.length > 0)
      throw new StepError(`undo not in force: ${wrong.join('; ')} (another drop-in sets it?)`);
  }

  /** A unit's whole latency target list ("/dev/sdc 50ms" entries, as shown) through D-Bus, in µs. */
  private async setLatencyList(unit: string, shown: readonly string[]): Promise<void> {
    const entries = shown.map((e): PathUsec => {
      const [p = '', ...rest] = e.split(/\s+/);
      const usec = parseTimespan(rest.join(' '));
      if (usec === null || !p.startsWith('/'))
        throw new StepError(
          `${unit}: cannot restore IODeviceLatencyTargetSec entry "${e}" (not a path and a timespan)`,
        );
      return [p, usec === 'infinity' ? UINT64_MAX : String(usec)];
    });
    await setUnitPathUsecList(unit, IO_PROPERTY_SHOWN.IODeviceLatencyTargetSec, entries);
  }

  async undo(change: Change, previous: string | null): Promise<UndoResult> {
    if (isIoProperty(change.setting)) return this.undoIoEntry(change, previous);
    if (change.setting === IRQBALANCE_SETTING) return this.undoIrqbalance(change, previous);
    if (change.setting === 'Slice' || change.setting === JVM_OPTIONS_SETTING)
      return this.undoOwnDropIn(change, previous);
    if (change.setting === 'ActiveState') {
      // An anchor that was not active before is stopped; its runtime AllowedCPUs= drop-in goes with
      // the other properties' (staged). Nothing runs in it, so nothing is stopped with it.
      if (previous !== 'active' && isAnchorSlice(change.target))
        await systemctl(['stop', '--', change.target]);
      return {};
    }
    // systemctl show prints a default, not "unset" (MemoryLow=0, MemoryMax=infinity): a property at
    // its default before is restored by removing isolate's drop-in, not by pinning the default in
    // one (seen on systemd 252: rollback otherwise left 50-MemoryLow.conf with MemoryLow=0 behind).
    const unset =
      previous === null ||
      previous === '' ||
      previous === '[not set]' ||
      previous === PROPERTY_DEFAULT[change.setting];
    if (unset) {
      // The property was not set before: remove isolate's drop-in rather than pinning a value. Also
      // when it is already gone (a crash after the removal, before the reload): the reload is owed.
      rmSync(this.runtimeDropIn(change.target, change.setting), { force: true });
      this.staged.push({ change, previous });
      return { pending: true };
    }
    await systemctl(['set-property', '--runtime', '--', change.target, `${change.setting}=${previous}`]);
    return {};
  }

  /**
   * One daemon-reload for every drop-in removed since the last commit (each reload costs ~10 s under
   * TCG and re-realizes every cgroup on a real host), then each undone property read back.
   */
  async commitUndo(): Promise<string[]> {
    const batch = this.staged;
    this.staged = [];
    if (batch.length === 0) return [];
    const widened = await this.widenCpusets(batch);
    await systemctl(['daemon-reload']);
    const wrong: string[] = [];
    const afters = await this.readMany(batch.map((b) => b.change));
    for (const [i, { change, previous }] of batch.entries()) {
      const after = afters[i] ?? null;
      if (this.restored(change, previous, after)) continue;
      if (change.setting === 'Slice') {
        wrong.push(`${change.target} Slice=${after} (was ${previous})`);
        continue;
      }
      if (change.setting === JVM_OPTIONS_SETTING) {
        wrong.push(`${change.target} Environment "${after}" (was "${previous}")`);
        continue;
      }
      if (change.setting === IRQBALANCE_SETTING) {
        wrong.push(
          `${IRQBALANCE_UNIT} reads ${after ? `isolate's ban ${showIrqbalanceValue(after)}` : 'no ban of isolate'} (was ${previous ? showIrqbalanceValue(previous) : 'none'})`,
        );
        continue;
      }
      // systemd 252 keeps init.scope's (a perpetual unit's) runtime properties across a reload even
      // with their drop-in gone: set the old value through systemd, then drop the file that wrote.
      const value = previous === '[not set]' ? '' : (previous ?? '');
      await systemctl(['set-property', '--runtime', '--', change.target, `${change.setting}=${value}`]);
      rmSync(this.runtimeDropIn(change.target, change.setting), { force: true });
      const now = await this.read(change);
      if (!this.restored(change, previous, now))
        wrong.push(`${change.target} ${change.setting}=${now} (was ${previous})`);
    }
    if (wrong.length > 0) {
      throw new StepError(
        `after removing isolate's drop-ins and daemon-reload systemd still reports ${wrong.join(', ')} (another drop-in sets it?)`,
      );
    }
    const notes = await this.pruneSlices(batch);
    // irqbalance reads its environment only at start: once, after the reload that dropped isolate's file.
    if (batch.some((b) => b.change.setting === IRQBALANCE_SETTING)) {
      await systemctl(['try-restart', '--', IRQBALANCE_UNIT]);
    }
    const narrow: string[] = [];
    for (const w of widened) {
      const why = await this.kernelNarrower(w);
      if (why) narrow.push(why);
    }
    if (narrow.length > 0) {
      throw new StepError(
        `after rollback the kernel still fences ${narrow.join(', ')}; run "systemctl set-property --runtime UNIT ${widened[0]?.setting ?? 'AllowedCPUs'}=<all>" for it, then remove its /run/systemd/system.control drop-in and daemon-reload`,
      );
    }
    return notes;
  }

  /**
   * After the reload, what systemd leaves of isolate's slices. A slice that is inactive now but has an
   * (empty) cgroup got it when isolate set its properties (systemd realizes a unit's cgroup on
   * set-property even when it is not started: kafka.slice, user.slice on a host nobody logged into,
   * machine.slice, the stopped anchor); the cgroup keeps the controllers systemd enabled in it then
   * (kafka.slice: cpuset, which keeps the root's cpuset enabled: EBUSY). No unit runs in an inactive
   * slice, so its empty leaf cgroup is removed (rmdir; the kernel refuses one with processes or
   * children); systemd makes it again when the slice starts. A unit moved into its own slice that has
   * not restarted since still runs there: named, with what its restart will do.
   */
  private async pruneSlices(batch: { change: Change; previous: string | null }[]): Promise<string[]> {
    const notes: string[] = [];
    for (const { change, previous } of batch) {
      if (change.setting !== 'Slice') continue;
      const [props] = parseShow(await systemctl(['show', '-p', 'ControlGroup', '--', change.target]));
      const cg = props?.ControlGroup ?? '';
      const home = slicePath(change.to);
      if (!cg.startsWith(`${home}/`)) continue;
      const back = path.posix.join(slicePath(previous || 'system.slice'), change.target);
      notes.push(
        `${change.target} runs in ${cg} until its next restart (systemctl restart ${change.target}), then in ${back} again; ${home} stays (systemd keeps the empty ${change.to} after that restart: systemctl stop ${change.to} removes it)`,
      );
    }
    const slices = [...new Set(batch.map((b) => b.change.target).filter((u) => u.endsWith('.slice')))].sort();
    for (const unit of slices) {
      const cg = slicePath(unit);
      const dir = cgroupDir(this.root, cg);
      if (cg === '/' || !isDirLiveSync(dir)) continue;
      const events = readLiveSync(path.join(dir, 'cgroup.events'));
      if (events === null || !/^populated 0$/m.test(events)) continue;
      if (readdirSync(dir, { withFileTypes: true }).some((e) => e.isDirectory())) continue;
      const [props] = parseShow(await systemctl(['show', '-p', 'ActiveState', '--', unit]));
      if (props?.ActiveState !== 'inactive') continue;
      try {
        await rmdir(dir);
      } catch (err) {
        notes.push(
          `systemd keeps the empty cgroup ${cg} of the inactive ${unit} (made when its properties were set; rmdir: ${errCodeOf(err)}); nothing runs in it and isolate's values are gone`,
        );
      }
    }
    return notes;
  }

  /**
   * systemd 252 does not write a unit's cpuset file back when AllowedCPUs=/AllowedMemoryNodes=
   * disappears (neither at daemon-reload nor on `set-property UNIT AllowedCPUs=` with an empty
   * value): the cgroup kept isolate's fence (system.slice 0-1,4-7) after every drop-in was gone. So
   * before the reload, each such unit is first given every online CPU (memory node) through systemd,
   * which writes that list into cpuset.cpus itself, and the drop-in set-property wrote is removed
   * again. The kernel file then holds every online CPU rather than the empty list it had before
   * isolate: the same while those CPUs are online (an empty list inherits the parent's effective set,
   * and a full list is cut to it), only a CPU hot-added later would not be inherited.
   * Needs no reload of its own: set-property is in force at once. Returns what was widened.
   */
  private async widenCpusets(batch: { change: Change; previous: string | null }[]): Promise<Widened[]> {
    const out: Widened[] = [];
    // On hosts (and test roots) without the online file there is nothing to widen to. Each file is
    // read once for the batch (a strict rollback widens a dozen units to the same CPU list).
    const online = new Map<string, string | null>();
    const allOf = (file: string) => {
      if (!online.has(file)) online.set(file, readTrimSync(path.join(this.root, file)));
      return online.get(file) ?? null;
    };
    const fenced = batch.flatMap(({ change }) => {
      const file = ONLINE_FILE[change.setting];
      const all = file === undefined ? null : allOf(file);
      return all ? [{ change, all }] : [];
    });
    const live = await this.readMany(fenced.map((f) => f.change));
    for (const [i, { change, all }] of fenced.entries()) {
      // Also a unit not loaded before isolate (kafka.slice): until Kafka restarts it still runs there.
      if (live[i] === null) continue; // unloaded now: no cgroup left to fence
      // No cgroup (a stopped anchor slice): nothing to widen, and a set-property would make one.
      const cg = this.cgroupOf.get(change.target);
      if (!cg?.startsWith('/') || !isDirLiveSync(cgroupDir(this.root, cg))) continue;
      await systemctl(['set-property', '--runtime', '--', change.target, `${change.setting}=${all}`]);
      rmSync(this.runtimeDropIn(change.target, change.setting), { force: true });
      out.push({ unit: change.target, setting: change.setting });
    }
    return out;
  }

  /**
   * Read back from the kernel that a widened unit's cgroup no longer narrows its parent's set:
   * its cpuset.*.effective equals the parent's. A description when it does not; null when it does
   * or when there is nothing to read (no cgroup, cpuset not enabled there).
   */
  private async kernelNarrower(w: Widened): Promise<string | null> {
    const [props] = parseShow(
      await systemctl(['show', '-p', 'ControlGroup', '-p', 'LoadState', '--', w.unit]),
    );
    const cg = props?.ControlGroup;
    if (props?.LoadState !== 'loaded' || !cg || !cg.startsWith('/')) return null;
    const file = w.setting === 'AllowedCPUs' ? 'cpuset.cpus.effective' : 'cpuset.mems.effective';
    const own = readTrimSync(path.join(cgroupDir(this.root, cg), file));
    const parent = readTrimSync(path.join(cgroupDir(this.root, path.posix.dirname(cg)), file));
    if (own === null || parent === null) return null;
    if (sameProperty(w.setting, own, parent)) return null;
    return `${cgroupDir('/', cg)}/${file}=${own || '""'} (parent's ${parent || '""'}; ${w.unit} ${w.setting}=)`;
  }

  /** Whether systemd reports a removed drop-in's property as it was before isolate set it. */
  private restored(change: Change, previous: string | null, now: string | null): boolean {
    // Not loaded before, or unloaded now (a slice left empty): nothing of isolate's value can remain.
    if (previous === null || now === null) return true;
    if (sameProperty(change.setting, now, previous)) return true;
    const dflt = PROPERTY_DEFAULT[change.setting];
    return dflt !== undefined && sameProperty(change.setting, now, dflt);
  }
}
