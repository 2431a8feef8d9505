import type { CpuSet } from './cpuset.js';
import type { WorkloadDisks } from './disks.js';
import type { RaidDiskTie } from './raid-disks.js';
import type { IrqOwner, IrqSetting } from './irq.js';

export type ChangeBackend = 'cgroupfs' | 'systemd' | 'raid' | 'irq';

/** Files isolate writes in a cgroup it owns (and `mkdir` to create one). */
export type CgroupSetting =
  | 'mkdir'
  | 'cgroup.subtree_control'
  | 'cgroup.procs'
  | 'cpuset.cpus'
  | 'cpuset.mems'
  | 'cpuset.cpus.exclusive'
  | 'cpuset.cpus.partition'
  | 'memory.min'
  | 'memory.low'
  | 'memory.high'
  | 'memory.max'
  | 'memory.oom.group'
  | 'cpu.weight'
  | 'cpu.idle'
  // Per-device io files: a change's `from`/`to` is one device's line ("8:16 target=25000"), model/io.ts.
  | 'io.latency'
  | 'io.weight'
  | 'io.bfq.weight'
  | 'io.max'
  // cgroup v1 only (a change with `hierarchy`):
  | 'tasks'
  | 'cpuset.cpu_exclusive'
  | 'cpuset.mem_exclusive'
  | 'cpuset.memory_migrate'
  | 'memory.limit_in_bytes'
  | 'memory.soft_limit_in_bytes'
  | 'memory.memsw.limit_in_bytes'
  | 'cpu.shares'
  | 'blkio.bfq.weight_device'
  | 'blkio.throttle.read_bps_device'
  | 'blkio.throttle.write_bps_device'
  | 'blkio.throttle.read_iops_device'
  | 'blkio.throttle.write_iops_device';

export const CGROUP_SETTINGS: readonly CgroupSetting[] = [
  'mkdir',
  'cgroup.subtree_control',
  'cgroup.procs',
  'cpuset.cpus',
  'cpuset.mems',
  'cpuset.cpus.exclusive',
  'cpuset.cpus.partition',
  'memory.min',
  'memory.low',
  'memory.high',
  'memory.max',
  'memory.oom.group',
  'cpu.weight',
  'cpu.idle',
  'io.latency',
  'io.weight',
  'io.bfq.weight',
  'io.max',
  'tasks',
  'cpuset.cpu_exclusive',
  'cpuset.mem_exclusive',
  'cpuset.memory_migrate',
  'memory.limit_in_bytes',
  'memory.soft_limit_in_bytes',
  'memory.memsw.limit_in_bytes',
  'cpu.shares',
  'blkio.bfq.weight_device',
  'blkio.throttle.read_bps_device',
  'blkio.throttle.write_bps_device',
  'blkio.throttle.read_iops_device',
  'blkio.throttle.write_iops_device',
];

/**
 * Unit properties isolate sets through systemd: `systemctl set-property` for all but `Slice`, which
 * systemd cannot change on a loaded unit and isolate writes as a drop-in (model/systemd.ts
 * sliceDropInPath), taking effect at the unit's next restart, and `ActiveState`, which isolate sets
 * (systemctl start/stop) only for its own anchor slices (model/systemd.ts anchorSliceFor).
 * `JvmOptions` is the JVM options drop-in (model/jvm-options.ts), also effective at the next restart.
 * `IrqbalanceBans` is irqbalance.service's environment file and drop-in (model/irqbalance.ts); apply
 * and rollback restart irqbalance once.
 */
export type SystemdProperty =
  | 'Slice'
  | 'JvmOptions'
  | 'IrqbalanceBans'
  | 'ActiveState'
  | 'AllowedCPUs'
  | 'AllowedMemoryNodes'
  | 'MemoryMin'
  | 'MemoryLow'
  | 'MemoryHigh'
  | 'MemoryMax'
  | 'CPUWeight'
  // Per-device io properties: a change's `from`/`to` is one entry ("/dev/block/8:16 25ms"), model/io.ts.
  | 'IODeviceLatencyTargetSec'
  | 'IODeviceWeight'
  | 'IOReadBandwidthMax'
  | 'IOWriteBandwidthMax'
  | 'IOReadIOPSMax'
  | 'IOWriteIOPSMax';

/** RAID logical-drive (or controller-wide) cache settings. */
export type RaidSetting = 'writeCache' | 'readAhead' | 'ioPolicy' | 'diskWriteCache';
export const RAID_SETTINGS: readonly RaidSetting[] = [
  'writeCache',
  'readAhead',
  'ioPolicy',
  'diskWriteCache',
];

interface ChangeBase {
  /**
   * What is changed: a cgroup path relative to the cgroup2 mount (`/kafka.slice`), a systemd unit
   * (`kafka.service`), a RAID logical drive (`storcli:/c0/v0`), or an IRQ backend directory
   * (`/proc/irq/25`, `/sys/class/net/eth0/queues/rx-0`).
   */
  target: string;
  /** Value observed when planning; null when the target does not exist yet or could not be read. */
  from: string | null;
  to: string;
  /** The policy workload this change serves, when it serves one. */
  workload?: string;
  /** Why the change is needed, or a caveat an SRE should read before applying it. */
  note?: string;
}

export interface CgroupChange extends ChangeBase {
  backend: 'cgroupfs';
  setting: CgroupSetting;
  /**
   * cgroup v1 only: the hierarchy the target lies in, named as its mount directory under
   * /sys/fs/cgroup (`cpuset`, `memory`, `cpu,cpuacct`). Absent: the unified (v2) hierarchy.
   */
  hierarchy?: string;
  /**
   * A process or thread move only: the moved task's start time (field 22 of /proc/ID/stat, clock
   * ticks since boot), journaled so the undo moves back only that task, never another task that got
   * its ID since (cgroup/task-start.ts).
   */
  startTime?: string;
}
export interface SystemdChange extends ChangeBase {
  backend: 'systemd';
  setting: SystemdProperty;
}
export interface RaidChange extends ChangeBase {
  backend: 'raid';
  setting: RaidSetting;
}

/**
 * An IRQ's affinity (`/proc/irq/N` smp_affinity_list), a NIC queue's steering mask
 * (`/sys/class/net/DEV/queues/rx-N` rps_cpus, `tx-N` xps_cpus) or the unbound workqueues' cpumask
 * (`/sys/devices/virtual/workqueue` cpumask): the target is the directory, the setting its file.
 */
export interface IrqChange extends ChangeBase {
  backend: 'irq';
  setting: IrqSetting;
  /**
   * Whose IRQ number or NIC queue it was at plan time: the write goes only to that owner, and the
   * undo (journaled with the change) restores only while it still is. Absent: none to check (the
   * workqueue, default_smp_affinity) or a plan or journal written before owners were recorded.
   */
  owner?: IrqOwner;
}

/**
 * One setting to change on the host. Every backend consumes the same shape, so `plan` can show,
 * and `apply` journal and roll back, all changes alike.
 */
export type Change = CgroupChange | SystemdChange | RaidChange | IrqChange;

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
  /** Why the planner chose these CPUs, in one short sentence (kept / near eth0 / most free / lowest id). */
  reason: string;
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
  /** Facts worth knowing that need no action (INFO), such as CPUs the kernel lists but ignores. */
  notes: string[];
  /** The cgroup layout the plan was made for (unified, hybrid, legacy), as one line. */
  layout?: string;
  /** The disks under each workload's data directories (`disks:` in the policy), when they were read. */
  disks?: WorkloadDisks[];
  /** The RAID logical drives that exclusive workloads' disks are, when the controllers were read. */
  raidDisks?: RaidDiskTie[];
}
