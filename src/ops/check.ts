// `check` as a function: plan (to know the allocation), then audit the host against it.
import path from 'node:path';
import { cpuChangeOf, readBaseline, readJournal, undatedUnlessNewer } from '../apply/journal.js';
import { audit } from '../audit/audit.js';
import { cgroupMount } from '../cgroup/fsutil.js';
import type { CheckReport } from '../audit/report.js';
import type { RoundCache } from './round-cache.js';
import type { Finding } from '../model/finding.js';
import type { Topology } from '../model/topology.js';
import { buildPlan } from './plan.js';
import type { PolicySource } from './policy-source.js';
import type { OpContext } from './ports.js';

export interface CheckRequest extends OpContext {
  policyPath?: string;
  /** A policy already read (the agent's current one). */
  policySource?: PolicySource;
  /** See PlanRequest.observeRaid. */
  observeRaid?: boolean;
  /** AuditInput.listCap. */
  listCap?: number;
  /** See PlanRequest.topology and PlanRequest.cache (the agent's). */
  topology?: Topology;
  cache?: RoundCache;
}

export async function check(req: CheckRequest): Promise<CheckReport> {
  const built = await buildPlan({
    root: req.root,
    policyPath: req.policyPath,
    policySource: req.policySource,
    observeRaid: req.observeRaid,
    notice: req.notice,
    topology: req.topology,
    cache: req.cache,
  });
  const extra: Finding[] = built.topology.notes.map((message) => ({ severity: 'info', message }));
  const v1 = built.observed.v1;
  if (v1) {
    // The layout judged, said in every report (the v1 backend has no partitions to report instead).
    extra.push({ severity: 'info', message: `cgroup layout: ${built.plan.layout}` });
  } else if (built.observed.cgroup.layout !== 'unified') {
    extra.push({ severity: 'warning', message: built.observed.cgroup.reason ?? 'no cgroup v2 hierarchy' });
  }
  // When isolate changed each workload's CPUs: a JVM started after that sized its pools for them.
  // The baseline first: its entries hold the CPUs before isolate's first change.
  // A journal that cannot be read leaves the changes undated (apply and rollback refuse it loudly);
  // one a newer isolate wrote is refused here too, so a downgraded host never reports as converged.
  const journals = [
    await readBaseline(req.root).catch(undatedUnlessNewer),
    await readJournal(req.root).catch(undatedUnlessNewer),
  ];
  return audit({
    cpuChange: (workload, pid) => cpuChangeOf(journals, workload, pid),
    root: req.root,
    allocation: built.plan.allocation.workloads,
    partitions: built.observed.cgroup.features.partition,
    pendingChanges: built.plan.changes.length,
    policy: built.source.path,
    strict: built.policy.strict,
    extraFindings: extra,
    v1CpusetDir: v1 ? path.join(cgroupMount(req.root), v1.hierarchies.cpuset!) : undefined,
    listCap: req.listCap,
  });
}
