import type { WorkloadDisks } from './disks.js';
import type { IoFacts } from './io.js';
import type { ObservedIrqs } from './irq.js';
import type { RaidObservation } from './raid.js';

/**
 * What the backends saw on the host. The planner is pure: it receives this snapshot and
 * diffs the desired state against it. Produced by the cgroup backend's observer (src/cgroup).
 */
export interface ObservedState {
  cgroup: ObservedCgroupFs;
  /** PIDs matched by each process-matcher workload, by workload name (empty when none run). */
  processes: Record<string, number[]>;
  /** Current cgroup (path relative to the mount) of every matched PID, for `cgroup.procs` changes. */
  processCgroups?: Record<number, string>;
  /** RAID controllers as their vendor tools reported them; absent when the policy asks no RAID setting. */
  raid?: RaidObservation;
  /**
   * systemd's view of the units behind the policy's cgroups, when systemd runs the host: their
   * properties (`AllowedCPUs`, `MemoryLow`, ...) as `systemctl show` prints them. Absent: no systemd
   * (or a --root that is not the live host), so every cgroup is written through cgroupfs.
   */
  systemd?: ObservedSystemd;
  /**
   * The cgroup v1 view, present when the host's cpuset controller is on a v1 hierarchy (legacy or
   * hybrid layout): then the v1 backend plans and applies, and `cgroup` only reports the layout.
   */
  v1?: ObservedV1;
  /**
   * The CPUs isolate last gave each exclusive workload (its checkpoint, ops/assignment.ts), when it
   * was made for the same policy and topology: the planner keeps those, not whatever the workload's
   * own cpuset reads now (a hand-made write there is drift to revert, not a choice to adopt).
   */
  assignment?: Record<string, string>;
  /**
   * IRQs, NIC queue steering masks and the workqueue cpumask (src/irq/observe.ts); absent when the
   * root has no /proc/irq (then no interrupt is planned).
   */
  irqs?: ObservedIrqs;
  /**
   * The disks under each workload's data directories (`disks:` in the policy) and what decides which
   * io mechanism can act on them; absent when no workload names its data.
   */
  disks?: WorkloadDisks[];
  io?: IoFacts;
}

/** One v1 cgroup: its interface files (only those present) and whether it holds tasks itself. */
export interface ObservedV1Group {
  exists: boolean;
  values: Record<string, string>;
  /** The cgroup's own `tasks` is non-empty. */
  hasTasks: boolean;
}

export interface ObservedV1 {
  layout: 'legacy' | 'hybrid';
  /** v1 controller → hierarchy (mount directory under /sys/fs/cgroup, e.g. `cpu,cpuacct`). */
  hierarchies: Record<string, string>;
  /** memory.memsw.* exist (swap accounting on: `swapaccount=1`). */
  swapAccounting: boolean;
  /** Names of the cpuset root's child cgroups (strict fences the others). */
  topLevel: string[];
  /** Cpuset cgroups by path: the top-level ones and the ones isolate would create. */
  cpusets: Record<string, ObservedV1Group>;
  /** Cgroups of other hierarchies the policy's memory and cpu settings go to, by `hierarchy:path`. */
  groups: Record<string, ObservedV1Group>;
  /** PIDs that belong to each workload by its match (userspace processes only), by workload name. */
  members: Record<string, number[]>;
  /** Threads of those processes that sit in another cpuset than their workload's now: tid → cpuset path. */
  strayThreads: Record<string, Record<number, string>>;
  /** The cpuset cgroup of every PID listed above, and of the root's processes. */
  cpusetOf: Record<number, string>;
  /** Userspace processes in the cpuset root cgroup (strict moves them to the housekeeping cpuset). */
  rootProcs: number[];
  /**
   * Those of `rootProcs` whose command line runs Kafka's main class (`kafka.Kafka`): a broker that no
   * exclusive workload matched (a typo in its match), which strict would move to housekeeping.
   */
  rootBrokers?: number[];
}

export interface ObservedSystemd {
  version: number | null;
  /**
   * Unit name → property → value as systemctl prints it: the SYSTEMD_PROPERTY ones, and `Slice`
   * (configured), `ControlGroup` (where it runs now; empty when stopped), `Delegate` (`yes`/`no`).
   */
  units: Record<string, Record<string, string>>;
}

export type CgroupLayout = 'unified' | 'hybrid' | 'legacy' | 'none';

/** The kernel parameter every v1 refusal names: systemd then mounts the unified hierarchy only. */
export const UNIFIED_PARAM = 'systemd.unified_cgroup_hierarchy=1';

export interface ObservedCgroupFs {
  layout: CgroupLayout;
  /** True when isolate may write: unified v2 with the cpuset controller available at the root. */
  writable: boolean;
  /** Why writes would be refused, when `writable` is false. */
  reason?: string;
  /** cgroup2 mount point relative to --root, normally `sys/fs/cgroup`. */
  mount: string;
  features: { partition: boolean; exclusive: boolean; cpuIdle: boolean; memoryMin: boolean };
  /** Controllers listed in the root's cgroup.controllers. */
  rootControllers: string[];
  /** Controllers enabled in the root's cgroup.subtree_control. */
  rootSubtreeControl: string[];
  /** Names of the root's child cgroups (for `strict: true`). */
  topLevel: string[];
  /** systemd unit → cgroup path, for units named in the policy (null when the unit has no cgroup). */
  units: Record<string, string | null>;
  /** The cgroups the policy touches and the top-level ones, by path relative to the mount (`/kafka.slice`). */
  groups: Record<string, ObservedGroup>;
  /** Kernel release (`/proc/sys/kernel/osrelease`), when readable. */
  kernel?: string;
}

export interface ObservedGroup {
  exists: boolean;
  /** Raw file contents, trimmed: `cpuset.cpus`, `cpuset.mems`, `memory.low`, `cgroup.subtree_control`, ... */
  values: Record<string, string>;
  /** True when systemd created this cgroup (a unit, slice or scope): writes there are undone by daemon-reload. */
  ownedBySystemd: boolean;
}

/** The observation used when no cgroup v2 hierarchy can be read (plan still works, apply refuses). */
export function unavailableCgroupFs(layout: CgroupLayout, reason: string): ObservedCgroupFs {
  return {
    layout,
    writable: false,
    reason,
    mount: 'sys/fs/cgroup',
    features: { partition: false, exclusive: false, cpuIdle: false, memoryMin: false },
    rootControllers: [],
    rootSubtreeControl: [],
    topLevel: [],
    units: {},
    groups: {},
  };
}
