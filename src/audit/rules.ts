// The findings rules of the host check. Pure: facts in, findings out, so each rule is tested with
// a table and the agent can judge the same facts as `isolate check`.
import { UNIFIED_PARAM } from '../model/observed.js';
import type { CpuSet } from '../model/cpuset.js';
import type { Finding } from '../model/finding.js';
import type { WorkloadAllocation } from '../model/plan.js';
import type { FenceScope, ScanResult, ThreadInfo } from './threads.js';

/** What the cgroup files say about one exclusive workload's cgroup. */
export interface WorkloadFacts {
  partition: string | null;
  effectiveCpus: CpuSet | null;
  /** The raw `cpuset.cpus.effective`, for messages (may not parse). */
  effectiveText: string | null;
  /** Resident bytes per NUMA node. */
  memoryByNode: Record<string, number>;
  threads: number;
  /** Threads of the workload that may run outside its CPUs: the first ones, and how many in all. */
  outside: ThreadInfo[];
  outsideCount: number;
  /** A top-level cgroup: the kernel can make it a partition root. */
  topLevel: boolean;
}

/** Memory off the workload's nodes beyond this share is worth a warning (page cache strays a little). */
export const OFF_NODE_SHARE = 0.01;
/** …and beyond this size: a few stray pages of a small process are not a NUMA problem (a sleeping
 * broker stand-in in the role's guest test had 4 KiB = 5.3 % off its node, and check said WARNING). */
export const OFF_NODE_MIN_BYTES = 16 * 1024 * 1024;

export function offNodeBytes(a: Pick<WorkloadAllocation, 'mems'>, byNode: Record<string, number>): number {
  return Object.entries(byNode)
    .filter(([n]) => !a.mems.includes(Number(n)))
    .reduce((x, [, b]) => x + b, 0);
}

export function workloadFindings(a: WorkloadAllocation, f: WorkloadFacts, partitions: boolean): Finding[] {
  const out: Finding[] = [];
  if (f.threads === 0) {
    out.push({ severity: 'warning', message: `${a.name} is not running: no threads in ${a.target}` });
  }
  const t = f.outside[0];
  if (t) {
    out.push({
      severity: 'critical',
      message: `${f.outsideCount} thread(s) of ${a.name} may run outside its CPUs ${a.cpus} (e.g. tid ${t.tid} ${t.comm}: ${t.cpus})`,
    });
  }
  if (f.partition?.includes('invalid')) {
    out.push({ severity: 'critical', message: `${a.target} cpuset.cpus.partition is "${f.partition}"` });
  } else if (partitions && f.topLevel && f.partition !== null && f.partition !== 'root') {
    out.push({
      severity: 'warning',
      message: `${a.target} is not a cpuset partition root (cpuset.cpus.partition=${f.partition})`,
    });
  }
  if (f.effectiveText !== null) {
    if (f.effectiveCpus && !f.effectiveCpus.equals(a.cpus)) {
      out.push({
        severity: 'critical',
        message: `${a.target} cpuset.cpus.effective is "${f.effectiveText}", the policy gives ${a.name} "${a.cpus}"`,
      });
    }
  } else if (f.threads > 0) {
    out.push({
      severity: 'warning',
      message: `${a.target} has no cpuset.cpus.effective (cpuset not enabled there)`,
    });
  }
  const total = Object.values(f.memoryByNode).reduce((x, y) => x + y, 0);
  const off = offNodeBytes(a, f.memoryByNode);
  if (total > 0 && off > total * OFF_NODE_SHARE && off >= OFF_NODE_MIN_BYTES) {
    out.push({
      severity: 'warning',
      message: `${((off / total) * 100).toFixed(1)}% of ${a.name}'s memory (${off} bytes) is off its node(s) ${a.mems.join(',')}`,
    });
  }
  return out;
}

/** Findings about the host's threads: the scan was made with `scope` (ScanSpec.fence). */
export function hostFindings(
  scan: Pick<ScanResult, 'violations' | 'unfenced' | 'kernelViolations'>,
  exclusive: CpuSet,
  pendingChanges: number,
  scope: FenceScope = { strict: true, batchTargets: [] },
): Finding[] {
  const out: Finding[] = [];
  const v = scan.violations.items[0];
  if (v) {
    const who = scope.strict ? 'outside the exclusive workloads' : 'of batch workloads';
    out.push({
      severity: 'critical',
      message: `${scan.violations.count} thread(s) ${who} may run on their CPUs ${exclusive} (e.g. pid ${v.pid} tid ${v.tid} ${v.comm} in ${v.cgroup ?? '?'}: ${v.cpus})`,
    });
  }
  if (scan.unfenced.count > 0) {
    out.push({
      severity: 'info',
      message: `${scan.unfenced.count} other thread(s) may run on the exclusive CPUs ${exclusive}; the policy fences only the batch workloads (strict: false)`,
    });
  }
  if (scan.kernelViolations.count > 0) {
    out.push({
      // With strict: false the policy promised to fence only the batch workloads.
      severity: scope.strict ? 'warning' : 'info',
      message: `${scan.kernelViolations.count} unbound kernel thread(s) may run on the exclusive CPUs ${exclusive} (${
        scope.v1
          ? `cgroup v1 has no cpuset partition to take these CPUs from them; boot with ${UNIFIED_PARAM} for one`
          : 'a valid cpuset partition root removes them; cgroupfs cannot move kernel threads'
      })`,
    });
  }
  if (pendingChanges > 0) {
    out.push({
      severity: 'warning',
      message: `${pendingChanges} change(s) pending: run "isolate plan" / "isolate apply"`,
    });
  }
  return out;
}
