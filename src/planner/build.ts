// The imperative shell around the planner: read sysfs, the policy and the live cgroup state under
// --root, then plan. Shared by `plan`, `apply` and `check` so they always agree.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ObservedState } from '../cgroup/observed.js';
import { loadPolicyFile } from '../policy/load.js';
import type { Policy } from '../policy/types.js';
import { readTopology } from '../topology/read.js';
import type { Topology } from '../topology/model.js';
import { planHost } from './plan.js';
import { ancestors, defaultUnitPath, workloadTarget } from './targets.js';
import type { Plan } from './types.js';

export interface BuildOptions {
  root: string;
  /** Explicit policy file; else `<root>/etc/isolate/policy.yaml`; else the bundled default. */
  policyPath?: string;
  /** Called with notices for stderr (e.g. "using the bundled default policy"). */
  notice?: (message: string) => void;
}

export interface BuiltPlan {
  plan: Plan;
  topology: Topology;
  policy: Policy;
  observed: ObservedState;
}

export function resolvePolicyPath(opts: BuildOptions): string {
  if (opts.policyPath) return opts.policyPath;
  const host = join(opts.root, 'etc/isolate/policy.yaml');
  if (existsSync(host)) return host;
  const bundled = bundledPolicy();
  opts.notice?.(`no --policy given and no ${host}; using the bundled default policy ${bundled}`);
  return bundled;
}

/**
 * policies/default.yaml of this installation, found from the running module (dist/ or src/) or, for the
 * packaged executable /usr/bin/isolate, in /usr/share/isolate/policies.
 */
export function bundledPolicy(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    for (const candidate of [
      join(dir, 'policies', 'default.yaml'),
      join(dir, 'share', 'isolate', 'policies', 'default.yaml'),
    ]) {
      if (existsSync(candidate)) return candidate;
    }
    dir = dirname(dir);
  }
  return resolve('policies/default.yaml');
}

export async function buildPlan(opts: BuildOptions): Promise<BuiltPlan> {
  const policy = loadPolicyFile(resolvePolicyPath(opts));
  const topology = readTopology(opts.root);
  const observed = await observe(opts.root, policy);
  const plan = planHost(topology, policy, observed);
  if (policy.raid) await addRaidChanges(opts.root, policy.raid, plan);
  return { plan, topology, policy, observed };
}

/**
 * RAID cache changes join the same plan, journal and rollback as the cgroup changes. Vendor tools
 * are only run when the policy asks for a RAID setting, and only their read-only show commands.
 */
async function addRaidChanges(root: string, raid: NonNullable<Policy['raid']>, plan: Plan): Promise<void> {
  const { writeCache, readAhead, ioPolicy, diskWriteCache } = raid;
  const anyOverride = Object.values(raid.controllers).some((o) =>
    Object.values(o).some((v) => v !== 'unchanged'),
  );
  if ([writeCache, readAhead, ioPolicy, diskWriteCache].every((v) => v === 'unchanged') && !anyOverride)
    return;
  const { observeRaid } = await import('../raid/observe.js');
  const { planRaid } = await import('../raid/plan.js');
  const observation = await observeRaid({ root, timeoutMs: raid.timeoutSeconds * 1000 });
  const r = planRaid(raid, observation);
  plan.changes.push(...r.changes);
  plan.warnings.push(
    ...observation.findings.filter((f) => f.severity !== 'info').map((f) => `raid: ${f.message}`),
    ...r.warnings.map((w) => `raid: ${w}`),
  );
}

/** Everything the planner may diff against: targets, their ancestors, units and process matches. */
export async function observe(root: string, policy: Policy): Promise<ObservedState> {
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
        ...(cmdline !== undefined ? { cmdline } : {}),
        ...(exe !== undefined ? { exe } : {}),
        ...(user !== undefined ? { user } : {}),
      };
    }
  }
  const { observeHost } = await import('../cgroup/observe.js');
  const observed = await observeHost(root, { paths: [...paths], units, processMatchers });
  // A unit found somewhere unexpected: make sure its ancestors are known too, for subtree_control.
  const missing = Object.values(observed.cgroup.units)
    .filter((p): p is string => p !== null)
    .flatMap((p) => ancestors(p))
    .filter((p) => !observed.cgroup.groups[p]);
  if (missing.length > 0 && observed.cgroup.layout === 'unified') {
    return observeHost(root, { paths: [...paths, ...missing], units, processMatchers });
  }
  return observed;
}
