// The JVM part of the host check: each workload's JVMs, their GC/JIT pools judged against the CPUs
// they may use now (model/jvm.ts), and for the exclusive ones the known causes of long JVM stalls on
// a host where other jobs do heavy I/O. Run on the audit's cadence, never every agent round.
import path from 'node:path';
import { cgroupDir, normCgPath, readTrimSync } from '../cgroup/fsutil.js';
import { bootTime, processesUnder, readJvms } from '../cgroup/jvm.js';
import type { Finding } from '../model/finding.js';
import { type CpuChange, type JvmFacts, type JvmJudgement, judgeJvm, sizingMessage } from '../model/jvm.js';
import type { WorkloadAllocation } from '../model/plan.js';

/** One JVM as `check --json` reports it. */
export interface JvmCheck extends JvmFacts, JvmJudgement {
  workload: string;
}

export interface JvmAuditInput {
  root: string;
  allocation: readonly WorkloadAllocation[];
  /** When isolate last changed the CPUs of `pid` of `workload` (apply/journal.ts cpuChangeOf). */
  cpuChange: (workload: string, pid: number) => CpuChange | null;
  v1CpusetDir?: string;
}

export interface JvmAudit {
  jvms: JvmCheck[];
  findings: Finding[];
  /** Per workload: its JVMs whose pools were sized for more CPUs than they may use now. */
  oversized: Record<string, number>;
}

/** What the host says beyond each JVM: THP's mode and, per exclusive workload, whether it may swap. */
export interface JvmHostFacts {
  /** The selected mode of /sys/kernel/mm/transparent_hugepage/enabled (`always`, `madvise`, `never`). */
  thp: string | null;
  /** The exclusive workloads' `memory.swap.max` while the host has swap (absent: no swap, or v1). */
  swapMax: Record<string, string>;
}

export function auditJvms(input: JvmAuditInput): JvmAudit {
  const { root } = input;
  const btime = bootTime(path.join(root, 'proc'));
  const jvms: JvmCheck[] = [];
  for (const a of input.allocation) {
    const dir = input.v1CpusetDir
      ? path.join(input.v1CpusetDir, normCgPath(a.target))
      : cgroupDir(root, a.target);
    const facts = readJvms(root, processesUnder(dir), { btime, perfData: a.class === 'exclusive' });
    for (const j of facts) {
      const v = judgeJvm(j, input.cpuChange(a.name, j.pid));
      jvms.push({ ...j, ...v, workload: a.name });
    }
  }
  const host = jvmHostFacts(input);
  return { jvms, ...jvmFindings(input.allocation, jvms, host) };
}

function jvmHostFacts(input: JvmAuditInput): JvmHostFacts {
  const thpText = readTrimSync(path.join(input.root, 'sys/kernel/mm/transparent_hugepage/enabled'));
  const swapMax: Record<string, string> = {};
  // /proc/swaps lists a header and one line per swap area: a header alone is a host without swap.
  const swaps = readTrimSync(path.join(input.root, 'proc/swaps'));
  if (!input.v1CpusetDir && swaps !== null && swaps.split('\n').length > 1) {
    for (const a of input.allocation) {
      if (a.class !== 'exclusive') continue;
      const v = readTrimSync(path.join(cgroupDir(input.root, a.target), 'memory.swap.max'));
      if (v !== null) swapMax[a.name] = v;
    }
  }
  return { thp: /\[(\w+)\]/.exec(thpText ?? '')?.[1] ?? null, swapMax };
}

/**
 * Pure: the findings about the workloads' JVMs. Pools sized for more CPUs than an exclusive JVM has
 * are a WARNING (its GC pauses grow: the tail latency isolate exists to remove), a batch JVM's an
 * INFO; the hygiene findings are INFO, each with its reason and its fix.
 */
export function jvmFindings(
  allocation: readonly Pick<WorkloadAllocation, 'name' | 'class'>[],
  jvms: readonly JvmCheck[],
  host: JvmHostFacts,
): Omit<JvmAudit, 'jvms'> {
  const findings: Finding[] = [];
  const oversized: Record<string, number> = {};
  const classOf = new Map(allocation.map((a) => [a.name, a.class]));
  for (const a of allocation) oversized[a.name] = 0;
  for (const j of jvms) {
    const exclusive = classOf.get(j.workload) === 'exclusive';
    if (j.sizing === 'over') {
      oversized[j.workload] = (oversized[j.workload] ?? 0) + 1;
      findings.push({
        severity: exclusive ? 'warning' : 'info',
        target: j.workload,
        message: sizingMessage(j.workload, j, j),
      });
    } else if (j.sizing === 'under' && exclusive) {
      findings.push({ severity: 'info', target: j.workload, message: sizingMessage(j.workload, j, j) });
    }
    if (exclusive && j.perfDataFile) {
      findings.push({
        severity: 'info',
        target: j.workload,
        message: `the JVM (pid ${j.pid}) maps its performance-data file ${j.perfDataFile} from disk: while other jobs write heavily, a write-back of it can stall the JVM at a safepoint for hundreds of milliseconds; add -XX:+PerfDisableSharedMem (jstat then cannot attach)`,
      });
    }
  }
  const withJvm = new Set(jvms.filter((j) => classOf.get(j.workload) === 'exclusive').map((j) => j.workload));
  if (withJvm.size > 0 && host.thp === 'always') {
    findings.push({
      severity: 'info',
      message: `transparent huge pages are "always" (/sys/kernel/mm/transparent_hugepage/enabled) on a host running ${[...withJvm].join(', ')}'s JVM: a page fault may stall on memory compaction for hundreds of milliseconds; set it to "madvise" (transparent_hugepage=madvise) and let the JVM ask for them (-XX:+UseTransparentHugePages)`,
    });
  }
  for (const w of withJvm) {
    const v = host.swapMax[w];
    if (v !== undefined && v !== '0') {
      findings.push({
        severity: 'info',
        target: w,
        message: `${w}'s cgroup may swap (memory.swap.max=${v}) and runs a JVM: a GC that touches a swapped-out heap page waits for the disk, for hundreds of milliseconds under other jobs' I/O; set MemorySwapMax=0 on its unit (memory.swap.max=0)`,
      });
    }
  }
  return { findings, oversized };
}
