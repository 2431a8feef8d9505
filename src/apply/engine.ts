// The apply engine: runs a plan's changes in the given order, journaling each previous value
// before writing it, reading every value back, and undoing everything on the first failure.
// Backend-neutral: every read, write and backend rule goes through an injected ChangeExecutor.
// Pre-flight is in preflight.ts, the undo in undo.ts, rollback and recovery in rollback.ts, the
// rollback preview in preview.ts and journal archiving in archive.ts; their names are re-exported
// here for the engine's callers.
import { describeChange } from '../model/describe.js';
import { type LogFn, noLog } from '../model/log.js';
import type { Change } from '../model/plan.js';
import { archiveJournal } from './archive.js';
import type { ChangeExecutor } from './executor.js';
import { StepError } from './executor.js';
import { identityOf, readBootId } from './identity.js';
import {
  type Journal,
  type JournalEntry,
  newJournal,
  readBaseline,
  readJournal,
  writeJournal,
} from './journal.js';
import { acquireLock } from './lock.js';
import type { ApplyOptions } from './options.js';
import {
  ApplyFailedError,
  type ApplyResult,
  EXIT,
  incompleteRecovery,
  type RecoveryReport,
  type StepReport,
} from './outcome.js';
import { preflight } from './preflight.js';
import { changeFields, executorOf } from './routing.js';
import { needsRecovery, undoJournal } from './undo.js';

export { JOURNAL_HISTORY } from './archive.js';
export type { ApplyOptions, EngineHooks, EngineOptions } from './options.js';
export {
  ApplyFailedError,
  type ApplyResult,
  EXIT,
  type RecoveryReport,
  type StepReport,
} from './outcome.js';
export { type LiveValue, type PreviewEntry, previewRollback, type RollbackPreview } from './preview.js';
export { type RollbackResult, recoverIfNeeded, rollbackLast } from './rollback.js';
export { needsRecovery, stateNeedsRecovery } from './undo.js';

function abortReason(signal: AbortSignal | undefined): string | null {
  if (!signal?.aborted) return null;
  const r: unknown = signal.reason;
  return typeof r === 'string' ? r : r instanceof Error && r.message ? r.message : 'abort';
}

/**
 * Apply `changes` in order. No-op when every change is already in place (no journal, no lock
 * beyond a check for an interrupted run). Throws UserError (refused) or ApplyFailedError.
 */
export async function applyChanges(opts: ApplyOptions): Promise<ApplyResult> {
  const { root, changes } = opts;
  const log = opts.log ?? noLog;

  // Fast path: a converged host with no interrupted run needs neither the lock nor a journal.
  const before = await readJournal(root);
  if (changes.length === 0 && !needsRecovery(before)) return { changed: 0, steps: [] };

  const lock = await acquireLock(root, 'apply');
  try {
    const { recovered, replan } = await recoverFirst(opts, log);
    // The plan was computed against the half-applied host: the caller must re-plan.
    if (replan) return { changed: 0, steps: [], recovered };

    const pre = await preflight(changes, opts.executors, opts);
    const todo = pre.filter((s) => s.status !== 'unchanged');
    if (todo.length === 0) return { changed: 0, steps: pre, recovered };

    // Keep the last journal for forensics; a new apply starts a new one.
    await archiveJournal(root);
    const journal = newJournal(opts.context, readBootId(root));
    await writeJournal(root, journal);
    log('info', 'apply started', { journal: journal.id, changes: changes.length, toWrite: todo.length });

    const run = new ForwardApply(opts, log, journal, pre);
    for (const [i, change] of changes.entries()) {
      if (SLOW_BACKENDS.has(change.backend)) opts.progress?.(i + 1, changes.length, change);
      await run.step(i, change);
    }
    journal.state = 'applied';
    await writeJournal(root, journal);
    const changed = run.steps.filter((s) => s.status === 'applied').length;
    log('info', 'apply finished', { journal: journal.id, changed });
    return { changed, steps: run.steps, journalId: journal.id, recovered };
  } finally {
    await lock.release();
  }
}

/**
 * Under the lock, before anything else: finish the undo an interrupted run left. `replan` when it did
 * and the changes were planned against the half-applied host (a saved plan is checked by pre-flight).
 */
async function recoverFirst(
  opts: ApplyOptions,
  log: LogFn,
): Promise<{ recovered: RecoveryReport | undefined; replan: boolean }> {
  const j0 = await readJournal(opts.root);
  // Read before any write, though only folding needs it: a baseline this isolate cannot read (a
  // newer version's, after a downgrade) must stop the apply, not be found by the rollback after.
  await readBaseline(opts.root);
  if (!needsRecovery(j0)) return { recovered: undefined, replan: false };
  log('warn', 'completing the undo of an interrupted run', { journal: j0!.id, state: j0!.state });
  const recovered = await undoJournal(opts.root, j0!, opts.executors, log);
  if (!recovered.clean) throw incompleteRecovery(j0!, recovered);
  return { recovered, replan: opts.changes.length > 0 && !opts.requireFrom };
}

/** The forward run of one apply: each change read, journaled, written; the first failure undoes all. */
/** Backends whose steps run an external tool and may take seconds each. */
const SLOW_BACKENDS: ReadonlySet<Change['backend']> = new Set(['raid']);

class ForwardApply {
  readonly steps: StepReport[] = [];
  /** Journal entries written so far (a step already in place writes none). */
  private seq = 0;

  constructor(
    private readonly opts: ApplyOptions,
    private readonly log: LogFn,
    private readonly journal: Journal,
    private readonly pre: readonly StepReport[],
  ) {}

  async step(i: number, change: Change): Promise<void> {
    const exec = executorOf(this.opts.executors, change);
    // What undo would restore. A read that fails (EACCES, a systemctl that timed out) is not
    // "absent": the step fails before its write, and the writes before it are undone.
    const live = await this.orUndo(i, change, () => exec.read(change));
    let stale: string | null = null;
    if (exec.satisfied(change, live)) {
      stale = await this.orUndo(i, change, async () => (await exec.notInForce?.(change, live)) ?? null);
      if (stale === null) return this.alreadySo(i, change, exec, live);
    }
    await this.write(i, change, exec, live, stale);
  }

  /** A change whose value is in place when its turn comes: unchanged, or made by an earlier step. */
  private async alreadySo(
    i: number,
    change: Change,
    exec: ChangeExecutor,
    live: string | null,
  ): Promise<void> {
    const before = this.pre[i]!;
    if (before.status === 'unchanged' || before.previous === null || !exec.madeByOtherSteps?.(change)) {
      this.steps.push({ seq: i + 1, change, previous: live, status: 'unchanged' });
      return;
    }
    // Not so before this apply, so an earlier step made it (systemd enables cpuset at the root
    // for a unit's AllowedCPUs=): journaled with the value from before the apply, so rollback
    // restores that too, and the host is left as it was before isolate.
    this.seq++;
    const note = 'already so when its turn came: an earlier step of this apply made it';
    this.journal.entries.push({ seq: this.seq, change, previous: before.previous, status: 'done', note });
    await writeJournal(this.opts.root, this.journal);
    this.steps.push({ seq: i + 1, change, previous: before.previous, status: 'applied', note });
    this.log('info', 'step applied', { step: i + 1, ...changeFields(change), from: before.previous, note });
  }

  /** Journal the value to restore (pending), write, then mark the entry done or skipped. */
  private async write(
    i: number,
    change: Change,
    exec: ChangeExecutor,
    live: string | null,
    stale: string | null,
  ): Promise<void> {
    const seq = ++this.seq;
    const aborted = abortReason(this.opts.signal);
    if (aborted) await this.failAndUndo(new StepError(`interrupted by ${aborted}`), i, change);
    const entry: JournalEntry = {
      seq,
      change,
      previous: live,
      status: 'pending',
      ...identityOf(this.opts.root, change),
    };
    this.journal.entries.push(entry);
    await writeJournal(this.opts.root, this.journal);
    await this.orUndo(i, change, async () => {
      await this.opts.hooks?.beforeWrite?.(seq, i + 1, change);
      const r = await exec.apply(change, live);
      await this.opts.hooks?.afterWrite?.(seq, i + 1, change);
      if (r.skipped) {
        entry.status = 'skipped';
        entry.note = r.skipped;
        this.steps.push({ seq: i + 1, change, previous: live, status: 'skipped', note: r.skipped });
        this.log('info', 'step skipped', { step: i + 1, ...changeFields(change), reason: r.skipped });
      } else {
        entry.status = 'done';
        // Dated: a JVM's pools are judged by whether it started before or after its CPUs changed.
        entry.at = new Date().toISOString();
        this.steps.push({ seq: i + 1, change, previous: live, status: 'applied' });
        this.log('info', 'step applied', {
          step: i + 1,
          ...changeFields(change),
          from: live,
          ...(stale ? { notInForce: stale } : {}),
        });
      }
    });
  }

  /** `work`'s result; if it throws, the step fails and every write made so far is undone. */
  private async orUndo<T>(i: number, change: Change, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      return this.failAndUndo(err, i, change);
    }
  }

  private async failAndUndo(err: unknown, i: number, change: Change): Promise<never> {
    const { root, changes, executors } = this.opts;
    const why = err instanceof Error ? err.message : String(err);
    const failing = `step ${i + 1}/${changes.length} (${describeChange(change)})`;
    this.journal.error = `${failing}: ${why}`;
    this.journal.state = 'rolling-back';
    await writeJournal(root, this.journal);
    this.log('error', 'step failed; rolling back', { step: i + 1, ...changeFields(change), error: why });
    const undo = await undoJournal(root, this.journal, executors, this.log);
    const clean = undo.clean;
    const undoneText = clean
      ? `rolled back ${undo.undone} change${undo.undone === 1 ? '' : 's'}; the host is as before`
      : `ROLLBACK INCOMPLETE (${undo.notes.join('; ')}); run "isolate rollback" after fixing the cause`;
    const notes = clean && undo.notes.length > 0 ? ` (note: ${undo.notes.join('; ')})` : '';
    throw new ApplyFailedError(
      `apply failed at ${failing}: ${why}; ${undoneText}${notes}`,
      clean ? EXIT.rolledBack : EXIT.rollbackIncomplete,
      this.steps,
      undo.notes,
    );
  }
}
