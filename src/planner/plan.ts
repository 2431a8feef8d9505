// The planner: topology + policy + observed state (cgroup and RAID) → allocation → ordered changes.
// Pure: everything it knows comes in as arguments, so `plan`, `apply`, `check` and the agent agree.
import type { ObservedState } from '../model/observed.js';
import type { Allocation, Plan } from '../model/plan.js';
import type { Policy } from '../model/policy.js';
import type { Topology } from '../model/topology.js';
import { allocate } from './allocate.js';
import { cgroupChanges } from './changes.js';
import { jvmOptionChanges } from './jvm.js';
import { ioLatencyNotes, ioLatencyRefusal, ioPreconditionNotes } from './io.js';
import { irqChanges } from './irqs.js';
import { cacheSizingText, sizeCache } from './page-cache.js';
import { tieDisksToRaid } from './raid/disks.js';
import { planRaid } from './raid/plan.js';
import { v1Changes } from './v1.js';

/** Which cgroup layout the plan was made for, in one line (plan, check and topology print it). */
export function layoutOf(observed: ObservedState): string {
  const v1 = observed.v1;
  if (v1) {
    const where = `cpuset at /sys/fs/cgroup/${v1.hierarchies.cpuset}`;
    return `${v1.layout === 'hybrid' ? 'hybrid (cgroup2 at /sys/fs/cgroup/unified, v1 controllers beside it)' : 'legacy (cgroup v1)'}: ${where}; isolate owns the v1 cpuset hierarchy (systemd does not manage it), one cpuset per workload`;
  }
  switch (observed.cgroup.layout) {
    case 'unified':
      return 'unified (cgroup v2 at /sys/fs/cgroup)';
    case 'none':
      return 'none (no cgroup hierarchy found under /sys/fs/cgroup)';
    default:
      return `${observed.cgroup.layout} (the cpuset controller is on no v1 hierarchy isolate can use)`;
  }
}

/** The arithmetic of each memory.low given as a write rate and a window (page-cache.ts). */
function cacheWindowNotes(topology: Topology, policy: Policy, allocation: Allocation, notes: string[]): void {
  for (const w of policy.workloads) {
    const low = w.memory.low;
    const a = allocation.workloads.find((x) => x.name === w.name);
    if (!low || !('writeRate' in low) || !a) continue;
    // The same scope memory.low was resolved in (allocate.ts resolveMemory): its mems nodes.
    const scope = topology.nodes.filter((n) => a.mems.includes(n.id)).reduce((s, n) => s + n.memoryBytes, 0);
    notes.push(cacheSizingText(w.name, low, sizeCache(low), a.mems, scope).note);
  }
}

export function planHost(topology: Topology, policy: Policy, observed: ObservedState): Plan {
  const warnings = [...topology.warnings];
  if (!observed.cgroup.writable && !observed.v1) {
    warnings.push(
      `apply would be refused: ${observed.cgroup.reason ?? 'cgroup v2 with the cpuset controller is required'}`,
    );
  }
  const allocation = allocate(topology, policy, observed, warnings);
  if (!observed.v1) {
    const refused = ioLatencyRefusal(policy, observed.io);
    if (refused) throw refused;
  }
  const changes = observed.v1
    ? v1Changes(topology, policy, allocation, observed, warnings)
    : cgroupChanges(topology, policy, allocation, observed, warnings);
  changes.push(...jvmOptionChanges(policy, allocation, observed, warnings));
  const notes = [...topology.notes];
  // Which io mechanism acts on each of the workloads' disks, and why (what the io changes above use).
  if (observed.disks && observed.io) {
    notes.push(...ioPreconditionNotes(observed.disks, observed.io));
    if (!observed.v1) notes.push(...ioLatencyNotes(policy, observed.io));
  }
  // Quiet cores, after the cgroup changes: the allocation they follow is then in force.
  if (observed.irqs)
    changes.push(...irqChanges(topology, policy, allocation, observed.irqs, warnings, notes));
  if (policy.raid && observed.raid) {
    // RAID changes join the same plan, journal and rollback as the cgroup changes, after them.
    const r = planRaid(policy.raid, observed.raid);
    changes.push(...r.changes);
    warnings.push(
      ...observed.raid.findings.filter((f) => f.severity !== 'info').map((f) => `raid: ${f.message}`),
      ...r.warnings.map((w) => `raid: ${w}`),
    );
  }
  let raidDisks: Plan['raidDisks'];
  if (observed.raid && observed.disks) {
    // Which logical drives hold the exclusive workloads' data: their write cache is what appends wait on.
    const exclusive = new Set(policy.workloads.filter((w) => w.class === 'exclusive').map((w) => w.name));
    const t = tieDisksToRaid(observed.disks, exclusive, observed.raid);
    notes.push(...t.notes);
    warnings.push(...t.warnings);
    if (t.ties.length > 0) raidDisks = t.ties;
  }
  cacheWindowNotes(topology, policy, allocation, notes);
  return {
    allocation,
    changes,
    warnings,
    notes,
    layout: layoutOf(observed),
    ...(raidDisks ? { raidDisks } : {}),
  };
}
