// The apply engine: runs a plan's changes in the given order, journaling each previous value
// before writing it, reading every value back, and undoing everything on the first failure.
// Backend-neutral: every read, write and backend rule goes through an injected ChangeExecutor.
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, unlink } from 'node:fs/promises';
import path from 'node:path';
import { describeChange } from '../model/describe.js';
import { UserError } from '../model/errors.js';
import { type LogFn, noLog } from '../model/log.js';
import type { Change } from '../model/plan.js';
import type { ChangeExecutor, Executors, PreflightStep } from './executor.js';
import { StepError } from './executor.js';
import {
  baselinePath,
  foldJournal,
  type Journal,
  type JournalEntry,
  type JournalState,
  journalDir,
  journalPath,
  newJournal,
  readBaseline,
  readJournal,
  writeBaseline,
  writeJournal,
} from './journal.js';
import { identityOf, readBootId, rebootSkipReason } from './identity.js';
import { acquireLock, type Lock } from './lock.js';

/** Exit codes of apply/rollback (0 = done). */
export const EXIT = {
  /** Refused before any write: bad input, pre-flight check, lock held. */
  refused: 1,
  /** A step failed; every write made was undone. */
  rolledBack: 2,
  /** A step failed and the undo did not complete: the host is half-applied; run `isolate rollback`. */
  rollbackIncomplete: 3,
} as const;

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

/** Backends whose steps run an external tool and may take seconds each. */
const SLOW_BACKENDS: ReadonlySet<Change['backend']> = new Set(['raid']);

export interface ApplyOptions extends EngineOptions {
  changes: Change[];
  /** Allow risky but legal changes (memory.max below the current usage). */
  force?: boolean;
  /** Applying a saved plan: refuse when a live value is neither the plan's `from` nor its `to`. */
  requireFrom?: boolean;
  /** Saved in the journal for `rollback` and recovery (the backends' options). */
  context?: Record<string, unknown>;
}

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

function executorOf(execs: Executors, c: Change): ChangeExecutor {
  const e = execs[c.backend];
  if (!e) {
    throw new UserError(
      `${describeChange(c)}: no ${c.backend} backend is available here; this change cannot be applied on this host`,
      EXIT.refused,
    );
  }
  return e;
}

/** Whether an interrupted apply/rollback left work to finish. */
export function needsRecovery(j: Pick<Journal, 'state'> | null): boolean {
  return stateNeedsRecovery(j?.state ?? null);
}

/** Whether a journal in this state (null: none) was left by an interrupted run. */
export function stateNeedsRecovery(state: JournalState | null): boolean {
  return state === 'applying' || state === 'rolling-back' || state === 'rollback-failed';
}

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
  const execs = opts.executors;

  // Fast path: a converged host with no interrupted run needs neither the lock nor a journal.
  const before = await readJournal(root);
  if (changes.length === 0 && !needsRecovery(before)) return { changed: 0, steps: [] };

  const lock = await acquireLock(root, 'apply');
  try {
    let recovered: RecoveryReport | undefined;
    const j0 = await readJournal(root);
    // Read before any write, though only folding needs it: a baseline this isolate cannot read (a
    // newer version's, after a downgrade) must stop the apply, not be found by the rollback after.
    await readBaseline(root);
    if (needsRecovery(j0)) {
      log('warn', 'completing the undo of an interrupted run', { journal: j0!.id, state: j0!.state });
      recovered = await undoJournal(root, j0!, execs, log);
      if (!recovered.clean) throw incompleteRecovery(j0!, recovered);
      // The plan was computed against the half-applied host: the caller must re-plan.
      if (changes.length > 0 && !opts.requireFrom) {
        return { changed: 0, steps: [], recovered };
      }
    }

    const pre = await preflight(changes, execs, opts);
    const todo = pre.filter((s) => s.status !== 'unchanged');
    if (todo.length === 0) return { changed: 0, steps: pre, recovered };

    // Keep the last journal for forensics; a new apply starts a new one.
    await archiveJournal(root);
    const journal = newJournal(opts.context, readBootId(root));
    await writeJournal(root, journal);
    log('info', 'apply started', { journal: journal.id, changes: changes.length, toWrite: todo.length });

    const steps: StepReport[] = [];
    const failAndUndo = async (err: unknown, i: number, change: Change): Promise<never> => {
      const why = err instanceof Error ? err.message : String(err);
      const failing = `step ${i + 1}/${changes.length} (${describeChange(change)})`;
      journal.error = `${failing}: ${why}`;
      journal.state = 'rolling-back';
      await writeJournal(root, journal);
      log('error', 'step failed; rolling back', { step: i + 1, ...changeFields(change), error: why });
      const undo = await undoJournal(root, journal, execs, log);
      const clean = undo.clean;
      const undoneText = clean
        ? `rolled back ${undo.undone} change${undo.undone === 1 ? '' : 's'}; the host is as before`
        : `ROLLBACK INCOMPLETE (${undo.notes.join('; ')}); run "isolate rollback" after fixing the cause`;
      const notes = clean && undo.notes.length > 0 ? ` (note: ${undo.notes.join('; ')})` : '';
      throw new ApplyFailedError(
        `apply failed at ${failing}: ${why}; ${undoneText}${notes}`,
        clean ? EXIT.rolledBack : EXIT.rollbackIncomplete,
        steps,
        undo.notes,
      );
    };

    let seq = 0;
    for (const [i, change] of changes.entries()) {
      const exec = executorOf(execs, change);
      if (SLOW_BACKENDS.has(change.backend)) opts.progress?.(i + 1, changes.length, change);
      // What undo would restore. A read that fails (EACCES, a systemctl that timed out) is not
      // "absent": the step fails before its write, and the writes before it are undone.
      let live: string | null = null;
      try {
        live = await exec.read(change);
      } catch (err) {
        await failAndUndo(err, i, change);
      }
      let stale: string | null = null;
      if (exec.satisfied(change, live)) {
        try {
          stale = (await exec.notInForce?.(change, live)) ?? null;
        } catch (err) {
          await failAndUndo(err, i, change);
        }
        if (stale === null) {
          const before = pre[i]!;
          if (before.status === 'unchanged' || before.previous === null || !exec.madeByOtherSteps?.(change)) {
            steps.push({ seq: i + 1, change, previous: live, status: 'unchanged' });
            continue;
          }
          // Not so before this apply, so an earlier step made it (systemd enables cpuset at the root
          // for a unit's AllowedCPUs=): journaled with the value from before the apply, so rollback
          // restores that too, and the host is left as it was before isolate.
          seq++;
          const note = 'already so when its turn came: an earlier step of this apply made it';
          journal.entries.push({ seq, change, previous: before.previous, status: 'done', note });
          await writeJournal(root, journal);
          steps.push({ seq: i + 1, change, previous: before.previous, status: 'applied', note });
          log('info', 'step applied', { step: i + 1, ...changeFields(change), from: before.previous, note });
          continue;
        }
      }
      seq++;
      const aborted = abortReason(opts.signal);
      if (aborted) await failAndUndo(new StepError(`interrupted by ${aborted}`), i, change);
      const entry: JournalEntry = {
        seq,
        change,
        previous: live,
        status: 'pending',
        ...identityOf(root, change),
      };
      journal.entries.push(entry);
      await writeJournal(root, journal);
      try {
        await opts.hooks?.beforeWrite?.(seq, i + 1, change);
        const r = await exec.apply(change, live);
        await opts.hooks?.afterWrite?.(seq, i + 1, change);
        if (r.skipped) {
          entry.status = 'skipped';
          entry.note = r.skipped;
          steps.push({ seq: i + 1, change, previous: live, status: 'skipped', note: r.skipped });
          log('info', 'step skipped', { step: i + 1, ...changeFields(change), reason: r.skipped });
        } else {
          entry.status = 'done';
          // Dated: a JVM's pools are judged by whether it started before or after its CPUs changed.
          entry.at = new Date().toISOString();
          steps.push({ seq: i + 1, change, previous: live, status: 'applied' });
          log('info', 'step applied', {
            step: i + 1,
            ...changeFields(change),
            from: live,
            ...(stale ? { notInForce: stale } : {}),
          });
        }
      } catch (err) {
        await failAndUndo(err, i, change);
      }
    }
    journal.state = 'applied';
    await writeJournal(root, journal);
    const changed = steps.filter((s) => s.status === 'applied').length;
    log('info', 'apply finished', { journal: journal.id, changed });
    return { changed, steps, journalId: journal.id, recovered };
  } finally {
    await lock.release();
  }
}

/** The fields every log line about a change carries, so journald can filter on them. */
function changeFields(c: Change): Record<string, unknown> {
  return {
    backend: c.backend,
    target: c.target,
    setting: c.setting,
    to: c.to,
    workload: c.workload,
    reason: c.note,
  };
}

/**
 * The live value of each change: with the backend's readMany where it has one (one process for a
 * dozen systemd units), one by one otherwise. A failed read refuses the apply before any write: an
 * unknown value is never taken for an absent one.
 */
async function readAll(changes: readonly Change[], execs: Executors): Promise<Map<Change, string | null>> {
  const byExec = new Map<ChangeExecutor, Change[]>();
  for (const c of changes) {
    const exec = executorOf(execs, c);
    const list = byExec.get(exec);
    if (list) list.push(c);
    else byExec.set(exec, [c]);
  }
  const out = new Map<Change, string | null>();
  const unreadable = (c: Change, err: unknown) =>
    new UserError(
      `cannot read ${describeChange(c)} before changing it (${err instanceof Error ? err.message : String(err)}); nothing was changed`,
      EXIT.refused,
    );
  for (const [exec, list] of byExec) {
    const values = exec.readMany
      ? await exec.readMany(list).catch((err: unknown) => {
          throw unreadable(list[0]!, err);
        })
      : null;
    for (const [i, c] of list.entries()) {
      try {
        out.set(c, values ? (values[i] ?? null) : await exec.read(c));
      } catch (err) {
        throw unreadable(c, err);
      }
    }
  }
  return out;
}

/** Journals kept for forensics; the agent applies after every drift, so history must not grow forever. */
export const JOURNAL_HISTORY = 50;

/** A PID under `root`'s /proc still exists (its process moves are still worth undoing). */
function pidAliveUnder(root: string): (pid: number) => boolean {
  return (pid) => existsSync(path.join(root, 'proc', String(pid)));
}

async function archiveJournal(root: string): Promise<void> {
  const j = await readJournal(root);
  if (!j) return;
  // What it changed stays undoable by `isolate rollback` after this apply replaces it.
  if (j.state === 'applied') {
    await writeBaseline(root, foldJournal(await readBaseline(root), j, pidAliveUnder(root)));
  }
  const dir = path.join(journalDir(root), 'history');
  await mkdir(dir, { recursive: true });
  await rename(journalPath(root), path.join(dir, `journal-${j.id}.json`)).catch(() => {});
  // Ids start with a UTC timestamp, so name order is age order.
  const old = (await readdir(dir)).filter((f) => /^journal-.*\.json$/.test(f)).sort();
  for (const f of old.slice(0, Math.max(0, old.length - JOURNAL_HISTORY)))
    await unlink(path.join(dir, f)).catch(() => {});
}

/**
 * Checks made before the first write: every backend is present and ready, a saved plan still
 * matches the host, then each backend's own refusals. Returns which changes are already in place.
 */
async function preflight(changes: Change[], execs: Executors, opts: ApplyOptions): Promise<StepReport[]> {
  const backends = [...new Set(changes.map((c) => c.backend))];
  for (const b of backends) await executorOf(execs, changes.find((c) => c.backend === b)!).ready?.();

  // Settings of something an earlier step creates cannot be read (or drift) yet.
  const underNew: boolean[] = [];
  const earlier: Change[] = [];
  for (const c of changes) {
    const exec = executorOf(execs, c);
    underNew.push(
      exec.createdBy ? earlier.some((e) => e.backend === c.backend && exec.createdBy!(c, e)) : false,
    );
    earlier.push(c);
  }
  const liveOf = await readAll(
    changes.filter((_, i) => !underNew[i]),
    execs,
  );

  const perBackend = new Map<ChangeExecutor, PreflightStep[]>();
  const out: StepReport[] = [];
  for (const [i, c] of changes.entries()) {
    const exec = executorOf(execs, c);
    if (underNew[i]) {
      out.push({ seq: i + 1, change: c, previous: null, status: 'applied' });
      continue;
    }
    const live = liveOf.get(c) ?? null;
    const done =
      exec.satisfied(c, live) &&
      (await Promise.resolve(exec.notInForce?.(c, live) ?? null).catch((err: unknown) => {
        throw new UserError(
          `cannot read ${describeChange(c)} before changing it (${err instanceof Error ? err.message : String(err)}); nothing was changed`,
          EXIT.refused,
        );
      })) === null;
    if (opts.requireFrom && !done && !exec.same(c, live, c.from)) {
      if (!(c.setting === 'cgroup.procs' && live === null)) {
        throw new UserError(
          `the host changed since the plan was saved: ${describeChange(c)} expected "${c.from ?? '(absent)'}" now, found "${live ?? '(absent)'}"; run "isolate plan" again`,
          EXIT.refused,
        );
      }
    }
    const list = perBackend.get(exec) ?? [];
    list.push({ index: i, change: c, live, done });
    perBackend.set(exec, list);
    out.push({ seq: i + 1, change: c, previous: live, status: done ? 'unchanged' : 'applied' });
  }
  for (const [exec, steps] of perBackend) await exec.preflight?.(steps, { force: !!opts.force });
  return out;
}

/**
 * The entries still to undo, in the order undo takes them: reverse order, except what must wait for
 * everything else (a controller disabled at the root while systemd's slices still use it fails, so
 * `last` comes after every staged commit). The journal of several applies folded together (agent
 * corrections) puts such an entry anywhere, so its place in the journal cannot be relied on.
 */
function undoOrder(
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
async function undoJournal(root: string, j: Journal, execs: Executors, log: LogFn): Promise<RecoveryReport> {
  j.state = 'rolling-back';
  await writeJournal(root, j);
  const ctx = { entries: j.entries };
  const notes: string[] = [...(j.caveats ?? [])];
  const boot = readBootId(root);
  let undone = 0;
  let failed = false;
  const staged = new Map<ChangeExecutor, { e: JournalEntry; note?: string }[]>();

  const markUndone = (e: JournalEntry, note: string | undefined) => {
    // A pending entry's write may never have happened; only completed writes are counted.
    if (e.status === 'done') undone++;
    e.status = 'undone';
    if (note) {
      e.note = note;
      notes.push(note);
    }
    log('info', 'step undone', { step: e.seq, ...changeFields(e.change), restored: e.previous, note });
  };

  const undoOne = async (e: JournalEntry) => {
    // After a reboot a PID/TID or MAJ:MIN may name another object: such an entry is skipped, said.
    const skip = rebootSkipReason(root, e.change, { boot: e.boot ?? j.boot, identity: e.identity }, boot);
    if (skip) {
      e.status = 'skipped';
      e.note = skip;
      notes.push(skip);
      log('warn', 'undo skipped', { step: e.seq, ...changeFields(e.change), reason: skip });
      await writeJournal(root, j);
      return;
    }
    try {
      const exec = executorOf(execs, e.change);
      const r = await exec.undo(e.change, e.previous, ctx);
      if (r.pending && exec.commitUndo) {
        staged.set(exec, [...(staged.get(exec) ?? []), { e, note: r.note }]);
        return;
      }
      markUndone(e, r.note);
    } catch (err) {
      failed = true;
      const why = err instanceof Error ? err.message : String(err);
      notes.push(`undo of ${describeChange(e.change)} failed: ${why}`);
      log('error', 'undo failed', { step: e.seq, ...changeFields(e.change), error: why });
    }
    await writeJournal(root, j);
  };
  const commitStaged = async () => {
    for (const [exec, batch] of staged) {
      staged.delete(exec);
      try {
        const kept = (await exec.commitUndo!()) ?? [];
        for (const s of batch) markUndone(s.e, s.note);
        for (const n of kept) {
          notes.push(n);
          log('info', 'undo note', { note: n });
        }
      } catch (err) {
        failed = true;
        const why = err instanceof Error ? err.message : String(err);
        notes.push(`undo of ${batch.map((s) => describeChange(s.e.change)).join(', ')} failed: ${why}`);
        log('error', 'undo failed', { steps: batch.map((s) => s.e.seq), error: why });
      }
      await writeJournal(root, j);
    }
  };

  const { first, last } = undoOrder(j.entries, execs);
  for (const e of first) await undoOne(e);
  await commitStaged();
  for (const e of last) await undoOne(e);
  await commitStaged();
  j.state = failed ? 'rollback-failed' : 'rolled-back';
  await writeJournal(root, j);
  return { journalId: j.id, undone, notes, clean: !failed };
}

function incompleteRecovery(j: Journal, r: RecoveryReport): ApplyFailedError {
  return new ApplyFailedError(
    `an interrupted apply (journal ${j.id}) could not be fully undone: ${r.notes.join('; ')}; fix the cause and run "isolate rollback"`,
    EXIT.rollbackIncomplete,
    [],
    r.notes,
  );
}

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

/** What a rollback would overwrite: the value now, read through the entry's backend. */
export interface LiveValue {
  /** The value now (null: absent); undefined when it could not be read (`unreadable` says why). */
  value?: string | null;
  unreadable?: string;
  /**
   * Whether it differs from what isolate wrote (someone changed it since); null when unknown: the
   * value could not be read, or the entry's write may never have happened (an interrupted apply).
   */
  changedSince: boolean | null;
}

export interface PreviewEntry extends JournalEntry {
  live: LiveValue;
}

export interface RollbackPreview {
  /** The journal the rollback would undo (the baseline's when there is one), null: none. */
  journalId: string | null;
  /** What it would undo, last change first: each change with the value it restores and the one it overwrites. */
  entries: PreviewEntry[];
}

const whyOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The live value of each entry, read now through its backend (readMany where it has one, one by one
 * when that fails, so one unreadable value does not hide the others). A failed read is unknown, never
 * absent; so is an entry of a backend not available here.
 */
async function readLive(entries: readonly JournalEntry[], execs: Executors): Promise<PreviewEntry[]> {
  const byExec = new Map<ChangeExecutor, JournalEntry[]>();
  for (const e of entries) {
    const exec = execs[e.change.backend];
    if (exec) byExec.set(exec, [...(byExec.get(exec) ?? []), e]);
  }
  const live = new Map<JournalEntry, LiveValue>();
  const judged = (exec: ChangeExecutor, e: JournalEntry, value: string | null): LiveValue => ({
    value,
    changedSince: e.status === 'done' ? !exec.satisfied(e.change, value) : null,
  });
  for (const [exec, list] of byExec) {
    const many = exec.readMany ? await exec.readMany(list.map((e) => e.change)).catch(() => null) : null;
    for (const [i, e] of list.entries()) {
      if (many) {
        live.set(e, judged(exec, e, many[i] ?? null));
        continue;
      }
      try {
        live.set(e, judged(exec, e, await exec.read(e.change)));
      } catch (err) {
        live.set(e, { unreadable: whyOf(err), changedSince: null });
      }
    }
  }
  const none: LiveValue = { unreadable: 'no backend for it here', changedSince: null };
  return entries.map((e) => ({ ...e, live: live.get(e) ?? none }));
}

/**
 * What `isolate rollback` would undo now, read from the journal and the baseline as rollbackLast
 * reads them, nothing written and no lock taken (`isolate rollback --dry-run`), in the order the undo
 * takes them with these executors (undoOrder: controllers last), each with the live value it would
 * overwrite, read now through these executors (the value isolate wrote may have been changed since).
 */
export async function previewRollback(root: string, execs: Executors = {}): Promise<RollbackPreview> {
  const j = await readJournal(root);
  const baseline = await readBaseline(root);
  const open = (x: Journal) => {
    const { first, last } = undoOrder(x.entries, execs);
    return [...first, ...last];
  };
  const entries: JournalEntry[] = [];
  if (baseline) {
    // An interrupted apply is finished first, then everything since the last rollback.
    if (j && needsRecovery(j)) entries.push(...open(j));
    const all =
      j?.state === 'applied' ? foldJournal(structuredClone(baseline), j, pidAliveUnder(root)) : baseline;
    return { journalId: all.id, entries: await readLive([...entries, ...open(all)], execs) };
  }
  if (!j || j.state === 'rolled-back') return { journalId: j?.id ?? null, entries: [] };
  return { journalId: j.id, entries: await readLive(open(j), execs) };
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
