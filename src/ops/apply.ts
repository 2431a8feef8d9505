// `apply` and `rollback` as functions: recover an interrupted run, plan (or take a saved plan and
// prove the host has not moved on), let the caller confirm, apply through the engine, re-plan once
// when another run's crash was undone in between.
import { rm } from 'node:fs/promises';
import {
  type ApplyResult,
  applyChanges,
  type LiveValue,
  type RecoveryReport,
  type RollbackResult,
  needsRecovery,
  previewRollback,
  type RollbackPreview,
  stateNeedsRecovery,
  recoverIfNeeded,
  rollbackLast,
} from '../apply/engine.js';
import { readBaseline, readJournal, readJournalState } from '../apply/journal.js';
import { cgroupTarget, describeChange, describeUndo, showValue } from '../model/describe.js';
import { UserError } from '../model/errors.js';
import type { Allocation, Change } from '../model/plan.js';
import type { RaidObservation, RaidTool } from '../model/raid.js';
import type { Topology } from '../model/topology.js';
import { stampTaskStarts } from '../cgroup/task-start.js';
import { executorsFor } from './executors.js';
import { assignmentPath, saveAssignment } from './assignment.js';
import { type BuiltPlan, buildPlan, type ExecutorOptions, executorOptionsFor } from './plan.js';
import { policyOf } from './policy-source.js';
import type { PolicySource } from './policy-source.js';
import type { RoundCache } from './round-cache.js';
import type { OpContext } from './ports.js';

export interface ApplyRequest extends OpContext {
  policyPath?: string;
  /** A policy already read and validated (the agent's current one): no file is read. */
  policySource?: PolicySource;
  /** See PlanRequest.observeRaid. */
  observeRaid?: boolean;
  /** See PlanRequest.topology. */
  topology?: Topology;
  /** See PlanRequest.cache. */
  cache?: RoundCache;
  /** Apply exactly this saved plan (refused when the host changed since). */
  planFile?: string;
  force?: boolean;
  /** `--tool-path` / ISOLATE_RAID_TOOL_PATH. */
  raidToolPaths?: Partial<Record<RaidTool, string>>;
  /**
   * A bare change list to apply with no policy and no plan (each change's `from` is still checked
   * against the host): faults no planner would make, for the real-kernel fault-injection tests. Only a
   * build with test hooks (scripts/build.mjs --test-hooks) honours it; release builds drop the path.
   */
  testBareChanges?: Change[];
  /** See PlanRequest.jvms: `isolate apply` says which JVMs its CPU changes leave mis-sized. */
  jvms?: boolean;
  /** See PlanRequest.disks: `isolate apply` shows the workloads' disks with its plan. */
  disks?: boolean;
  /** Shown the changes before any write; returning false refuses the apply. */
  confirm?: (changes: Change[], warnings: string[]) => Promise<boolean>;
  /** Told before what may take seconds: reading the RAID controllers, and each RAID step. */
  progress?: (message: string) => void;
}

export interface ApplyOutcome extends ApplyResult {
  /** What the plan gave each workload (absent for a saved plan). */
  allocation?: Allocation;
  /** The RAID controllers as read for this plan, when they were read. */
  raid?: RaidObservation;
  /** An interrupted run undone before this one planned. */
  recoveredFirst: RecoveryReport | null;
  changes: Change[];
  warnings: string[];
}

export async function apply(req: ApplyRequest): Promise<ApplyOutcome> {
  const { root, log } = req;
  const early = await recoverFirst(req);
  const todo = await changesToApply(req);
  const { warnings, fromSaved, raid } = todo;
  let { changes, allocation, applied } = todo;
  const remember = () =>
    applied && saveAssignment(root, applied.source.sha256, applied.topology, applied.plan.allocation);

  if (changes.length === 0) {
    await remember();
    return {
      changed: 0,
      steps: [],
      recoveredFirst: early,
      changes,
      warnings,
      allocation,
      raid,
    };
  }
  if (req.confirm && !(await req.confirm(changes, warnings))) {
    throw new UserError('not applied: not confirmed');
  }

  const run = async (cs: Change[], opts: ExecutorOptions) =>
    applyChanges({
      root,
      // Each move names its task (start time), so a rollback never moves another task with its ID.
      changes: stampTaskStarts(root, cs),
      requireFrom: fromSaved,
      force: !!req.force,
      executors: await executorsFor(root, cs, opts),
      context: { executorOptions: opts },
      log,
      signal: req.signal,
      hooks: req.hooks,
      progress: req.progress && stepProgress(req.progress),
    });
  let result = await run(changes, todo.options);
  if (result.recovered && !fromSaved) {
    // Another run was interrupted between our plan and our lock: plan again on the restored host.
    const built = await planFromPolicy(req);
    changes = built.plan.changes;
    allocation = built.plan.allocation;
    applied = built;
    result = await run(changes, built.executorOptions);
  }
  await remember();
  return {
    ...result,
    recoveredFirst: early,
    changes,
    warnings,
    allocation,
    raid,
  };
}

/**
 * An interrupted apply is undone first: every plan must be made against a whole host. The agent
 * comes here every round: backends are built only when there is something to recover.
 */
async function recoverFirst(req: ApplyRequest): Promise<RecoveryReport | null> {
  const { root, log } = req;
  const journal = stateNeedsRecovery(await readJournalState(root)) ? await readJournal(root) : null;
  return needsRecovery(journal)
    ? await recoverIfNeeded({
        root,
        executors: await executorsFor(
          root,
          journal!.entries.map((e) => e.change),
          journalOptions(journal),
        ),
        log,
      })
    : null;
}

/** What an apply writes: its changes, their backends' options, and the plan they come from. */
interface ChangesToApply {
  changes: Change[];
  warnings: string[];
  options: ExecutorOptions;
  /** From a saved plan (or the tests' bare list): each change's `from` must still be the host's. */
  fromSaved: boolean;
  allocation?: Allocation;
  raid?: RaidObservation;
  /** The plan applied, whose exclusive CPUs become isolate's assignment once it is in place. */
  applied: BuiltPlan | null;
}

/** The tests' bare changes, a saved plan verified against the host now, or a plan made from the policy. */
async function changesToApply(req: ApplyRequest): Promise<ChangesToApply> {
  if (__ISOLATE_TEST_HOOKS__ && req.testBareChanges) {
    return { changes: req.testBareChanges, warnings: [], options: {}, fromSaved: true, applied: null };
  }
  if (req.planFile) {
    const { checkSavedOptions, checkSavedRoot, readSavedPlan, verifiedChanges } = await import(
      './saved-plan.js'
    );
    const saved = readSavedPlan(req.planFile);
    checkSavedRoot(req.planFile, saved, req.root);
    // The saved plan's own policy text, never the file: it may have been edited or deleted since.
    // Nothing is run (no RAID tool, no systemctl) before the plan's stored options are known to be
    // the ones this command would use anyway.
    checkSavedOptions(req.planFile, saved, executorOptionsFor(policyOf(saved.policy), req.raidToolPaths));
    const now = await buildPlan({ ...planRequestOf(req), policySource: saved.policy });
    return {
      changes: verifiedChanges(req.planFile, saved, now.plan),
      warnings: [],
      options: now.executorOptions,
      fromSaved: true,
      applied: now,
    };
  }
  const built = await planFromPolicy(req);
  const changes = built.plan.changes;
  const fs = built.observed.cgroup;
  if (!fs.writable && changes.some((c) => c.backend === 'cgroupfs' && !c.hierarchy)) {
    throw new UserError(
      `cannot apply: ${fs.reason ?? 'no writable cgroup v2 hierarchy'}; "isolate plan" still works`,
    );
  }
  return {
    changes,
    warnings: built.plan.warnings,
    options: built.executorOptions,
    fromSaved: false,
    allocation: built.plan.allocation,
    raid: built.observed.raid,
    applied: built,
  };
}

/** What every plan of an apply is made with, whatever its policy. */
function planRequestOf(req: ApplyRequest) {
  return {
    root: req.root,
    notice: req.notice,
    progress: req.progress,
    raidToolPaths: req.raidToolPaths,
    observeRaid: req.observeRaid,
    topology: req.topology,
    cache: req.cache,
    jvms: req.jvms,
    disks: req.disks,
  };
}

/** A plan from the policy the request names (the agent's current one, or a file). */
function planFromPolicy(req: ApplyRequest): Promise<BuiltPlan> {
  return buildPlan({ ...planRequestOf(req), policySource: req.policySource, policyPath: req.policyPath });
}

function journalOptions(j: Awaited<ReturnType<typeof readJournal>>): ExecutorOptions {
  const o = j?.context?.executorOptions;
  return o && typeof o === 'object' ? (o as ExecutorOptions) : {};
}

/** One step `isolate rollback` would take: the change it undoes and the value it puts back. */
export interface UndoStep {
  change: Change;
  /** The value before isolate changed it (null: absent). */
  restores: string | null;
  /** The value it would overwrite, read now (null: absent, or unknown when `liveUnreadable` is set). */
  live: string | null;
  /** Why the live value could not be read: it is unknown, not absent. */
  liveUnreadable?: string;
  /** The live value is not what isolate wrote: someone changed it since. Null: unknown. */
  changedSince: boolean | null;
  /** As a person reads it (model/describe.ts describeUndo), the live value and the mark included. */
  description: string;
}

const isMove = (c: Change) => c.setting === 'cgroup.procs' || c.setting === 'tasks';

/** The live value as the preview shows it: `unknown` when the read failed. */
function shownLive(c: Change, live: LiveValue): string {
  if (live.value === undefined) return `unknown (${live.unreadable ?? 'not read'})`;
  if (isMove(c) && live.value === null) return 'nowhere (exited)';
  return isMove(c) && live.value !== null ? live.value : showValue(live.value);
}

/** Said after an entry whose live value is not what isolate wrote. */
function changedMark(c: Change): string {
  if (c.setting === 'mkdir') return ' (removed since isolate made it)';
  if (isMove(c)) return ` (moved since isolate moved it to ${cgroupTarget(c)})`;
  return ` (changed since isolate wrote ${showValue(c.to)})`;
}

/** `isolate rollback --dry-run`: what `rollback` would undo, last change first; nothing written. */
export async function rollbackPreview(
  ctx: OpContext,
): Promise<{ journalId: string | null; steps: UndoStep[] }> {
  // The executors order the undo (controllers last), as rollback's would, and read each live value;
  // nothing is written.
  const j = await readJournal(ctx.root);
  const b = await readBaseline(ctx.root);
  const changes = [...(b?.entries ?? []), ...(j?.entries ?? [])].map((e) => e.change);
  const executors = await executorsFor(ctx.root, changes, { ...journalOptions(b), ...journalOptions(j) });
  const p: RollbackPreview = await previewRollback(ctx.root, executors);
  const steps: UndoStep[] = [];
  for (const e of p.entries) {
    const description = describeUndo(e.change, e.previous, shownLive(e.change, e.live));
    if (!description) continue;
    steps.push({
      change: e.change,
      restores: e.previous,
      live: e.live.value ?? null,
      ...(e.live.unreadable !== undefined ? { liveUnreadable: e.live.unreadable } : {}),
      changedSince: e.live.changedSince,
      description: description + (e.live.changedSince ? changedMark(e.change) : ''),
    });
  }
  return { journalId: p.journalId, steps };
}

/**
 * `isolate rollback`: undo every change isolate made since the host was last rolled back (the
 * agent's corrections included), with the backend options they were made with.
 */
export async function rollback(ctx: OpContext): Promise<RollbackResult> {
  const j = await readJournal(ctx.root);
  const b = await readBaseline(ctx.root);
  const changes = [...(b?.entries ?? []), ...(j?.entries ?? [])].map((e) => e.change);
  const options = { ...journalOptions(b), ...journalOptions(j) };
  const executors = await executorsFor(ctx.root, changes, options);
  const result = await rollbackLast({
    root: ctx.root,
    executors,
    log: ctx.log,
    signal: ctx.signal,
  });
  // The host is as it was before isolate: no cores are assigned any more.
  await rm(assignmentPath(ctx.root), { force: true });
  return result;
}

/** A slow step, said before it runs: `step 3/30: storcli:/c0/v0 writeCache → write-back (a vendor tool)…`. */
function stepProgress(say: (message: string) => void) {
  return (step: number, total: number, change: Change) =>
    say(`step ${step}/${total}: ${describeChange(change)} (runs the vendor's tool)…`);
}
