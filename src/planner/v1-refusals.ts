// What a cgroup v1 host cannot express: a policy field v1 has no file or hierarchy for is refused
// before anything is planned (v1.ts), naming the layout, the field and the kernel parameter.
import { formatPath } from '../model/field.js';
import { type ObservedV1, UNIFIED_PARAM } from '../model/observed.js';
import type { Policy, WorkloadSpec } from '../model/policy.js';
import { policyError } from './allocate.js';

function layoutName(v1: ObservedV1): string {
  return v1.layout === 'hybrid' ? 'hybrid cgroup layout (cpuset on v1)' : 'legacy cgroup v1 layout';
}

/** A policy field this host's layout cannot express: one line with the layout, the feature and the fix. */
function refuse(policy: Policy, w: WorkloadSpec, field: string[], v1: ObservedV1, why: string) {
  return policyError(
    policy,
    [...w.path, ...field],
    `${why} on this ${layoutName(v1)}; remove ${formatPath([...w.path, ...field])} from the policy or boot with ${UNIFIED_PARAM}`,
  );
}

/** Throws the refusal of the first field of a workload this host's v1 layout cannot express. */
export function refuseInexpressible(policy: Policy, w: WorkloadSpec, v1: ObservedV1): void {
  for (const key of ['min', 'low'] as const) {
    if (w.memory[key] !== undefined) {
      throw refuse(
        policy,
        w,
        ['memory', key],
        v1,
        `memory.${key} protection does not exist in cgroup v1 (no memory.${key} file)`,
      );
    }
  }
  if (w.cpu?.idle !== undefined) {
    throw refuse(policy, w, ['cpu', 'idle'], v1, 'cpu.idle (cgroup SCHED_IDLE) does not exist in cgroup v1');
  }
  const wantsMemory = w.memory.high !== undefined || w.memory.max !== undefined;
  if (w.match.kind === 'process' && (wantsMemory || w.cpu?.weight !== undefined)) {
    throw refuse(
      policy,
      w,
      wantsMemory ? ['memory'] : ['cpu', 'weight'],
      v1,
      "a process-matched workload gets only a cpuset on cgroup v1 (its memory and cpu cgroups are not isolate's); match it by cgroup or systemdUnit for memory and cpu settings",
    );
  }
  if (wantsMemory && !v1.hierarchies.memory) {
    throw refuse(policy, w, ['memory'], v1, 'no cgroup v1 memory hierarchy is mounted under /sys/fs/cgroup');
  }
  if (w.cpu?.weight !== undefined && !v1.hierarchies.cpu) {
    throw refuse(
      policy,
      w,
      ['cpu', 'weight'],
      v1,
      'no cgroup v1 cpu hierarchy is mounted under /sys/fs/cgroup',
    );
  }
  if (w.io && typeof w.io.latency === 'object') {
    throw refuse(
      policy,
      w,
      ['io', 'latency'],
      v1,
      'io.latency does not exist in cgroup v1 (blkio has BFQ weights and throttles only)',
    );
  }
  if (w.match.kind === 'cgroup' && !v1.hierarchies[w.match.hierarchy ?? 'cpu']) {
    throw policyError(
      policy,
      [...w.path, 'match', 'hierarchy'],
      `no cgroup v1 hierarchy with the ${w.match.hierarchy ?? 'cpu'} controller is mounted under /sys/fs/cgroup on this ${layoutName(v1)}; name the controller whose hierarchy ${w.match.path} lies in (match.hierarchy), or boot with ${UNIFIED_PARAM}`,
    );
  }
}
