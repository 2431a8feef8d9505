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
import type { AuditInput } from '../audit/audit.js';
import type { InterruptCounts } from '../irq/delivered.js';
import { CpuSet } from '../model/cpuset.js';
import type { BuiltPlan } from './plan.js';

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
  /**
   * How interrupts on the exclusive CPUs are measured. Default: over at least `windowMs` (1000) from
   * the start of the check. `since`: from that earlier read instead, without waiting (the agent's
   * previous round); `read` receives the closing read (the agent's next `since`).
   */
  interrupts?: {
    windowMs?: number;
    since?: InterruptCounts | null;
    read?: (counts: InterruptCounts) => void;
  };
}

/** The default measuring window of `isolate check`: long enough to see a NIC's or a timer's IRQs. */
export const INTERRUPT_WINDOW_MS = 1000;

export async function check(req: CheckRequest): Promise<CheckReport> {
  const { readInterruptCounts, deliveredOn } = await import('../irq/delivered.js');
  // Read first: planning (a few hundred ms on a large host) counts towards the window.
  const since = req.interrupts?.since ?? readInterruptCounts(req.root);
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
  let interrupts: AuditInput['interrupts'];
  // Measured only where the policy asks for quiet cores: a window costs every check a second.
  if (since && built.policy.quiet?.irqs !== false) {
    const windowMs = req.interrupts?.since ? 0 : (req.interrupts?.windowMs ?? INTERRUPT_WINDOW_MS);
    const wait = windowMs - (performance.now() - since.at);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const until = readInterruptCounts(req.root);
    if (until) {
      req.interrupts?.read?.(until);
      const exclusive = built.plan.allocation.workloads
        .filter((w) => w.class === 'exclusive')
        .reduce((acc, w) => acc.union(w.cpus), CpuSet.EMPTY);
      interrupts = { report: deliveredOn(since, until, exclusive), expected: expectedIrqs(built) };
    }
  }
  return audit({
    interrupts,
    cpuChange: (workload, pid) => cpuChangeOf(journals, workload, pid, built.topology.online.size),
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

/** IRQs that may land on exclusive CPUs by design: kernel-managed ones, and NICs placed on their workload's own cores. */
function expectedIrqs(built: BuiltPlan): Map<string, string> {
  const out = new Map<string, string>();
  const irqs = built.observed.irqs?.irqs ?? [];
  const own = new Map<string, string>();
  for (const w of built.policy.workloads) {
    if (w.class !== 'exclusive' || w.irqs?.on !== 'own') continue;
    const nics = w.irqs.nics ?? w.near.filter((d) => d.kind === 'nic').map((d) => d.name);
    for (const n of nics) if (!own.has(n)) own.set(n, w.name);
  }
  for (const i of irqs) {
    if (i.managed)
      out.set(
        String(i.irq),
        'kernel-managed: it fires for I/O started on these CPUs; only isolcpus=managed_irq moves it',
      );
    else if (i.nic && own.has(i.nic))
      out.set(
        String(i.irq),
        `${i.nic} serves ${own.get(i.nic)}, whose irqs.on: own puts its queues on its own cores`,
      );
  }
  return out;
}
