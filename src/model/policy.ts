import type { RaidPolicy } from './raid-policy.js';
import type { CpuSet } from './cpuset.js';
import type { FieldPath } from './field.js';

/** A memory amount as written in the policy: bytes, or a percentage resolved at plan time. */
export type MemoryAmount = { bytes: number } | { percent: number } | { unlimited: true };

export type MemoryKey = 'min' | 'low' | 'high' | 'max';

export interface MemorySpec {
  min?: MemoryAmount;
  low?: MemoryAmount;
  high?: MemoryAmount;
  max?: MemoryAmount;
  /** Where memory may come from: `local` (the workload's own nodes), `all` nodes with memory, or a node list. */
  mems: 'local' | 'all' | CpuSet;
}

export type Match =
  | { kind: 'systemdUnit'; unit: string }
  /**
   * `hierarchy`: on cgroup v1 hosts, the controller whose hierarchy `path` lies in (default `cpu`,
   * where YARN's `cpu,cpuacct` /hadoop-yarn lives); ignored by the unified hierarchy.
   */
  | { kind: 'cgroup'; path: string; hierarchy?: string }
  | { kind: 'process'; cmdline?: string; exe?: string; user?: string | number };

export type DeviceRef = { kind: 'nic' | 'disk' | 'scsi'; name: string };

/**
 * Where a workload keeps its data: directories named in the policy, or a Kafka broker's
 * `server.properties`, read at plan time (its `log.dirs`, else `log.dir`) so the policy follows the
 * broker's own configuration instead of repeating it.
 */
export type DiskSource = { kind: 'paths'; paths: string[] } | { kind: 'kafkaConfig'; file: string };

/** The four caps of `io.max`, in bytes or I/Os per second. */
export type IoLimitKey = 'rbps' | 'wbps' | 'riops' | 'wiops';
export const IO_LIMIT_KEYS: readonly IoLimitKey[] = ['rbps', 'wbps', 'riops', 'wiops'];

/**
 * What the cgroup io controller gets on the exclusive workloads' disks (and only there). Resolved
 * with its defaults at load time: an exclusive workload with `disks:` gets a latency target and a
 * high weight, every batch workload (when some exclusive workload has disks) a low weight.
 */
export interface IoSpec {
  /** Exclusive only: io.latency target in microseconds, `auto` by the disk's kind, or `off`. */
  latency: { usec: number } | 'auto' | 'off';
  /** io.weight (1-10000) on those disks, or `off` to leave weights alone. */
  weight: number | 'off';
  /** Batch only: `io.max` caps on those disks (absent keys stay unlimited). */
  max: Partial<Record<IoLimitKey, number>>;
}

export interface JvmSpec {
  activeProcessorCount: 'auto';
  /** The environment variable the unit's launcher reads JVM options from (KAFKA_OPTS, JDK_JAVA_OPTIONS). */
  optionsVariable: string;
}

export interface WorkloadSpec {
  name: string;
  class: 'exclusive' | 'batch';
  /** Exclusive only: how many physical cores. */
  cores?: { count: number } | { percent: number };
  numa: 'single' | 'spread';
  near: DeviceRef[];
  match: Match;
  memory: MemorySpec;
  /** Exclusive only: the directories whose disks the workload's I/O lives on. */
  disks?: DiskSource;
  /** io settings on the exclusive workloads' disks; absent when no exclusive workload has disks. */
  io?: IoSpec;
  /**
   * Exclusive only: where the interrupts (and RPS/XPS) of its NICs go. `nics` defaults to the NICs of
   * `near`; `on`: the housekeeping CPUs of the workload's node (default) or its own cores.
   */
  irqs?: { nics?: string[]; on: 'housekeeping' | 'own' };
  /** Batch only: cgroup cpu.weight (1-10000) or SCHED_IDLE (`cpu.idle`). */
  cpu?: { weight?: number; idle?: boolean };
  /**
   * systemdUnit only: isolate appends `-XX:ActiveProcessorCount=N` (N: the workload's CPUs) to the
   * unit's JVM options variable through a drop-in of its own, so a restarted JVM sizes its GC and JIT
   * pools for the CPUs it gets, whatever its cpuset said at the moment it started.
   */
  jvm?: JvmSpec;
  /** Where in the policy file this workload sits, for error messages. */
  path: FieldPath;
}

export interface Policy {
  /** File the policy was read from. */
  source: string;
  apiVersion: 'isolate/v1';
  kind: 'HostPolicy';
  reserved: { cores: number } | { cpus: CpuSet };
  /** Fence every other top-level cgroup off the exclusive cores too. */
  strict: boolean;
  workloads: WorkloadSpec[];
  /**
   * Quiet cores: move movable device IRQs (and the RPS masks of NICs) off the exclusive CPUs
   * (`irqs`, default true), and the unbound workqueues (`workqueues`; absent: as `strict` says).
   */
  quiet: { irqs: boolean; workqueues?: boolean };
  raid?: RaidPolicy;
  /** Maps a field path back to `file:line:column` for errors raised after loading (e.g. by the planner). */
  locate(path: FieldPath, at?: 'key' | 'value'): string;
}
