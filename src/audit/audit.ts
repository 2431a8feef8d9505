// The host check: reads /proc and the cgroup files (never isolate's own journal) and judges them
// against the allocation the planner made.
import path from 'node:path';
import { cgroupDir, normCgPath, readTrimSync } from '../cgroup/fsutil.js';
import { PSI_RESOURCES, parsePsi } from '../cgroup/psi.js';
import { CpuSet } from '../model/cpuset.js';
import { type Finding, verdictOf } from '../model/finding.js';
import type { WorkloadAllocation } from '../model/plan.js';
import { nicIrqs } from './irqs.js';
import type { DeliveredReport } from '../irq/delivered.js';
import { interruptFindings } from './interrupts.js';
import { type IoReport, ioFindings } from './io.js';
import { auditJvms } from './jvm.js';
import type { CpuChange } from '../model/jvm.js';
import { numaBytes, numaMapsAnonBytes } from './numa.js';
import type { CheckReport, WorkloadCheck } from './report.js';
import { hostFindings, offNodeBytes, type WorkloadFacts, workloadFindings } from './rules.js';
import { type FenceScope, type ScanResult, type ScanSpec, scanThreads } from './threads.js';

export interface AuditInput {
  root: string;
  allocation: WorkloadAllocation[];
  /** Whether the kernel has cpuset partitions (exclusive top-level targets should be roots). */
  partitions: boolean;
  pendingChanges: number;
  policy?: string;
  extraFindings?: Finding[];
  /** The policy's `strict`: whether every thread, or only the batch workloads, must stay off. Default true. */
  strict?: boolean;
  /** cgroup v1 host: the cpuset hierarchy's mount directory the targets lie in. */
  v1CpusetDir?: string;
  /** ScanSpec.listCap: how many threads each list of the report keeps (all are counted). */
  listCap?: number;
  /**
   * When isolate last changed the CPUs of `pid` of `workload` (apply/journal.ts cpuChangeOf, from the
   * journal `check` read): absent, every change is undated and JVMs are judged by their threads.
   */
  cpuChange?: (workload: string, pid: number) => CpuChange | null;
  /**
   * Interrupts delivered to the exclusive CPUs over the check's window (irq/delivered.ts), and the
   * IRQs expected there (number → why: kernel-managed, or a NIC on its workload's own cores).
   */
  interrupts?: { report: DeliveredReport; expected: ReadonlyMap<string, string> };
  /** I/O of every workload on the exclusive workloads' disks over the check's window (audit/io.ts). */
  io?: IoReport;
}

/** The host check: scan every thread, read each exclusive workload's cgroup, judge. */
export function audit(input: AuditInput): CheckReport {
  const t0 = performance.now();
  const excl = input.allocation.filter((a) => a.class === 'exclusive');
  // What the policy promised to fence; the scan sorts the threads it finds by it.
  const scope: FenceScope = {
    strict: input.strict ?? true,
    batchTargets: input.allocation.filter((a) => a.class === 'batch').map((a) => normCgPath(a.target)),
    ...(input.v1CpusetDir ? { v1: true } : {}),
  };
  const spec: ScanSpec = {
    exclusive: excl.map((a) => ({ name: a.name, target: a.target, cpus: a.cpus })),
    fence: scope,
    v1CpusetDir: input.v1CpusetDir,
    listCap: input.listCap,
  };
  const all = excl.reduce((acc, a) => acc.union(a.cpus), CpuSet.EMPTY);
  const scan = scanThreads(input.root, spec);
  const scanMs = performance.now() - t0;
  const findings: Finding[] = [...(input.extraFindings ?? [])];

  const workloads: WorkloadCheck[] = excl.map((a, i) => {
    const facts = workloadFacts(input.root, a, scan.perWorkload[i]!, input.v1CpusetDir);
    findings.push(...workloadFindings(a, facts, input.partitions));
    return {
      name: a.name,
      class: a.class,
      target: a.target,
      cpus: a.cpus.toString(),
      mems: a.mems,
      threads: facts.threads,
      outside: facts.outside,
      outsideCount: facts.outsideCount,
      partition: facts.partition,
      effectiveCpus: facts.effectiveText,
      memoryByNode: facts.memoryByNode,
      offNodeBytes: offNodeBytes(a, facts.memoryByNode),
      // v1 has no per-cgroup pressure files.
      pressure: input.v1CpusetDir ? {} : pressureOf(input.root, a.target),
    };
  });
  findings.push(...hostFindings(scan, all, input.pendingChanges, scope));
  const jvm = auditJvms({
    root: input.root,
    allocation: input.allocation,
    cpuChange: input.cpuChange ?? (() => null),
    v1CpusetDir: input.v1CpusetDir,
  });
  findings.push(...jvm.findings);
  if (scan.unreadable.count > 0) {
    // What could not be read is not taken for fenced: the check cannot say OK for it.
    findings.push({
      severity: 'unknown',
      message: `${scan.unreadable.count} thread${scan.unreadable.count === 1 ? '' : 's'} could not be read (${[...scan.unreadable.reasons].slice(0, 3).join('; ')}): where they may run is unknown`,
    });
  }

  if (input.interrupts)
    findings.push(...interruptFindings(input.interrupts.report, input.interrupts.expected));
  if (input.io) findings.push(...ioFindings(input.io));
  const irqs = nicIrqs(input.root, all);
  let wqMask: string | null = null;
  const wqRaw = readTrimSync(path.join(input.root, 'sys/devices/virtual/workqueue/cpumask'));
  if (wqRaw) {
    try {
      wqMask = CpuSet.parseMask(wqRaw).toString();
    } catch {}
  }

  const verdict = verdictOf(findings);
  const summary =
    verdict.findings.length > 0
      ? verdict.findings
          .filter((f) => f.severity === verdict.findings[0]!.severity)
          .map((f) => f.message)
          .join('; ')
      : excl.length === 0
        ? 'no exclusive workloads in the policy'
        : `${excl.map((a) => `${a.name} alone on CPUs ${a.cpus}`).join(', ')}; ${scan.threads} threads checked`;
  return {
    status: verdict.status,
    summary,
    policy: input.policy,
    exclusiveCpus: all.toString(),
    workloads,
    violations: scan.violations.items,
    unfenced: scan.unfenced.items,
    strict: scope.strict,
    kernelViolations: scan.kernelViolations.items,
    perCpuKernelThreads: scan.perCpu,
    unboundWorkqueueWorkers: scan.unboundWorkers.items,
    workqueueCpumask: wqMask,
    irqs,
    ...(input.interrupts ? { interrupts: input.interrupts.report } : {}),
    ...(input.io ? { io: input.io } : {}),
    jvms: jvm.jvms,
    jvmOversized: jvm.oversized,
    pendingChanges: input.pendingChanges,
    findings,
    stats: { processes: scan.processes, threads: scan.threads, scanMs: Math.round(scanMs) },
    counts: {
      violations: scan.violations.count,
      unfenced: scan.unfenced.count,
      kernelViolations: scan.kernelViolations.count,
      outside: scan.perWorkload.reduce((n, w) => n + w.outside.count, 0),
    },
  };
}

function workloadFacts(
  root: string,
  a: WorkloadAllocation,
  scanned: ScanResult['perWorkload'][number],
  v1CpusetDir?: string,
): WorkloadFacts {
  const dir = v1CpusetDir ? path.join(v1CpusetDir, normCgPath(a.target)) : cgroupDir(root, a.target);
  // v1 names the same fact cpuset.effective_cpus, and has no partitions or per-cgroup numa_stat here.
  const effectiveText = readTrimSync(
    path.join(dir, v1CpusetDir ? 'cpuset.effective_cpus' : 'cpuset.cpus.effective'),
  );
  let effectiveCpus: CpuSet | null = null;
  if (effectiveText !== null) {
    try {
      effectiveCpus = CpuSet.parse(effectiveText);
    } catch {}
  }
  const numa = v1CpusetDir ? null : readTrimSync(path.join(dir, 'memory.numa_stat'));
  return {
    partition: v1CpusetDir ? null : readTrimSync(path.join(dir, 'cpuset.cpus.partition')),
    effectiveCpus,
    effectiveText,
    // v1: the cpuset is not the memory cgroup, so its processes' anonymous memory is summed from
    // their numa_maps (v1 leaves pages where they were unless memory_migrate is set).
    memoryByNode: numa ? numaBytes(numa) : v1CpusetDir ? v1MemoryByNode(root, dir) : {},
    threads: scanned.threads,
    outside: scanned.outside.items,
    outsideCount: scanned.outside.count,
    topLevel: normCgPath(a.target).split('/').length === 2,
  };
}

/** The workload cgroup's pressure stall information, per resource present. */
function pressureOf(root: string, target: string): WorkloadCheck['pressure'] {
  const out: WorkloadCheck['pressure'] = {};
  for (const r of PSI_RESOURCES) {
    const text = readTrimSync(path.join(cgroupDir(root, target), `${r}.pressure`));
    if (text !== null) out[r] = parsePsi(text);
  }
  return out;
}

/** Anonymous memory per node of the processes in a v1 cpuset (its `cgroup.procs`). */
function v1MemoryByNode(root: string, dir: string): Record<string, number> {
  const out: Record<string, number> = {};
  const procs = readTrimSync(path.join(dir, 'cgroup.procs'));
  for (const pid of procs?.split('\n') ?? []) {
    if (!/^\d+$/.test(pid)) continue;
    const maps = readTrimSync(path.join(root, 'proc', pid, 'numa_maps'));
    if (maps) numaMapsAnonBytes(maps, out);
  }
  return out;
}
