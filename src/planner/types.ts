import type { CpuSet } from '../topology/cpuset.js';

/**
 * One setting to change on the host. Every writer (cgroupfs, systemd, a RAID tool) consumes the
 * same shape, so `plan` can show, and `apply` journal and roll back, all changes alike.
 */
export interface Change {
  /** Which backend carries it out. */
  backend: 'cgroupfs' | 'systemd' | 'raid';
  /**
   * What is changed: a cgroup path relative to the cgroup2 mount (`/kafka.slice`), a systemd unit
   * (`kafka.service`), or a RAID logical drive (`storcli:/c0/v0`).
   */
  target: string;
  /** The setting: `cpuset.cpus`, `memory.low`, `AllowedCPUs`, `writeCache`, `cgroup.procs`, `mkdir` ... */
  setting: string;
  /** Value observed now; null when the target does not exist yet or the value could not be read. */
  from: string | null;
  to: string;
  /** The policy workload this change serves, when it serves one. */
  workload?: string;
  /** Why the change is needed, or a caveat an SRE should read before applying it. */
  note?: string;
}

export type WorkloadClass = 'exclusive' | 'batch';

/** What the planner decided a workload gets. */
export interface WorkloadAllocation {
  name: string;
  class: WorkloadClass;
  /** The cgroup the workload's settings are written to, relative to the cgroup2 mount. */
  target: string;
  cpus: CpuSet;
  /** Physical cores, each identified by its lowest CPU id. Empty for batch workloads. */
  cores: number[];
  /** NUMA nodes the CPUs lie on. */
  nodes: number[];
  /** NUMA nodes memory may come from (cpuset.mems). */
  mems: number[];
  /** Resolved memory settings in bytes ("max" for no limit); absent keys are left alone. */
  memory: Partial<Record<'min' | 'low' | 'high' | 'max', number | 'max'>>;
}

export interface Allocation {
  workloads: WorkloadAllocation[];
  /** Housekeeping CPUs no exclusive workload may take. */
  reserved: CpuSet;
}

export interface Plan {
  allocation: Allocation;
  changes: Change[];
  warnings: string[];
}
