// The planner: topology + policy + observed state (cgroup and RAID) → allocation → ordered changes.
// Pure: everything it knows comes in as arguments, so `plan`, `apply`, `check` and the agent agree.
import type { ObservedState } from '../model/observed.js';
import type { Plan } from '../model/plan.js';
import type { Policy } from '../model/policy.js';
import type { Topology } from '../model/topology.js';
import { allocate } from './allocate.js';
import { cgroupChanges } from './changes.js';
import { planRaid } from './raid/plan.js';

export function planHost(topology: Topology, policy: Policy, observed: ObservedState): Plan {
  const warnings = [...topology.warnings];
  if (!observed.cgroup.writable) {
    warnings.push(
      `apply would be refused: ${observed.cgroup.reason ?? 'cgroup v2 with the cpuset controller is required'}`,
    );
  }
  const allocation = allocate(topology, policy, observed, warnings);
  const changes = cgroupChanges(topology, policy, allocation, observed, warnings);
  if (policy.raid && observed.raid) {
    // RAID changes join the same plan, journal and rollback as the cgroup changes, after them.
    const r = planRaid(policy.raid, observed.raid);
    changes.push(...r.changes);
    warnings.push(
      ...observed.raid.findings.filter((f) => f.severity !== 'info').map((f) => `raid: ${f.message}`),
      ...r.warnings.map((w) => `raid: ${w}`),
    );
  }
  return { allocation, changes, warnings };
}
