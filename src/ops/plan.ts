import type { ObservedState } from '../model/observed.js';
import type { Plan } from '../model/plan.js';
import type { Policy } from '../model/policy.js';
import type { RaidTool } from '../model/raid.js';
import type { Topology } from '../model/topology.js';
import { type PlanJson, planToJson } from '../planner/json.js';
import { STANDARD_TOP_LEVEL } from '../planner/changes.js';
import { planHost } from '../planner/plan.js';
import { wantsRaidChange } from '../planner/raid/plan.js';
import { ancestors, workloadTarget } from '../planner/targets.js';
import { dedicatedSliceName, defaultUnitPath, isDedicatedSlice, unitOfCgroup } from '../model/systemd.js';
import type { RoundCache } from './round-cache.js';
import { readTopology } from '../topology/read.js';
import { type PolicySource, policyOf, readPolicySource, resolvePolicyPath } from './policy-source.js';

/** How changes are carried out, fixed at plan time and saved with the plan and in the journal. */
export interface ExecutorOptions {
  raid?: {
    timeoutMs: number;
    toolPaths?: Partial<Record<RaidTool, string>>;
  };
}

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
}

export interface BuiltPlan {
  plan: Plan;
  topology: Topology;
  policy: Policy;
  source: PolicySource;
  observed: ObservedState;
  executorOptions: ExecutorOptions;
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
      ...(raidToolPaths && Object.keys(raidToolPaths).length > 0 ? { toolPaths: raidToolPaths } : {}),
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
  let observed = await observe(req.root, policy, cache);
  if (executorOptions.raid && req.observeRaid !== false) {
    const { observeRaid } = await import('../raid/observe.js');
    observed.raid = await observeRaid({ root: req.root, ...executorOptions.raid });
  }
  let plan = planHost(topology, policy, observed);
  if (cache.systemd) {
    const reused = cache.systemd.reused;
    cache.systemd.planned(plan.changes.length);
    if (reused && plan.changes.length > 0) {
      // Changes are never computed from a remembered answer: observe again, asking systemd.
      const raid = observed.raid;
      observed = await observe(req.root, policy, cache);
      if (raid) observed.raid = raid;
      plan = planHost(topology, policy, observed);
      cache.systemd.planned(plan.changes.length);
    }
  }
  return { plan, topology, policy, source, observed, executorOptions };
}

/** Everything the planner may diff against: targets, their ancestors, units and process matches. */
export async function observe(root: string, policy: Policy, cache: RoundCache = {}): Promise<ObservedState> {
  const paths = new Set<string>();
  const units: string[] = [];
  const processMatchers: Record<string, { cmdline?: string; exe?: string; user?: string | number }> = {};
  for (const w of policy.workloads) {
    const target = w.match.kind === 'systemdUnit' ? defaultUnitPath(w.match.unit) : workloadTarget(w);
    for (const p of [...ancestors(target), target]) paths.add(p);
    if (w.match.kind === 'systemdUnit') units.push(w.match.unit);
    if (w.match.kind === 'process') {
      const { cmdline, exe, user } = w.match;
      processMatchers[w.name] = {
        cmdline,
        exe,
        user,
      };
    }
  }
  const { observeHost } = await import('../cgroup/observe.js');
  const { detectCgroupLayout } = await import('../cgroup/layout.js');
  // The mount table, read once: the cgroup v2 observer and the v1 choice below both go by it.
  const mounts = await detectCgroupLayout(root);
  // What the cgroup observer takes of the round's memory (systemd's answer is asked for below).
  const known = { mounts, processScan: cache.processes };
  let observed = await observeHost(root, { paths: [...paths], units, processMatchers, ...known });
  // A unit found somewhere unexpected: make sure its ancestors are known too, for subtree_control.
  const missing = Object.values(observed.cgroup.units)
    .filter((p): p is string => p !== null)
    .flatMap((p) => ancestors(p))
    .filter((p) => !observed.cgroup.groups[p]);
  if (missing.length > 0 && observed.cgroup.layout === 'unified') {
    observed = await observeHost(root, { paths: [...paths, ...missing], units, processMatchers, ...known });
  }
  // The units behind every cgroup the plan may touch (targets, their ancestors, strict's top level).
  const { observeSystemd } = await import('../systemd/observe.js');
  const unitNames = [
    ...units,
    ...[...Object.keys(observed.cgroup.groups), ...observed.cgroup.topLevel.map((t) => `/${t}`)]
      .map(unitOfCgroup)
      .filter((u): u is string => u !== null),
  ];
  // strict: the dedicated slice of each exclusive service, isolate's (`kafka.slice`) or the one the
  // operator configured, which exists as a unit (and takes properties) before anything runs in it.
  const dedicated = policy.strict
    ? policy.workloads.filter((w) => w.class === 'exclusive' && w.match.kind === 'systemdUnit')
    : [];
  const asked = [
    ...unitNames,
    ...(policy.strict ? STANDARD_TOP_LEVEL : []),
    ...dedicated.map((w) => dedicatedSliceName(w.name)),
  ];
  const ask = async () => {
    const systemd = await observeSystemd(root, asked);
    if (systemd) {
      const configured = dedicated
        .map((w) => (w.match.kind === 'systemdUnit' ? systemd.units[w.match.unit]?.Slice : undefined))
        .filter((s): s is string => !!s && isDedicatedSlice(s) && !systemd.units[s]);
      if (configured.length > 0) {
        Object.assign(systemd.units, (await observeSystemd(root, configured))?.units ?? {});
      }
    }
    return systemd;
  };
  // The agent asks again only when what the cgroup tree shows of systemd's units may have changed.
  const systemd = cache.systemd
    ? await cache.systemd.answer(JSON.stringify([root, asked, observed.cgroup]), ask)
    : await ask();
  if (systemd) observed.systemd = systemd;
  // cpuset on a v1 hierarchy (legacy, or hybrid): the v1 backend observes, plans and applies.
  if (mounts.cpuset === 'v1') {
    const { observeV1 } = await import('../cgroupv1/observe.js');
    const groups = policy.workloads.flatMap((w) => {
      if (w.match.kind === 'process') return [];
      const p = w.match.kind === 'cgroup' ? w.match.path : defaultUnitPath(w.match.unit);
      return [
        { hierarchy: 'memory', path: p },
        { hierarchy: 'cpu', path: p },
      ];
    });
    observed.v1 = await observeV1(root, mounts, {
      workloads: policy.workloads.map((w) => ({
        name: w.name,
        match: w.match,
        cpuset: `/isolate-${w.name}`,
      })),
      cpusets: ['/isolate-housekeeping'],
      groups,
      // Matched by observeHost above (with the agent's scan memory): not read a second time.
      matched: observed.processes,
      rootProcs: policy.strict,
    });
    // systemd units whose memory/cpu isolate would set through systemd on v1.
    const v1Units = policy.workloads.flatMap((w) => (w.match.kind === 'systemdUnit' ? [w.match.unit] : []));
    if (v1Units.length > 0 && !observed.systemd) {
      const sdv1 = await observeSystemd(root, v1Units);
      if (sdv1) observed.systemd = sdv1;
    }
  }
  return observed;
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
