// What an apply, a rollback or a recovery reports: the exit codes, each step's outcome, and the
// error an apply that failed throws (saying whether its undo completed).
import { UserError } from '../model/errors.js';
import type { Change } from '../model/plan.js';
import type { Journal } from './journal.js';

/** Exit codes of apply/rollback (0 = done). */
export const EXIT = {
  /** Refused before any write: bad input, pre-flight check, lock held. */
  refused: 1,
  /** A step failed; every write made was undone. */
  rolledBack: 2,
  /** A step failed and the undo did not complete: the host is half-applied; run `isolate rollback`. */
  rollbackIncomplete: 3,
} as const;

export interface StepReport {
  seq: number;
  change: Change;
  previous: string | null;
  status: 'applied' | 'unchanged' | 'skipped';
  note?: string;
}

export interface RecoveryReport {
  journalId: string;
  undone: number;
  notes: string[];
  /** Every entry was undone. */
  clean: boolean;
}

export interface ApplyResult {
  changed: number;
  steps: StepReport[];
  journalId?: string;
  recovered?: RecoveryReport;
}

/** An apply that failed; `exitCode` tells whether the undo completed. */
export class ApplyFailedError extends UserError {
  override name = 'ApplyFailedError';
  constructor(
    message: string,
    exitCode: number,
    readonly steps: StepReport[],
    readonly undoNotes: string[],
  ) {
    super(message, exitCode);
  }
}

export function incompleteRecovery(j: Journal, r: RecoveryReport): ApplyFailedError {
  return new ApplyFailedError(
    `an interrupted apply (journal ${j.id}) could not be fully undone: ${r.notes.join('; ')}; fix the cause and run "isolate rollback"`,
    EXIT.rollbackIncomplete,
    [],
    r.notes,
  );
}
