// A unit's properties as systemd holds them: read through `systemctl show` (one call for many units),
// set through `systemctl set-property --runtime` and checked in force in the unit's cgroup, and put
// back (a property that was unset by removing isolate's runtime drop-in, staged until the reload).
import { rmSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { StepError, type UndoResult } from '../apply/executor.js';
import { CpuSet } from '../model/cpuset.js';
import { IO_PROPERTY_SHOWN, ioDeviceOf, ioEntryOf, isIoProperty, sameIoEntry } from '../model/io.js';
import { assignmentOf, JVM_OPTIONS_SETTING, splitAssignment } from '../model/jvm-options.js';
import type { Change } from '../model/plan.js';
import { cgroupCpuList, isAnchorSlice } from '../model/systemd.js';
import { isDirLiveSync, readLiveSync } from '../sys/read.js';
import type { IoEntries } from './io.js';
import { parseShow, systemctl } from './systemctl.js';
import { cgroupDir, IN_FORCE_TRIES, IN_FORCE_WAIT_MS, type StagedUndos, type Units } from './unit.js';

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

/** Whether systemd reports a removed drop-in's property as it was before isolate set it. */
export function restored(change: Change, previous: string | null, now: string | null): boolean {
  // Not loaded before, or unloaded now (a slice left empty): nothing of isolate's value can remain.
  if (previous === null || now === null) return true;
  if (sameProperty(change.setting, now, previous)) return true;
  const dflt = PROPERTY_DEFAULT[change.setting];
  return dflt !== undefined && sameProperty(change.setting, now, dflt);
}

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

/** The cgroup file systemd writes a property into, where isolate checks it is in force. */
const KERNEL_FILE: Record<string, string> = {
  AllowedCPUs: 'cpuset.cpus',
  AllowedMemoryNodes: 'cpuset.mems',
};

/** Unit properties (irqbalance's ban aside, which is a drop-in's): read, set, in force, put back. */
export class UnitProperties {
  constructor(
    private readonly units: Units,
    private readonly io: IoEntries,
    private readonly staged: StagedUndos,
  ) {}

  async read(change: Change): Promise<string | null> {
    const props = await this.units.show(change.target, propertyOf(change.setting));
    this.units.remember(change.target, props);
    return liveValue(props, change);
  }

  /**
   * The live value of each change (null where its unit is not loaded) from one `systemctl show` for
   * all their units: a process and a D-Bus round trip per unit otherwise, and pre-flight and a
   * rollback read a dozen or more. One call per change when the answer is not one block per unit.
   */
  async readMany(changes: readonly Change[]): Promise<(string | null)[]> {
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
    for (const [u, b] of byUnit) this.units.remember(u, b);
    return changes.map((c) => liveValue(byUnit.get(c.target), c));
  }

  satisfied(change: Change, live: string | null): boolean {
    if (isIoProperty(change.setting)) return sameIoEntry(change.setting, live, change.to);
    return sameProperty(change.setting, live, change.to);
  }

  /** `systemctl set-property --runtime`, read back, then waited for until it is in force. */
  async apply(change: Change): Promise<{ skipped?: string }> {
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
    if (isIoProperty(change.setting)) return this.io.notInForce(change, live);
    const file = KERNEL_FILE[change.setting];
    if (file === undefined || live === null || cgroupCpuList(live) === '') return null;
    let cg = this.units.cgroupSeen(change.target);
    if (cg === undefined) {
      const [props] = parseShow(
        await systemctl(['show', '-p', 'ControlGroup', '-p', 'LoadState', '--', change.target]),
      );
      if (props?.LoadState !== 'loaded') return null;
      cg = props.ControlGroup ?? '';
    }
    if (!cg.startsWith('/') || cg.split('/').includes('..')) return null;
    const dir = cgroupDir(this.units.root, cg);
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
  async applyActive(change: Change): Promise<{ skipped?: string }> {
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

  /** An anchor slice that was not active before is stopped. */
  async undoActive(change: Change, previous: string | null): Promise<UndoResult> {
    // An anchor that was not active before is stopped; its runtime AllowedCPUs= drop-in goes with
    // the other properties' (staged). Nothing runs in it, so nothing is stopped with it.
    if (previous !== 'active' && isAnchorSlice(change.target)) await systemctl(['stop', '--', change.target]);
    return {};
  }

  /** A property back to its value before: set again, or (unset before) its runtime drop-in removed, staged. */
  async undo(change: Change, previous: string | null): Promise<UndoResult> {
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
      rmSync(this.units.runtimeDropIn(change.target, change.setting), { force: true });
      this.staged.push({ change, previous });
      return { pending: true };
    }
    await systemctl(['set-property', '--runtime', '--', change.target, `${change.setting}=${previous}`]);
    return {};
  }
}
