// The systemd backend: a unit's CPUs and memory are changed through systemd (`systemctl
// set-property --runtime`, drop-ins under /run/systemd/system.control/), never by writing the
// unit's cgroup files, which systemd rewrites on every reload. Rollback removes exactly the
// drop-ins isolate created, then reloads systemd once for all of them (commitUndo).
import { existsSync, rmSync } from 'node:fs';
import { mkdir, readFile, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { type ChangeExecutor, StepError, type UndoResult } from '../apply/executor.js';
import { CpuSet } from '../model/cpuset.js';
import { UserError } from '../model/errors.js';
import type { Change } from '../model/plan.js';
import { cgroupCpuList, sliceDropInPath, sliceDropInText } from '../model/systemd.js';
import { writeFileAtomic } from '../sys/write.js';
import { systemdRuns } from './observe.js';
import { parseShow, systemctl } from './systemctl.js';

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

  async read(change: Change): Promise<string | null> {
    const [props] = parseShow(
      await systemctl(['show', '-p', change.setting, '-p', 'LoadState', '--', change.target]),
    );
    if (props?.LoadState !== 'loaded') return null;
    return props[change.setting] ?? null;
  }

  satisfied(change: Change, live: string | null): boolean {
    return sameProperty(change.setting, live, change.to);
  }

  same(change: Change, a: string | null, b: string | null): boolean {
    return sameProperty(change.setting, a, b);
  }

  /** The `Slice=` drop-in of a unit, under --root (which is / whenever systemd is asked). */
  sliceDropIn(unit: string): string {
    return path.join(this.root, sliceDropInPath(unit));
  }

  async apply(change: Change): Promise<{ skipped?: string }> {
    if (change.setting === 'Slice') return this.applySlice(change);
    await systemctl(['set-property', '--runtime', '--', change.target, `${change.setting}=${change.to}`]);
    const now = await this.read(change);
    if (!this.satisfied(change, now)) {
      throw new StepError(
        `systemctl set-property ${change.target} ${change.setting}=${change.to}: systemd reports "${now ?? '(unit not loaded)'}" afterwards`,
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

  /** A runtime drop-in of `set-property --runtime`, under --root (which is / whenever systemd is asked). */
  runtimeDropIn(unit: string, property: string): string {
    return path.join(this.root, runtimeDropIn(unit, property));
  }

  /** Undos whose drop-in is removed but which systemd sees only after the next daemon-reload. */
  private staged: { change: Change; previous: string | null }[] = [];

  /**
   * Removes exactly isolate's Slice= drop-in (recognised by its header), and its directory if it is
   * left empty. Staged: in force at commitUndo's daemon-reload. An absent file is staged as well: a
   * crash between the removal and the reload leaves exactly that, and the reload is still owed.
   */
  private async undoSlice(change: Change, previous: string | null): Promise<UndoResult> {
    const file = this.sliceDropIn(change.target);
    const text = await readFile(file, 'utf8').catch(() => null);
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

  async undo(change: Change, previous: string | null): Promise<UndoResult> {
    if (change.setting === 'Slice') return this.undoSlice(change, previous);
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
  async commitUndo(): Promise<void> {
    const batch = this.staged;
    this.staged = [];
    if (batch.length === 0) return;
    await systemctl(['daemon-reload']);
    const wrong: string[] = [];
    for (const { change, previous } of batch) {
      const after = await this.read(change);
      if (this.restored(change, previous, after)) continue;
      if (change.setting === 'Slice') {
        wrong.push(`${change.target} Slice=${after} (was ${previous})`);
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
