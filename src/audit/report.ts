// The host check's report: what `check --json` prints and the agent exports.
import type { Psi, PsiResource } from '../cgroup/psi.js';
import type { Finding, Status } from '../model/finding.js';
import type { DeliveredReport } from '../irq/delivered.js';
import type { IoReport } from './io.js';
import type { IrqInfo } from './irqs.js';
import type { JvmCheck } from './jvm.js';
import type { ThreadInfo } from './threads.js';

export interface WorkloadCheck {
  name: string;
  class: 'exclusive' | 'batch';
  target: string;
  cpus: string;
  mems: number[];
  threads: number;
  /** Threads of the workload allowed to run outside its CPUs: the first 100. */
  outside: ThreadInfo[];
  /** How many threads of the workload are allowed outside its CPUs, all of them (`outside` keeps 100). */
  outsideCount: number;
  partition: string | null;
  effectiveCpus: string | null;
  /** Resident anon + file bytes per NUMA node (memory.numa_stat). */
  memoryByNode: Record<string, number>;
  offNodeBytes: number;
  /** Pressure stall information of the workload's cgroup (cpu, memory, io), where the kernel has it. */
  pressure: Partial<Record<PsiResource, Psi>>;
}

export interface CheckReport {
  status: Status;
  summary: string;
  policy?: string;
  exclusiveCpus: string;
  workloads: WorkloadCheck[];
  /** Threads outside every exclusive workload that may run on an exclusive CPU (user space). */
  violations: ThreadInfo[];
  /** With `strict: false`: other threads allowed on exclusive CPUs, which the policy does not fence (not counted). */
  unfenced: ThreadInfo[];
  /** The policy's `strict`, which decides what counts as a violation. */
  strict: boolean;
  /** Unbound kernel threads allowed on exclusive CPUs (cgroupfs cannot move them; a partition does). */
  kernelViolations: ThreadInfo[];
  /** Per-CPU kernel threads (ksoftirqd/N, migration/N, kworker/N:M): listed apart, never violations. */
  perCpuKernelThreads: { count: number; onExclusive: number; sample: string[] };
  /**
   * Unbound workqueue workers (kworker/uN:M) allowed on exclusive CPUs: listed apart, not counted.
   * They follow `workqueueCpumask`, not cpusets (kernels before 6.8 keep them on partitions too).
   */
  unboundWorkqueueWorkers: ThreadInfo[];
  /** /sys/devices/virtual/workqueue/cpumask as a list, when readable. */
  workqueueCpumask: string | null;
  irqs: IrqInfo[];
  /**
   * Interrupts delivered to the exclusive CPUs over the check's window, per source (device IRQs from
   * /proc/interrupts, NET_RX from /proc/softirqs); absent when the root has neither file.
   */
  interrupts?: DeliveredReport;
  /**
   * I/O over the check's window on the disks of the exclusive workloads' data directories, per
   * workload and disk, and each workload's io pressure; absent when no workload names `disks:`.
   */
  io?: IoReport;
  /** The workloads' JVMs (at most 32 a workload), their pools judged against their CPUs. */
  jvms: JvmCheck[];
  /** Per workload: its JVMs whose GC/JIT pools were sized for more CPUs than they may use now. */
  jvmOversized: Record<string, number>;
  pendingChanges: number;
  findings: Finding[];
  stats: { processes: number; threads: number; scanMs: number };
  /**
   * How many there are of each list above, which keep at most 1,000 entries (`outside`: 100 a
   * workload): what the agent exports, so a badly broken host is not reported as 1,000.
   */
  counts: { violations: number; unfenced: number; kernelViolations: number; outside: number };
}
