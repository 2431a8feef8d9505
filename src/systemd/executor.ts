// The systemd backend: a unit's CPUs and memory are changed through systemd (`systemctl
// set-property --runtime`, drop-ins under /run/systemd/system.control/), never by writing the
// unit's cgroup files, which systemd rewrites on every reload. Rollback removes exactly the
// drop-ins isolate created, then reloads systemd once for all of them (commitUndo).
//
// This class only routes each change to the module that does its job: unit properties
// (properties.ts), isolate's own drop-ins (drop-ins.ts: Slice=, JVM options, irqbalance's ban), one
// device's io entry (io.ts), and the rollback commit (rollback.ts); unit.ts holds what they share.
import type { ChangeExecutor, UndoResult } from '../apply/executor.js';
import { UserError } from '../model/errors.js';
import { isIoProperty, sameIoEntry } from '../model/io.js';
import { IRQBALANCE_SETTING } from '../model/irqbalance.js';
import { JVM_OPTIONS_SETTING } from '../model/jvm-options.js';
import type { Change } from '../model/plan.js';
import { DropIns } from './drop-ins.js';
import { IoEntries } from './io.js';
import { systemdRuns } from './observe.js';
import { sameProperty, UnitProperties } from './properties.js';
import { RollbackCommit } from './rollback.js';
import { StagedUndos, Units } from './unit.js';

export { ioFileMissing } from './io.js';
export { sameProperty } from './properties.js';
export { runtimeDropIn } from './unit.js';

export class SystemdExecutor implements ChangeExecutor {
  private readonly units: Units;
  private readonly io: IoEntries;
  private readonly properties: UnitProperties;
  private readonly dropIns: DropIns;
  private readonly rollback: RollbackCommit;
  /** Undos whose drop-in is removed but which systemd sees only after the next daemon-reload. */
  private readonly staged = new StagedUndos();

  constructor(readonly root: string) {
    this.units = new Units(root);
    this.io = new IoEntries(this.units);
    this.properties = new UnitProperties(this.units, this.io, this.staged);
    this.dropIns = new DropIns(root, this.properties, this.staged);
    this.rollback = new RollbackCommit(this.units, this.staged, this);
  }

  async ready(): Promise<void> {
    if (!systemdRuns(this.root)) {
      throw new UserError(
        'cannot apply: the plan changes systemd units, but systemd does not run this host (or --root is not /); plan again on the host itself',
        1,
      );
    }
  }

  async read(change: Change): Promise<string | null> {
    if (change.setting === IRQBALANCE_SETTING) return this.dropIns.readIrqbalance();
    return this.properties.read(change);
  }

  /**
   * The live value of each change, irqbalance's ban read after the units' properties (one
   * `systemctl show` for all their units: UnitProperties.readMany).
   */
  async readMany(changes: readonly Change[]): Promise<(string | null)[]> {
    if (changes.some((c) => c.setting === IRQBALANCE_SETTING)) {
      const rest = changes.filter((c) => c.setting !== IRQBALANCE_SETTING);
      const values = await this.properties.readMany(rest);
      const ours = await this.dropIns.readIrqbalance();
      return changes.map((c) => (c.setting === IRQBALANCE_SETTING ? ours : (values.shift() ?? null)));
    }
    return this.properties.readMany(changes);
  }

  satisfied(change: Change, live: string | null): boolean {
    return this.properties.satisfied(change, live);
  }

  same(change: Change, a: string | null, b: string | null): boolean {
    if (isIoProperty(change.setting)) return sameIoEntry(change.setting, a, b);
    return sameProperty(change.setting, a, b);
  }

  /** The `Slice=` drop-in of a unit, under --root (which is / whenever systemd is asked). */
  sliceDropIn(unit: string): string {
    return this.dropIns.sliceDropIn(unit);
  }

  async apply(change: Change): Promise<{ skipped?: string }> {
    if (change.setting === 'Slice') return this.dropIns.applySlice(change);
    if (change.setting === JVM_OPTIONS_SETTING) return this.dropIns.applyJvmOptions(change);
    if (change.setting === IRQBALANCE_SETTING) return this.dropIns.applyIrqbalance(change);
    if (change.setting === 'ActiveState') return this.properties.applyActive(change);
    return this.properties.apply(change);
  }

  /**
   * Whether the kernel has what systemd holds (UnitProperties.notInForce, IoEntries.notInForce), and
   * whether the running irqbalance has isolate's ban.
   */
  async notInForce(change: Change, live: string | null): Promise<string | null> {
    if (change.setting === IRQBALANCE_SETTING) return this.dropIns.irqbalanceNotInForce(live);
    return this.properties.notInForce(change, live);
  }

  /** The JVM options drop-in of a unit, under --root (which is / whenever systemd is asked). */
  jvmDropIn(unit: string): string {
    return this.dropIns.jvmDropIn(unit);
  }

  /** A runtime drop-in of `set-property --runtime`, under --root (which is / whenever systemd is asked). */
  runtimeDropIn(unit: string, property: string): string {
    return this.units.runtimeDropIn(unit, property);
  }

  async undo(change: Change, previous: string | null): Promise<UndoResult> {
    if (isIoProperty(change.setting)) return this.io.undo(change, previous);
    if (change.setting === IRQBALANCE_SETTING) return this.dropIns.undoIrqbalance(change, previous);
    if (change.setting === 'Slice' || change.setting === JVM_OPTIONS_SETTING)
      return this.dropIns.undoOwnDropIn(change, previous);
    if (change.setting === 'ActiveState') return this.properties.undoActive(change, previous);
    return this.properties.undo(change, previous);
  }

  /**
   * One daemon-reload for every drop-in removed since the last commit, then each undone property
   * read back (RollbackCommit).
   */
  async commitUndo(): Promise<string[]> {
    return this.rollback.commit();
  }
}
