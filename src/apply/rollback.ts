// `isolate rollback` and recovery: finishing the undo of an interrupted run before anything plans
// against the host, and undoing everything isolate changed since the host was last rolled back.
import { rm } from 'node:fs/promises';
import { noLog } from '../model/log.js';
import { archiveJournal, pidAliveUnder } from './archive.js';
import { baselinePath, foldJournal, readBaseline, readJournal, writeJournal } from './journal.js';
import { acquireLock, type Lock } from './lock.js';
import type { EngineOptions } from './options.js';
import { ApplyFailedError, EXIT, incompleteRecovery, type RecoveryReport } from './outcome.js';
import { needsRecovery, undoJournal } from './undo.js';

/**
 * Finish undoing an interrupted apply/rollback (kill -9) before anything plans against the host.
 * Returns null when there was nothing to recover. Cheap when the journal is clean (no lock).
 */
export async function recoverIfNeeded(opts: EngineOptions): Promise<RecoveryReport | null> {
  if (!needsRecovery(await readJournal(opts.root))) return null;
  const log = opts.log ?? noLog;
  const lock = await acquireLock(opts.root, 'recovery');
  try {
    const j = await readJournal(opts.root);
    if (!needsRecovery(j)) return null;
    log('warn', 'completing the undo of an interrupted run', { journal: j!.id, state: j!.state });
    const r = await undoJournal(opts.root, j!, opts.executors, log);
    if (!r.clean) throw incompleteRecovery(j!, r);
    return r;
  } finally {
    await lock.release();
  }
}

export interface RollbackResult {
  journalId: string | null;
  undone: number;
  notes: string[];
  /** Nothing to do: no journal, or it was already rolled back. */
  nothing: boolean;
}

/** `isolate rollback`: undo the last apply (or finish undoing an interrupted one). */
export async function rollbackLast(opts: EngineOptions): Promise<RollbackResult> {
  const log = opts.log ?? noLog;
  let lock: Lock | undefined;
  try {
    lock = await acquireLock(opts.root, 'rollback');
    let j = await readJournal(opts.root);
    const baseline = await readBaseline(opts.root);
    if (j && needsRecovery(j) && baseline) {
      // An interrupted apply is finished first; what the earlier applies changed is undone next.
      log('warn', 'completing the undo of an interrupted run', { journal: j.id, state: j.state });
      const r = await undoJournal(opts.root, j, opts.executors, log);
      if (!r.clean) throw incompleteRecovery(j, r);
    }
    if (baseline) {
      // Everything since the host was last rolled back, as one journal: undone (and, if this run
      // is killed, recovered) like any other.
      const all = j?.state === 'applied' ? foldJournal(baseline, j, pidAliveUnder(opts.root)) : baseline;
      await archiveJournal(opts.root);
      await writeJournal(opts.root, all);
      await rm(baselinePath(opts.root), { force: true });
      j = all;
    }
    if (!j || j.state === 'rolled-back') {
      return { journalId: j?.id ?? null, undone: 0, notes: [], nothing: true };
    }
    log('info', 'rollback started', { journal: j.id, state: j.state });
    const r = await undoJournal(opts.root, j, opts.executors, log);
    if (!r.clean) {
      throw new ApplyFailedError(
        `rollback of journal ${j.id} did not complete: ${r.notes.join('; ')}; fix the cause and run "isolate rollback" again`,
        EXIT.rollbackIncomplete,
        [],
        r.notes,
      );
    }
    return { journalId: j.id, undone: r.undone, notes: r.notes, nothing: false };
  } finally {
    await lock?.release();
  }
}
