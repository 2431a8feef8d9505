// The apply engine: runs a plan's changes in the given order, journaling each previous value
// before writing it, reading every value back, and undoing everything on the first failure.
import { mkdir, rename } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../errors.js';
import type { Change } from '../planner/types.js';
import { CgroupFsExecutor, type ChangeExecutor, isKnownSetting, parseBytes, StepError } from './cgroupfs.js';
import { cgroupMount, isDir, normCgPath, readTrim } from './fsutil.js';
import {
  type Journal,
  type JournalEntry,
  journalDir,
  journalPath,
  newJournal,
  readJournal,
  writeJournal,
} from './journal.js';
import { acquireLock, type Lock } from './lock.js';
import { detectLayout } from './observe.js';

/** Exit codes of apply/rollback (0 = done). */
export const EXIT = {
  /** Refused before any write: bad input, pre-flight check, lock held. */
  refused: 1,
  /** A step failed; every write made was undone. */
  rolledBack: 2,
  /** A step failed and the undo did not complete: the host is half-applied; run `isolate rollback`. */
  rollbackIncomplete: 3,
} as const;

export type LogFn = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

export type Executors = Partial<Record<Change['backend'], ChangeExecutor>>;

export interface ApplyOptions {
  root: string;
  changes: Change[];
  /** Allow lowering memory.max below the cgroup's current usage. */
  force?: boolean;
  /** Applying a saved plan: refuse when a live value is neither the plan's `from` nor its `to`. */
  requireFrom?: boolean;
  /** Backends other than cgroupfs (raid). cgroupfs is built in. */
  executors?: Executors;
  log?: LogFn;
  /** Called just before each write (tests inject failures here). */
  beforeWrite?: (seq: number, change: Change) => Promise<void> | void;
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

function describe(c: Change): string {
  if (c.setting === 'mkdir') return `mkdir ${c.target}`;
  if (c.setting === 'cgroup.procs') return `move PID ${c.to} to ${c.target}`;
  return `${c.target} ${c.setting} = "${c.to}"`;
}

function executorsFor(root: string, extra?: Executors): Executors {
  return { cgroupfs: new CgroupFsExecutor(root), ...extra };
}

function executorOf(execs: Executors, c: Change): ChangeExecutor {
  const e = execs[c.backend];
  if (!e) {
    if (c.backend === 'systemd') {
      throw new UserError(
        `${describe(c)}: the systemd backend is not supported yet; manage ${c.target} through cgroupfs or systemctl set-property by hand`,
        EXIT.refused,
      );
    }
    throw new UserError(`${describe(c)}: no ${c.backend} backend is available on this build`, EXIT.refused);
  }
  return e;
}

const noLog: LogFn = () => {};

/** Whether an interrupted apply/rollback left work to finish. */
export function needsRecovery(j: Journal | null): boolean {
  return (
    j !== null && (j.state === 'applying' || j.state === 'rolling-back' || j.state === 'rollback-failed')
  );
}

/**
 * Apply `changes` in order. No-op when every change is already in place (no journal, no lock
 * beyond a check for an interrupted run). Throws UserError (refused) or ApplyFailedError.
 */
export async function applyChanges(opts: ApplyOptions): Promise<ApplyResult> {
  const { root, changes } = opts;
  const log = opts.log ?? noLog;
  const execs = executorsFor(root, opts.executors);

  // Fast path: a converged host with no interrupted run needs neither the lock nor a journal.
  const before = await readJournal(root);
  if (changes.length === 0 && !needsRecovery(before)) return { changed: 0, steps: [] };

  const lock = await acquireLock(root, 'apply');
  try {
    let recovered: RecoveryReport | undefined;
    const j0 = await readJournal(root);
    if (needsRecovery(j0)) {
      log('warn', 'completing the undo of an interrupted run', { journal: j0!.id, state: j0!.state });
      recovered = await undoJournal(root, j0!, execs, log);
      if (!recovered.clean) {
        throw new ApplyFailedError(
          `an interrupted apply (journal ${j0!.id}) could not be fully undone: ${recovered.notes.join('; ')}; fix the cause and run "isolate rollback"`,
          EXIT.rollbackIncomplete,
          [],
          recovered.notes,
        );
      }
      // The plan was computed against the half-applied host: the caller must re-plan.
      if (changes.length > 0 && !opts.requireFrom) {
        return { changed: 0, steps: [], recovered };
      }
    }

    const pre = await preflight(root, changes, execs, opts);
    const todo = pre.filter((s) => s.status !== 'unchanged');
    if (todo.length === 0) return { changed: 0, steps: pre, ...(recovered ? { recovered } : {}) };

    // Keep the last journal for forensics; a new apply starts a new one.
    await archiveJournal(root);
    const journal = newJournal();
    await writeJournal(root, journal);
    log('info', 'apply started', { journal: journal.id, changes: changes.length, toWrite: todo.length });

    const steps: StepReport[] = [];
    const failAndUndo = async (err: unknown, i: number, change: Change): Promise<never> => {
      const why = err instanceof Error ? err.message : String(err);
      const failing = `step ${i + 1}/${changes.length} (${describe(change)})`;
      journal.error = `${failing}: ${why}`;
      journal.state = 'rolling-back';
      await writeJournal(root, journal);
      log('error', 'step failed; rolling back', { step: i + 1, change: describe(change), error: why });
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
    // SIGINT/SIGTERM mid-apply: finish the current write, then roll back everything (never half-applied).
    let interrupted: string | null = null;
    const onSignal = (sig: NodeJS.Signals) => {
      interrupted = sig;
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    try {
      // Test hooks for the real-kernel tests: die (kill -9) or wait for a sabotage before step N.
      const crashAt = Number(process.env.ISOLATE_TEST_CRASH_AT_STEP ?? '0');
      const pauseAt = Number(process.env.ISOLATE_TEST_PAUSE_AT_STEP ?? '0');
      const crashAfter = Number(process.env.ISOLATE_TEST_CRASH_AFTER_STEP ?? '0');
      let seq = 0;
      for (const [i, change] of changes.entries()) {
        const exec = executorOf(execs, change);
        const live = await safeRead(exec, change);
        if (exec.satisfied(change, live)) {
          steps.push({ seq: i + 1, change, previous: live, status: 'unchanged' });
          continue;
        }
        seq++;
        if (interrupted) {
          await failAndUndo(new StepError(`interrupted by ${interrupted}`), i, change);
        }
        const entry: JournalEntry = { seq, change, previous: live, status: 'pending' };
        journal.entries.push(entry);
        await writeJournal(root, journal);
        try {
          if (crashAt > 0 && seq === crashAt) process.kill(process.pid, 'SIGKILL');
          if (pauseAt > 0 && seq === pauseAt) await pauseForTest(root);
          await opts.beforeWrite?.(i + 1, change);
          const r = await exec.apply(change, live);
          if (crashAfter > 0 && seq === crashAfter) process.kill(process.pid, 'SIGKILL');
          if (r.skipped) {
            entry.status = 'skipped';
            entry.note = r.skipped;
            steps.push({ seq: i + 1, change, previous: live, status: 'skipped', note: r.skipped });
            log('info', 'step skipped', { step: i + 1, change: describe(change), reason: r.skipped });
          } else {
            entry.status = 'done';
            steps.push({ seq: i + 1, change, previous: live, status: 'applied' });
            log('info', 'step applied', { step: i + 1, change: describe(change), previous: live });
          }
        } catch (err) {
          await failAndUndo(err, i, change);
        }
      }
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    journal.state = 'applied';
    await writeJournal(root, journal);
    const changed = steps.filter((s) => s.status === 'applied').length;
    log('info', 'apply finished', { journal: journal.id, changed });
    return { changed, steps, journalId: journal.id, ...(recovered ? { recovered } : {}) };
  } finally {
    await lock.release();
  }
}

/** Create `<root>/run/isolate.paused` and wait (at most 5 min) until someone removes it. */
async function pauseForTest(root: string): Promise<void> {
  const { writeFile, access } = await import('node:fs/promises');
  const flag = path.join(root, 'run/isolate.paused');
  await writeFile(flag, `${process.pid}\n`);
  const until = Date.now() + 300_000;
  while (Date.now() < until) {
    try {
      await access(flag);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function safeRead(exec: ChangeExecutor, c: Change): Promise<string | null> {
  try {
    return await exec.read(c);
  } catch {
    return null;
  }
}

async function archiveJournal(root: string): Promise<void> {
  const j = await readJournal(root);
  if (!j) return;
  const dir = path.join(journalDir(root), 'history');
  await mkdir(dir, { recursive: true });
  await rename(journalPath(root), path.join(dir, `journal-${j.id}.json`)).catch(() => {});
}

/**
 * Checks made before the first write: backend support, cgroup v2 layout, saved-plan drift and
 * memory.max below usage. Returns which changes are already in place.
 */
async function preflight(
  root: string,
  changes: Change[],
  execs: Executors,
  opts: ApplyOptions,
): Promise<StepReport[]> {
  if (changes.some((c) => c.backend === 'cgroupfs')) {
    const layout = await detectLayout(root);
    const mount = cgroupMount(root);
    if (layout !== 'unified') {
      throw new UserError(
        `cannot apply: ${mount} is ${layout === 'none' ? 'not a cgroup v2 hierarchy' : `a ${layout} cgroup layout`}; isolate writes only to the unified cgroup v2 hierarchy (boot with systemd.unified_cgroup_hierarchy=1 cgroup_no_v1=all); "isolate plan" still works`,
        EXIT.refused,
      );
    }
    const ctrls = (await readTrim(path.join(mount, 'cgroup.controllers')))?.split(/\s+/) ?? [];
    if (!ctrls.includes('cpuset')) {
      throw new UserError(
        `cannot apply: the cpuset controller is not available in ${mount}/cgroup.controllers (bound to cgroup v1 or disabled); boot with cgroup_no_v1=all`,
        EXIT.refused,
      );
    }
  }
  const created = new Set<string>();
  const out: StepReport[] = [];
  for (const [i, c] of changes.entries()) {
    const exec = executorOf(execs, c);
    if (c.backend === 'cgroupfs') {
      if (!isKnownSetting(c.setting)) {
        throw new UserError(
          `step ${i + 1}: unknown cgroupfs setting "${c.setting}" for ${c.target}`,
          EXIT.refused,
        );
      }
      normCgPath(c.target);
    }
    const underNew =
      c.backend === 'cgroupfs' &&
      [...created].some((p) => normCgPath(c.target) === p || normCgPath(c.target).startsWith(`${p}/`));
    if (c.setting === 'mkdir') created.add(normCgPath(c.target));
    if (underNew && c.setting !== 'cgroup.procs') {
      out.push({ seq: i + 1, change: c, previous: null, status: 'applied' });
      continue;
    }
    const live = await safeRead(exec, c);
    const done = exec.satisfied(c, live);
    if (opts.requireFrom && !done && !exec.same(c, live, c.from)) {
      if (!(c.setting === 'cgroup.procs' && live === null)) {
        throw new UserError(
          `the host changed since the plan was saved: ${describe(c)} expected "${c.from ?? '(absent)'}" now, found "${live ?? '(absent)'}"; run "isolate plan" again`,
          EXIT.refused,
        );
      }
    }
    if (
      c.backend === 'cgroupfs' &&
      (c.setting === 'cpuset.cpus' || c.setting === 'cpuset.mems') &&
      c.to.trim() === '' &&
      !done &&
      live !== null &&
      live.trim() !== ''
    ) {
      const events = await readTrim(path.join(cgroupMount(root), normCgPath(c.target), 'cgroup.events'));
      if (events && /^populated 1$/m.test(events)) {
        throw new UserError(
          `refusing step ${i + 1}: emptying ${c.target} ${c.setting} ("${live}") while the cgroup has processes is refused by the kernel (ENOSPC) and would leave them without ${c.setting === 'cpuset.cpus' ? 'CPUs' : 'memory nodes'}; widen it instead`,
          EXIT.refused,
        );
      }
    }
    if (c.backend === 'cgroupfs' && c.setting === 'memory.max' && !done && !opts.force) {
      const limit = parseBytes(c.to);
      const dir = path.join(cgroupMount(root), normCgPath(c.target));
      const current = (await isDir(dir)) ? await readTrim(path.join(dir, 'memory.current')) : null;
      const usage = current === null ? null : Number(current);
      if (typeof limit === 'number' && usage !== null && Number.isFinite(usage) && limit < usage) {
        throw new UserError(
          `refusing to set ${c.target} memory.max to ${fmtBytes(limit)}: the cgroup uses ${fmtBytes(usage)} now (memory.current); the kernel would reclaim and may OOM-kill its processes; raise the limit in the policy or pass --force`,
          EXIT.refused,
        );
      }
    }
    out.push({ seq: i + 1, change: c, previous: live, status: done ? 'unchanged' : 'applied' });
  }
  return out;
}

export function fmtBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(1)} ${units[u]} (${n} bytes)`;
}

/**
 * Undo a journal's entries in reverse order, persisting progress after each so a crash during
 * the undo resumes where it stopped. Sets `state` to rolled-back or rollback-failed.
 */
async function undoJournal(root: string, j: Journal, execs: Executors, log: LogFn): Promise<RecoveryReport> {
  j.state = 'rolling-back';
  await writeJournal(root, j);
  const movedFrom = new Map<string, string>();
  for (const e of j.entries) {
    if (e.change.setting === 'cgroup.procs' && e.previous && !movedFrom.has(normCgPath(e.change.target))) {
      movedFrom.set(normCgPath(e.change.target), e.previous);
    }
  }
  const notes: string[] = [];
  let undone = 0;
  let failed = false;
  for (const e of [...j.entries].reverse()) {
    if (e.status === 'undone' || e.status === 'skipped') continue;
    try {
      const exec = executorOf(execs, e.change);
      const r = await exec.undo(e.change, e.previous, { movedFrom });
      // A pending entry's write may never have happened; only completed writes are counted.
      if (e.status === 'done') undone++;
      e.status = 'undone';
      if (r.note) {
        e.note = r.note;
        notes.push(r.note);
      }
      log('info', 'step undone', {
        step: e.seq,
        change: describe(e.change),
        restored: e.previous,
        note: r.note,
      });
    } catch (err) {
      failed = true;
      const why = err instanceof Error ? err.message : String(err);
      notes.push(`undo of ${describe(e.change)} failed: ${why}`);
      log('error', 'undo failed', { step: e.seq, change: describe(e.change), error: why });
    }
    await writeJournal(root, j);
  }
  j.state = failed ? 'rollback-failed' : 'rolled-back';
  await writeJournal(root, j);
  return { journalId: j.id, undone, notes, clean: !failed };
}

/**
 * Finish undoing an interrupted apply/rollback (kill -9) before anything plans against the host.
 * Returns null when there was nothing to recover. Cheap when the journal is clean (no lock).
 */
export async function recoverIfNeeded(opts: {
  root: string;
  executors?: Executors;
  log?: LogFn;
}): Promise<RecoveryReport | null> {
  if (!needsRecovery(await readJournal(opts.root))) return null;
  const log = opts.log ?? noLog;
  const lock = await acquireLock(opts.root, 'recovery');
  try {
    const j = await readJournal(opts.root);
    if (!needsRecovery(j)) return null;
    log('warn', 'completing the undo of an interrupted run', { journal: j!.id, state: j!.state });
    const r = await undoJournal(opts.root, j!, executorsFor(opts.root, opts.executors), log);
    if (!r.clean) {
      throw new ApplyFailedError(
        `an interrupted apply (journal ${j!.id}) could not be fully undone: ${r.notes.join('; ')}; fix the cause and run "isolate rollback"`,
        EXIT.rollbackIncomplete,
        [],
        r.notes,
      );
    }
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
export async function rollbackLast(opts: {
  root: string;
  executors?: Executors;
  log?: LogFn;
}): Promise<RollbackResult> {
  const log = opts.log ?? noLog;
  const execs = executorsFor(opts.root, opts.executors);
  let lock: Lock | undefined;
  try {
    lock = await acquireLock(opts.root, 'rollback');
    const j = await readJournal(opts.root);
    if (!j || j.state === 'rolled-back') {
      return { journalId: j?.id ?? null, undone: 0, notes: [], nothing: true };
    }
    log('info', 'rollback started', { journal: j.id, state: j.state });
    const r = await undoJournal(opts.root, j, execs, log);
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

/** Throw a StepError from tests or adapters with an errno-like code. */
export { StepError };
