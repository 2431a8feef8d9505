// The undo machinery: which journal entries are still to undo and in what order, and undoing them
// one by one (staged undos committed together), each step persisted so a crash resumes the undo.
import { describeChange } from '../model/describe.js';
import type { LogFn } from '../model/log.js';
import type { ChangeExecutor, Executors, UndoContext } from './executor.js';
import { rebootSkipReason, readBootId } from './identity.js';
import { type Journal, type JournalEntry, type JournalState, writeJournal } from './journal.js';
import type { RecoveryReport } from './outcome.js';
import { changeFields, executorOf } from './routing.js';

/** Whether an interrupted apply/rollback left work to finish. */
export function needsRecovery(j: Pick<Journal, 'state'> | null): boolean {
  return stateNeedsRecovery(j?.state ?? null);
}

/** Whether a journal in this state (null: none) was left by an interrupted run. */
export function stateNeedsRecovery(state: JournalState | null): boolean {
  return state === 'applying' || state === 'rolling-back' || state === 'rollback-failed';
}

/**
 * The entries still to undo, in the order undo takes them: reverse order, except what must wait for
 * everything else (a controller disabled at the root while systemd's slices still use it fails, so
 * `last` comes after every staged commit). The journal of several applies folded together (agent
 * corrections) puts such an entry anywhere, so its place in the journal cannot be relied on.
 */
export function undoOrder(
  entries: readonly JournalEntry[],
  execs: Executors,
): { first: JournalEntry[]; last: JournalEntry[] } {
  const open = [...entries].reverse().filter((e) => e.status !== 'undone' && e.status !== 'skipped');
  const isLast = (e: JournalEntry) => execs[e.change.backend]?.undoLast?.(e.change) === true;
  return { first: open.filter((e) => !isLast(e)), last: open.filter(isLast) };
}

/**
 * Undo a journal's entries in reverse order, persisting progress after each so a crash during
 * the undo resumes where it stopped. Sets `state` to rolled-back or rollback-failed.
 *
 * A backend may stage undos (`pending`) and make them take effect at once (`commitUndo`, e.g. one
 * systemd daemon-reload for every removed drop-in), after every other entry is undone. A staged entry
 * is marked undone only after its commit, so a crash between staging and commit leaves it `done` in
 * the journal and the next rollback stages it again (idempotently) and commits. Committing last is
 * sound because a backend stages only undos no other backend's undo depends on (ChangeExecutor.undo).
 */
export async function undoJournal(
  root: string,
  j: Journal,
  execs: Executors,
  log: LogFn,
): Promise<RecoveryReport> {
  j.state = 'rolling-back';
  await writeJournal(root, j);
  const run = new JournalUndo(root, j, execs, log);
  const { first, last } = undoOrder(j.entries, execs);
  for (const e of first) await run.undoOne(e);
  await run.commitStaged();
  for (const e of last) await run.undoOne(e);
  await run.commitStaged();
  j.state = run.failed ? 'rollback-failed' : 'rolled-back';
  await writeJournal(root, j);
  return { journalId: j.id, undone: run.undone, notes: run.notes, clean: !run.failed };
}

/** One undo of a journal: its count, its notes, whether any entry failed, and the undos staged. */
class JournalUndo {
  readonly notes: string[];
  undone = 0;
  failed = false;
  private readonly ctx: UndoContext;
  private readonly boot: string;
  private readonly staged = new Map<ChangeExecutor, { e: JournalEntry; note?: string }[]>();

  constructor(
    private readonly root: string,
    private readonly j: Journal,
    private readonly execs: Executors,
    private readonly log: LogFn,
  ) {
    this.ctx = { entries: j.entries };
    this.notes = [...(j.caveats ?? [])];
    this.boot = readBootId(root);
  }

  private markUndone(e: JournalEntry, note: string | undefined): void {
    // A pending entry's write may never have happened; only completed writes are counted.
    if (e.status === 'done') this.undone++;
    e.status = 'undone';
    if (note) {
      e.note = note;
      this.notes.push(note);
    }
    this.log('info', 'step undone', { step: e.seq, ...changeFields(e.change), restored: e.previous, note });
  }

  async undoOne(e: JournalEntry): Promise<void> {
    // After a reboot a PID/TID or MAJ:MIN may name another object: such an entry is skipped, said.
    const skip = rebootSkipReason(
      this.root,
      e.change,
      { boot: e.boot ?? this.j.boot, identity: e.identity },
      this.boot,
    );
    if (skip) {
      e.status = 'skipped';
      e.note = skip;
      this.notes.push(skip);
      this.log('warn', 'undo skipped', { step: e.seq, ...changeFields(e.change), reason: skip });
      await writeJournal(this.root, this.j);
      return;
    }
    try {
      const exec = executorOf(this.execs, e.change);
      const r = await exec.undo(e.change, e.previous, this.ctx);
      if (r.pending && exec.commitUndo) {
        this.staged.set(exec, [...(this.staged.get(exec) ?? []), { e, note: r.note }]);
        return;
      }
      this.markUndone(e, r.note);
    } catch (err) {
      this.failed = true;
      const why = err instanceof Error ? err.message : String(err);
      this.notes.push(`undo of ${describeChange(e.change)} failed: ${why}`);
      this.log('error', 'undo failed', { step: e.seq, ...changeFields(e.change), error: why });
    }
    await writeJournal(this.root, this.j);
  }

  async commitStaged(): Promise<void> {
    for (const [exec, batch] of this.staged) {
      this.staged.delete(exec);
      try {
        const kept = (await exec.commitUndo!()) ?? [];
        for (const s of batch) this.markUndone(s.e, s.note);
        for (const n of kept) {
          this.notes.push(n);
          this.log('info', 'undo note', { note: n });
        }
      } catch (err) {
        this.failed = true;
        const why = err instanceof Error ? err.message : String(err);
        this.notes.push(`undo of ${batch.map((s) => describeChange(s.e.change)).join(', ')} failed: ${why}`);
        this.log('error', 'undo failed', { steps: batch.map((s) => s.e.seq), error: why });
      }
      await writeJournal(this.root, this.j);
    }
  }
}
