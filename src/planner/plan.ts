// The planner: topology + policy + observed state → allocation → ordered changes. Pure.
import type { ObservedState } from '../cgroup/observed.js';
import type { Policy } from '../policy/types.js';
import type { Topology } from '../topology/model.js';
import { allocate } from './allocate.js';
import { cgroupChanges } from './changes.js';
import type { Plan } from './types.js';

export function planHost(topology: Topology, policy: Policy, observed: ObservedState): Plan {
  const warnings = [...topology.warnings];
  if (!observed.cgroup.writable) {
    warnings.push(
      `apply would be refused: ${observed.cgroup.reason ?? 'cgroup v2 with the cpuset controller is required'}`,
    );
  }
  const allocation = allocate(topology, policy, observed, warnings);
  const changes = cgroupChanges(topology, policy, allocation, observed, warnings);
  return { allocation, changes, warnings };
}
