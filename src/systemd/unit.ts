// What every part of the systemd backend shares (properties, drop-ins, io entries, the rollback
// commit): where a unit's cgroup is (one cache of each unit's ControlGroup), where
// `set-property --runtime` writes, the undos staged until the one daemon-reload, and how long apply
// waits for systemd to put a value in force.
import path from 'node:path';
import type { Change } from '../model/plan.js';
import { isDirLiveSync } from '../sys/read.js';
import { parseShow, systemctl } from './systemctl.js';

export const cgroupDir = (root: string, cg: string) => path.join(root, 'sys/fs/cgroup', cg);

export const errCodeOf = (err: unknown) => (err as NodeJS.ErrnoException).code ?? String(err);

/** How long apply waits for systemd to write a property into the cgroup (it answers first). */
export const IN_FORCE_TRIES = 20;
export const IN_FORCE_WAIT_MS = 100;

/** isolate's drop-ins are a few short lines (sliceDropInText, jvmDropInText); anything far larger at their names is not isolate's. */
export const DROP_IN_MAX_BYTES = 64 * 1024;

/** Where `set-property --runtime` writes: systemd's own naming (50-<Property>.conf). */
export function runtimeDropIn(unit: string, property: string): string {
  return path.join('/run/systemd/system.control', `${unit}.d`, `50-${property}.conf`);
}

/** A change's live value, one at a time or many at once (what rollback reads back through). */
export interface UnitReader {
  read(change: Change): Promise<string | null>;
  readMany(changes: readonly Change[]): Promise<(string | null)[]>;
}

/** An undo whose drop-in is removed but which systemd sees only after the next daemon-reload. */
export interface StagedUndo {
  change: Change;
  previous: string | null;
}

/** Undos whose drop-in is removed but which systemd sees only after the next daemon-reload. */
export class StagedUndos {
  private staged: StagedUndo[] = [];

  push(undo: StagedUndo): void {
    this.staged.push(undo);
  }

  /** Every undo staged since the last take, and none left staged. */
  take(): StagedUndo[] {
    const batch = this.staged;
    this.staged = [];
    return batch;
  }
}

/** The units as systemd shows them, with each unit's ControlGroup as the last read saw it. */
export class Units {
  constructor(readonly root: string) {}

  /** Each unit's ControlGroup as the last read saw it (notInForce's cgroup, without another show). */
  private readonly cgroupOf = new Map<string, string>();

  /** One property of a unit, with what says whether it is loaded and where its cgroup is. */
  async show(unit: string, property: string): Promise<Record<string, string> | undefined> {
    const [props] = parseShow(
      await systemctl(['show', '-p', property, '-p', 'LoadState', '-p', 'ControlGroup', '--', unit]),
    );
    return props;
  }

  remember(unit: string, props: Record<string, string> | undefined): void {
    if (props?.LoadState === 'loaded' && props.ControlGroup !== undefined)
      this.cgroupOf.set(unit, props.ControlGroup);
    else this.cgroupOf.delete(unit);
  }

  /** A runtime drop-in of `set-property --runtime`, under --root (which is / whenever systemd is asked). */
  runtimeDropIn(unit: string, property: string): string {
    return path.join(this.root, runtimeDropIn(unit, property));
  }

  /** The unit's ControlGroup as the last read saw it; undefined when none has. */
  cgroupSeen(unit: string): string | undefined {
    return this.cgroupOf.get(unit);
  }

  /** The unit's cgroup directory (ControlGroup), or null when it has none (not running) or it is unusable. */
  async cgroupDirOf(unit: string): Promise<string | null> {
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
}
