// What a cgroup v1 host cannot express: a policy field v1 has no file or hierarchy for is refused
// before anything is planned (v1.ts), naming the layout, the field and the kernel parameter.
import { formatPath } from '../model/field.js';
import { type ObservedV1, UNIFIED_PARAM } from '../model/observed.js';
import type { Policy, WorkloadSpec } from '../model/policy.js';
import { policyError } from './allocate.js';

function layoutName(v1: ObservedV1): string {
  return v1.layout === 'hybrid' ? 'hybrid cgroup layout (cpuset on v1)' : 'legacy cgroup v1 layout';
}

/**
 * The way out of v1, where there is one: cpuset on cgroup v2 needs Linux 5.0, so a RHEL 7 host (3.10)
 * cannot take it and needs the v1 substitute the refusal names, or to do without.
 */
const BOOT_UNIFIED = `boot a kernel of 5.0 or later (cpuset on cgroup v2) with ${UNIFIED_PARAM} (a 3.10 kernel, as RHEL 7's, cannot)`;

/**
 * A policy field this host's layout cannot express: one line with the layout, the feature, what v1
 * offers instead (`instead`, where it offers something) and the fixes.
 */
function refuse(
  policy: Policy,
  w: WorkloadSpec,
  field: string[],
  v1: ObservedV1,
  why: string,
  instead?: string,
) {
  return policyError(
    policy,
    [...w.path, ...field],
    `${why} on this ${layoutName(v1)}${instead ? `; ${instead}` : ''}; remove ${formatPath([...w.path, ...field])} from the policy, or ${BOOT_UNIFIED}`,
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
        "v1 has no way to keep Kafka's page cache from reclaim: what it offers is capping the batch workloads (their memory.high/max, memory.limit_in_bytes on v1), which isolate writes",
      );
    }
  }
  if (w.cpu?.idle !== undefined) {
    throw refuse(
      policy,
      w,
      ['cpu', 'idle'],
      v1,
      'cpu.idle (cgroup SCHED_IDLE) does not exist in cgroup v1',
      'the v1 substitute is a low cpu.weight (written as cpu.shares on v1, e.g. weight: 1 → shares 10)',
    );
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
      "what v1 offers is a weight on BFQ disks and the batch workloads' caps (io.weight and io.max in the policy, blkio.bfq.weight_device and blkio.throttle.* on v1)",
    );
  }
  if (w.match.kind === 'cgroup' && !v1.hierarchies[w.match.hierarchy ?? 'cpu']) {
    throw policyError(
      policy,
      [...w.path, 'match', 'hierarchy'],
      `no cgroup v1 hierarchy with the ${w.match.hierarchy ?? 'cpu'} controller is mounted under /sys/fs/cgroup on this ${layoutName(v1)}; name the controller whose hierarchy ${w.match.path} lies in (match.hierarchy), or ${BOOT_UNIFIED}`,
    );
  }
}
