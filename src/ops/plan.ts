// `plan` as a function: read the policy, sysfs, the host's current state (ops/observe.ts) and, when
// the policy asks for a RAID setting, the RAID controllers under --root, then plan. `apply`, `check`
// and the agent call it too, so they always agree; what `isolate plan` saves is in saved-plan.ts.
import type { ObservedState } from '../model/observed.js';
import type { JvmFacts } from '../model/jvm.js';
import { IRQ_REFUSED, irqLabel } from '../model/irq.js';
import type { Plan } from '../model/plan.js';
import type { Policy } from '../model/policy.js';
import type { RaidTool } from '../model/raid.js';
import type { Topology } from '../model/topology.js';
import { type PlanJson, planToJson } from '../planner/json.js';
import { planHost } from '../planner/plan.js';
import { wantsRaidChange } from '../planner/raid/plan.js';
import { readAssignment } from './assignment.js';
import { observe } from './observe.js';
import type { RoundCache } from './round-cache.js';
import { readTopology } from '../topology/read.js';
import type { BuiltPlan, ExecutorOptions } from './built-plan.js';
import { type PolicySource, policyOf, readPolicySource, resolvePolicyPath } from './policy-source.js';

// Where callers have always found them; they live in built-plan.ts, which saved-plan.ts imports too.
export type { BuiltPlan, ExecutorOptions } from './built-plan.js';

export interface PlanRequest {
  root: string;
  /** Explicit policy file; else `<root>/etc/isolate/policy.yaml`; else the bundled default. */
  policyPath?: string;
  /** A policy already read (a saved plan's embedded text): no file is read. */
  policySource?: PolicySource;
  /** `--tool-path` / ISOLATE_RAID_TOOL_PATH, as `raid show` takes them. */
  raidToolPaths?: Partial<Record<RaidTool, string>>;
  /** Notices for stderr (e.g. "using the bundled default policy"). */
  notice?: (message: string) => void;
  /** Told before a step that may take seconds (the RAID vendor tools), for a person at a terminal. */
  progress?: (message: string) => void;
  /**
   * The hard timeout of one vendor-tool call while reading the controllers (`plan --timeout`); else
   * the policy's raid.timeoutSeconds. What apply runs keeps the policy's, saved with the plan.
   */
  raidReadTimeoutMs?: number;
  /**
   * Run the RAID vendor tools when the policy asks for a RAID setting (default true). The agent
   * reads RAID on its own slower cadence and plans cgroups alone in between.
   */
  observeRaid?: boolean;
  /** A topology already read (the agent re-reads it only when the CPU/node online lists change). */
  topology?: Topology;
  /** Fall back to the bundled default policy (a dry run only: nothing is changed or judged). */
  allowBundledPolicy?: boolean;
  /**
   * A dry run only: a policy file another user could write is used with a warning (through `notice`)
   * instead of refused.
   */
  warnUntrustedPolicy?: boolean;
  /** What the agent keeps between rounds (round-cache.ts); absent: everything is read. */
  cache?: RoundCache;
  /**
   * Say which running JVMs the plan's CPU changes leave with pools sized for other CPUs (a read of
   * each such workload's processes and their threads): `plan` and `apply` do; the agent's rounds do not.
   */
  jvms?: boolean;
  /** Read the disks under the workloads' data directories (`disks:`) and show them with the plan. */
  disks?: boolean;
}

/**
 * How this command would carry out a policy's changes: the RAID timeout from the policy, tool paths
 * from the command line or the environment (else the vendors' install paths). Never from a saved plan.
 */
export function executorOptionsFor(
  policy: Policy,
  raidToolPaths: Partial<Record<RaidTool, string>> | undefined,
): ExecutorOptions {
  if (!wantsRaidChange(policy.raid)) return {};
  return {
    raid: {
      timeoutMs: policy.raid.timeoutSeconds * 1000,
      toolPaths: raidToolPaths && Object.keys(raidToolPaths).length > 0 ? raidToolPaths : undefined,
    },
  };
}

export async function buildPlan(req: PlanRequest): Promise<BuiltPlan> {
  const source =
    req.policySource ??
    readPolicySource(
      resolvePolicyPath(req.root, req.policyPath, req.notice, !!req.allowBundledPolicy),
      req.warnUntrustedPolicy ? { warn: (m) => req.notice?.(m) } : 'refuse',
    );
  const policy = policyOf(source);
  const topology = req.topology ?? readTopology(req.root);
  const executorOptions = executorOptionsFor(policy, req.raidToolPaths);
  const cache = req.cache ?? {};
  // The cores isolate assigned last, for this policy and topology: planned from, not the live files.
  const assignment = readAssignment(req.root, source.sha256, topology);
  // IRQs the kernel refused to move at the last apply: left alone (reported) rather than retried each round.
  const refused = await refusedIrqs(req.root);
  if (cache.irqs) {
    for (const [irq, note] of refused) cache.irqs.refused.set(irq, note);
    for (const [irq, note] of cache.irqs.refused) if (!refused.has(irq)) refused.set(irq, note);
  }
  const planFrom = (o: ObservedState) => {
    if (assignment.workloads) o.assignment = assignment.workloads;
    for (const irq of o.irqs?.irqs ?? []) {
      const note = refused.get(irq.irq);
      if (note && !irq.managed && note.startsWith(`IRQ ${irqLabel(irq)}:`)) irq.managed = 'refused';
    }
    const p = planHost(topology, policy, o);
    if (assignment.note) p.notes.push(assignment.note);
    if (assignment.warning) p.warnings.push(assignment.warning);
    return p;
  };
  let observed = await observe(req.root, policy, cache);
  await observeDisks(req.root, policy, observed);
  if (executorOptions.raid && req.observeRaid !== false) {
    const { observeRaid } = await import('../raid/observe.js');
    const timeoutMs = req.raidReadTimeoutMs ?? executorOptions.raid.timeoutMs;
    req.progress?.(
      `reading the RAID controllers with their vendor tools (each call up to ${timeoutMs / 1000} s; plan --timeout sets it)`,
    );
    observed.raid = await observeRaid({ root: req.root, ...executorOptions.raid, timeoutMs });
  }
  let plan = planFrom(observed);
  if (cache.systemd) {
    const reused = cache.systemd.reused;
    cache.systemd.planned(plan.changes.length);
    if (reused && plan.changes.length > 0) {
      // Changes are never computed from a remembered answer: observe again, asking systemd.
      const raid = observed.raid;
      observed = await observe(req.root, policy, cache);
      await observeDisks(req.root, policy, observed);
      if (raid) observed.raid = raid;
      plan = planFrom(observed);
      cache.systemd.planned(plan.changes.length);
    }
  }
  if (req.jvms) await noteJvms(req.root, plan, policy, observed, topology.online.size);
  if (req.disks) await addDisks(plan, observed);
  // After the disks are read: the writeback in front of them (plan and apply show the disks).
  if (plan.disks?.length) await addWriteback(req.root, plan, observed, topology);
  return { plan, topology, policy, source, observed, executorOptions };
}

/**
 * The disks under each workload's data directories and the io controller's facts, for the planner's
 * io changes (every plan: the agent corrects io drift too). Read from sysfs and mountinfo, no tool.
 */
async function observeDisks(root: string, policy: Policy, observed: ObservedState): Promise<void> {
  if (!policy.workloads.some((w) => w.disks)) return;
  const { diskRequestsOf, readWorkloadDisks } = await import('../topology/disks.js');
  observed.disks = readWorkloadDisks(root, diskRequestsOf(policy.workloads));
  const { readIoCost, readIoLatencySupport } = await import('../cgroup/io.js');
  const { ioControllerOf } = await import('../planner/io.js');
  const cg = observed.cgroup;
  const controllersFile = `/${cg.mount}/cgroup.controllers`;
  observed.io = {
    controller: ioControllerOf(observed),
    controllersFile,
    ...readIoCost(root, cg.mount),
    latency: readIoLatencySupport(root, cg.mount, cg.kernel ?? null),
  };
}

/** The disks under each workload's data directories (shown with the plan), what could not be resolved as warnings. */
async function addDisks(plan: Plan, observed: ObservedState): Promise<void> {
  if (!observed.disks) return;
  const { findingText } = await import('../model/finding.js');
  plan.disks = observed.disks;
  for (const w of plan.disks) {
    for (const f of w.findings) (f.severity === 'info' ? plan.notes : plan.warnings).push(findingText(f));
  }
}

/**
 * Buffered writeback in front of the workloads' disks, as notes: the host's vm.dirty_* when they let a
 * batch cgroup dirty more than a disk writes in a few seconds, and each disk's writeback throttling.
 */
async function addWriteback(
  root: string,
  plan: Plan,
  observed: ObservedState,
  topology: Topology,
): Promise<void> {
  const { readVmDirty, readWbt } = await import('../topology/writeback.js');
  const { writebackNotes } = await import('../planner/writeback.js');
  const names = new Set(plan.disks!.flatMap((w) => w.disks.map((d) => d.name)));
  plan.notes.push(
    ...writebackNotes(plan.disks!, plan.allocation.workloads, {
      dirty: readVmDirty(root),
      hostMemoryBytes: topology.nodes.reduce((s, n) => s + n.memoryBytes, 0),
      v1: !!observed.v1,
      wbt: new Map([...names].map((n) => [n, readWbt(root, n)])),
    }),
  );
}

/**
 * IRQ number → the planned change's note, for each IRQ whose affinity write the last journal records
 * as refused by the kernel (EIO). The note names the IRQ's handlers: a number another device took
 * since is not the IRQ that refused.
 */
async function refusedIrqs(root: string): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  const { readJournal } = await import('../apply/journal.js');
  const journal = await readJournal(root).catch(() => null);
  for (const e of journal?.entries ?? []) {
    const c = e.change;
    if (e.status !== 'skipped' || c.backend !== 'irq' || c.setting !== 'smp_affinity_list') continue;
    if (!e.note?.startsWith(IRQ_REFUSED)) continue;
    out.set(Number(c.target.split('/').at(-1)), c.note ?? '');
  }
  return out;
}

/** The running JVMs of each workload whose CPUs the plan changes, judged into its warnings and notes. */
async function noteJvms(
  root: string,
  plan: Plan,
  policy: Policy,
  observed: ObservedState,
  online: number,
): Promise<void> {
  const { workloadsWithCpuChanges, addJvmNotes } = await import('../planner/jvm.js');
  const moved = workloadsWithCpuChanges(plan);
  if (moved.size === 0) return;
  const path = await import('node:path');
  const { cgroupDir } = await import('../cgroup/fsutil.js');
  const { bootTime, processesUnder, readJvms } = await import('../cgroup/jvm.js');
  const { cpuChangeOf, readBaseline, readJournal, undatedUnlessNewer } = await import('../apply/journal.js');
  const btime = bootTime(path.join(root, 'proc'));
  const jvms: Record<string, JvmFacts[]> = {};
  for (const w of policy.workloads) {
    if (!moved.has(w.name)) continue;
    // Where its processes run now: the unit's cgroup, the policy's cgroup, the matched PIDs (on v1
    // every workload's members, by its match).
    const pids = new Set([...(observed.processes[w.name] ?? []), ...(observed.v1?.members[w.name] ?? [])]);
    const now =
      w.match.kind === 'systemdUnit'
        ? (observed.cgroup.units[w.match.unit] ?? observed.systemd?.units[w.match.unit]?.ControlGroup)
        : w.match.kind === 'cgroup'
          ? w.match.path
          : undefined;
    if (now && !observed.v1) for (const p of processesUnder(cgroupDir(root, now))) pids.add(p);
    jvms[w.name] = readJvms(
      root,
      [...pids].sort((a, b) => a - b),
      { btime },
    );
  }
  const journals = [
    await readBaseline(root).catch(undatedUnlessNewer),
    await readJournal(root).catch(undatedUnlessNewer),
  ];
  addJvmNotes(plan, policy, jvms, (workload, pid) => cpuChangeOf(journals, workload, pid, online));
}

export interface PlanOpRequest extends PlanRequest {
  /** Save the plan here for `apply --plan` (nothing is written when absent). */
  saveTo?: string;
  /** `saveTo` is isolate's own state directory (the default path): missing directories are created. */
  saveToStateDir?: boolean;
}

/**
 * `isolate plan`: build the plan, and save it (self-contained) when asked. `json` is made on first
 * use: its fingerprint is a sha256, and a text dry run should not load node:crypto for it.
 */
export async function plan(
  req: PlanOpRequest,
): Promise<{ built: BuiltPlan; readonly json: PlanJson; savedTo?: string }> {
  const built = await buildPlan(req);
  let json: PlanJson | undefined;
  const out = {
    built,
    get json() {
      json ??= planToJson(built.plan);
      return json;
    },
  };
  if (req.saveTo) {
    const { savePlan, toSavedPlan } = await import('./saved-plan.js');
    await savePlan(req.saveTo, toSavedPlan(built, req.root, out.json), !!req.saveToStateDir);
    return { built, json: out.json, savedTo: req.saveTo };
  }
  return out;
}
