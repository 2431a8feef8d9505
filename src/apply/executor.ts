// What the engine needs from a backend (cgroupfs, systemd, a RAID tool). Each backend implements
// it in its own folder; the engine knows nothing of files, units or controllers.
import type { Change, ChangeBackend } from '../model/plan.js';

/** A step failed: says which, with the errno (or tool status) and its meaning. */
export class StepError extends Error {
  override name = 'StepError';
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** Outcome of a write: `skipped` when a benign race made it a no-op (e.g. the PID exited). */
export interface WriteResult {
  skipped?: string;
}

/** A change as it stood in the journal, for backends whose undo depends on its neighbours. */
export interface UndoEntry {
  change: Change;
  previous: string | null;
}

export interface UndoContext {
  /** Every entry of the journal being undone, in apply order. */
  entries: readonly UndoEntry[];
}

/** What pre-flight knows about one change before anything is written. */
export interface PreflightStep {
  index: number;
  change: Change;
  live: string | null;
  /** Already in place. */
  done: boolean;
}

export interface PreflightOptions {
  /** The operator allowed a risky but legal change (e.g. memory.max below the current usage). */
  force: boolean;
}

/** How the engine drives one backend. Every method may throw StepError. */
export interface ChangeExecutor {
  /** The live value now, as the backend reports it (null: the target or setting does not exist). */
  read(change: Change): Promise<string | null>;
  /** read() of many changes at once, in their order (for a backend whose every read costs a process). */
  readMany?(changes: readonly Change[]): Promise<(string | null)[]>;
  /** True when the live value already is what the change wants. */
  satisfied(change: Change, live: string | null): boolean;
  /**
   * Why a value the backend holds (satisfied) is nevertheless not in force, or null when it is:
   * systemd can hold AllowedCPUs= for a unit whose cgroup file it failed to write (its parent has no
   * cpuset). The engine then makes the change again rather than taking it for done.
   */
  notInForce?(change: Change, live: string | null): Promise<string | null>;
  /** True when `a` and `b` denote the same setting value (for drift checks against a saved plan). */
  same(change: Change, a: string | null, b: string | null): boolean;
  /** Refuse (UserError) when this host cannot take this backend's changes at all. */
  ready?(): Promise<void>;
  /**
   * The backend's own refusals, before the first write of any backend: throw a UserError naming the
   * step and the fix. Gets only this backend's steps.
   */
  preflight?(steps: PreflightStep[], opts: PreflightOptions): Promise<void>;
  /** True when `change` acts on something an earlier `creator` change creates (so it cannot be read yet). */
  createdBy?(change: Change, creator: Change): boolean;
  /** Make the change, then read it back; throw when it did not take. */
  apply(change: Change, previous: string | null): Promise<WriteResult>;
  /**
   * Restore `previous`; idempotent (the write may or may not have happened before a crash).
   * `pending`: the restore is staged but takes effect only at `commitUndo()` (systemd: a removed
   * drop-in counts once systemd reloads), so the engine marks the entry undone only after that. The
   * engine commits after every other entry is undone: stage only undos that no other backend's undo
   * needs in force first (systemd's never are: a cgroup v2 cpuset or memory write is not bounded by the
   * parent's values, and a partition can always go back to member).
   */
  undo(change: Change, previous: string | null, ctx: UndoContext): Promise<UndoResult>;
  /**
   * True when undoing `change` needs every other undo in force first, staged ones included: cgroupfs
   * disabling a controller fails (EBUSY) while a cgroup below, systemd's slices too, still uses it.
   * The engine undoes such entries last, in reverse order among themselves.
   */
  undoLast?(change: Change): boolean;
  /**
   * True when an earlier step of the same apply may have made `change` on isolate's behalf (systemd
   * enabling a controller for a unit property): found so when its turn comes, it is journaled with
   * its value from before the apply, which rollback then restores.
   */
  madeByOtherSteps?(change: Change): boolean;
  /**
   * Make every pending undo since the last call take effect at once and read each back; throw
   * StepError when one did not take. Lets a backend pay a costly step (a daemon-reload) once per batch.
   * Returns notes on what could not be restored exactly and why (printed by rollback).
   */
  commitUndo?(): Promise<string[] | undefined>;
}

export interface UndoResult {
  note?: string;
  /** Staged only: in force after `commitUndo()`. */
  pending?: boolean;
}

export type Executors = Partial<Record<ChangeBackend, ChangeExecutor>>;
