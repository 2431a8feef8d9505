// What callers hand the engine: the host root, the backends' executors, the log, an abort signal,
// the crash tests' hooks, and for an apply its changes and how strictly to take them.
import type { LogFn } from '../model/log.js';
import type { Change } from '../model/plan.js';
import type { Executors } from './executor.js';

/**
 * Points where a test may stop the engine: the real-kernel crash tests kill the process or pause it
 * for a sabotage at an exact step. Production callers pass none.
 */
export interface EngineHooks {
  /** Before the write of journal entry `seq` (1-based count of writes, not of plan steps). */
  beforeWrite?(seq: number, step: number, change: Change): Promise<void> | void;
  /** After the write of journal entry `seq`. */
  afterWrite?(seq: number, step: number, change: Change): Promise<void> | void;
}

export interface EngineOptions {
  /** Host root: the journal lives in `<root>/var/lib/isolate`, the lock in `<root>/run`. */
  root: string;
  executors: Executors;
  log?: LogFn;
  /** Aborting finishes the current write, then rolls back every write made (never half-applied). */
  signal?: AbortSignal;
  hooks?: EngineHooks;
  /**
   * Told before each step that may take seconds (a RAID change runs the vendor's tool, up to its
   * timeout, to read and to write), so a person at a terminal sees what it waits for.
   */
  progress?: (step: number, total: number, change: Change) => void;
}

export interface ApplyOptions extends EngineOptions {
  changes: Change[];
  /** Allow risky but legal changes (memory.max below the current usage). */
  force?: boolean;
  /** Applying a saved plan: refuse when a live value is neither the plan's `from` nor its `to`. */
  requireFrom?: boolean;
  /** Saved in the journal for `rollback` and recovery (the backends' options). */
  context?: Record<string, unknown>;
}
