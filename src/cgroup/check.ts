// `isolate check`: audit the live host against the policy, thread by thread, from /proc and the
// cgroup files (not from isolate's own journal). Monitoring-plugin exit codes.
import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import path from 'node:path';
import type { WorkloadAllocation } from '../planner/types.js';
import { CpuSet } from '../topology/cpuset.js';
import { cgroupDir, normCgPath, parseProcCgroup } from './fsutil.js';

export type CheckStatus = 'OK' | 'WARNING' | 'CRITICAL' | 'UNKNOWN';
export const EXIT_CHECK: Record<CheckStatus, number> = { OK: 0, WARNING: 1, CRITICAL: 2, UNKNOWN: 3 };

export interface ThreadInfo {
  pid: number;
  tid: number;
  comm: string;
  cpus: string;
  cgroup?: string | null;
}

export interface Finding {
  severity: 'WARNING' | 'CRITICAL';
  message: string;
}

export interface WorkloadCheck {
  name: string;
  class: 'exclusive' | 'batch';
  target: string;
  cpus: string;
  mems: number[];
  threads: number;
  /** Threads of the workload allowed to run outside its CPUs. */
  outside: ThreadInfo[];
  partition: string | null;
  effectiveCpus: string | null;
  /** Resident anon + file bytes per NUMA node (memory.numa_stat). */
  memoryByNode: Record<string, number>;
  offNodeBytes: number;
}

export interface IrqInfo {
  irq: number;
  nic: string;
  affinity: string;
  overlapsExclusive: boolean;
}

export interface CheckReport {
  status: CheckStatus;
  summary: string;
  policy?: string;
  exclusiveCpus: string;
  workloads: WorkloadCheck[];
  /** Threads outside every exclusive workload that may run on an exclusive CPU (user space). */
  violations: ThreadInfo[];
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
  pendingChanges: number;
  findings: Finding[];
  stats: { processes: number; threads: number; scanMs: number };
}

/** What the thread scan needs to know: exclusive workloads and their cgroups. */
export interface ScanSpec {
  exclusive: { name: string; target: string; cpus: CpuSet }[];
}

interface ScanResult {
  processes: number;
  threads: number;
  /** Per exclusive workload: thread count and threads outside its CPUs. */
  perWorkload: { threads: number; outside: ThreadInfo[] }[];
  violations: ThreadInfo[];
  kernelViolations: ThreadInfo[];
  unboundWorkers: ThreadInfo[];
  perCpu: { count: number; onExclusive: number; sample: string[] };
}

/** TIDs in a cgroup and every cgroup below it (`cgroup.threads` lists all threads of a domain). */
function threadsUnder(dir: string, out: Set<number>): boolean {
  let text: string;
  try {
    text = readFileSync(path.join(dir, 'cgroup.threads'), 'latin1');
  } catch {
    return false;
  }
  for (const line of text.split('\n')) if (line) out.add(Number(line));
  let ents: import('node:fs').Dirent[] = [];
  try {
    ents = readdirSync(dir, { withFileTypes: true });
  } catch {}
  for (const e of ents) if (e.isDirectory()) threadsUnder(path.join(dir, e.name), out);
  return true;
}

/**
 * One pass over `<root>/proc/<pid>/task/<tid>/status`. Synchronous reads into one buffer: /proc
 * files are generated in memory, so the threadpool round trip of async I/O would only add cost.
 */
export function scanThreads(root: string, spec: ScanSpec): ScanResult {
  const procDir = path.join(root, 'proc');
  const all = spec.exclusive.reduce((acc, w) => acc.union(w.cpus), CpuSet.EMPTY);
  // Workload membership from the cgroup files when they exist, else from /proc/<pid>/cgroup.
  const members: Set<number>[] = spec.exclusive.map(() => new Set<number>());
  const fromCgroupFs = spec.exclusive.map((w, i) => threadsUnder(cgroupDir(root, w.target), members[i]!));
  const needProcCgroup = fromCgroupFs.some((ok) => !ok);
  const targets = spec.exclusive.map((w) => normCgPath(w.target));

  // Cpus_allowed_list strings repeat across threads: classify each distinct string once.
  const cache = new Map<string, { overlaps: boolean; inside: boolean[]; single: boolean }>();
  const classify = (list: string) => {
    let c = cache.get(list);
    if (!c) {
      let set: CpuSet;
      try {
        set = CpuSet.parse(list);
      } catch {
        set = CpuSet.EMPTY;
      }
      c = {
        overlaps: set.overlaps(all),
        inside: spec.exclusive.map((w) => set.isSubsetOf(w.cpus)),
        single: set.size === 1,
      };
      cache.set(list, c);
    }
    return c;
  };

  const res: ScanResult = {
    processes: 0,
    threads: 0,
    perWorkload: spec.exclusive.map(() => ({ threads: 0, outside: [] })),
    violations: [],
    kernelViolations: [],
    unboundWorkers: [],
    perCpu: { count: 0, onExclusive: 0, sample: [] },
  };
  const buf = Buffer.allocUnsafe(16384);
  // Read status into `buf` and return its length (-1 when gone). Fields are located in the bytes
  // and only the few needed are decoded: the file is ~1.4 KB and there may be 100k threads.
  let len = 0;
  let view = buf;
  const readStatus = (file: string): boolean => {
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch {
      return false;
    }
    try {
      len = readSync(fd, buf, 0, buf.length, 0);
      view = buf.subarray(0, len);
      return true;
    } catch {
      return false;
    } finally {
      closeSync(fd);
    }
  };
  const get = (key: Buffer): string | null => {
    const i = view.indexOf(key);
    if (i < 0) return null;
    const start = i + key.length;
    let end = view.indexOf(10, start);
    if (end < 0) end = len;
    return view.toString('latin1', start, end).trim();
  };
  const K_CPUS = Buffer.from('\nCpus_allowed_list:');
  const K_KTHREAD = Buffer.from('\nKthread:');
  const K_PPID = Buffer.from('\nPPid:');
  const K_NAME = Buffer.from('Name:');

  let pids: string[];
  try {
    pids = readdirSync(procDir);
  } catch (err) {
    throw new Error(`cannot read ${procDir}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
  for (const p of pids) {
    const c0 = p.charCodeAt(0);
    if (c0 < 48 || c0 > 57) continue;
    const pid = Number(p);
    const base = `${procDir}/${p}`;
    let tids: string[];
    try {
      tids = readdirSync(`${base}/task`);
    } catch {
      continue; // exited
    }
    res.processes++;
    let kernel: boolean | null = null;
    let cg: string | null | undefined;
    const procCgroup = (): string | null => {
      if (cg === undefined) {
        try {
          cg = parseProcCgroup(readFileSync(`${base}/cgroup`, 'latin1'));
        } catch {
          cg = null;
        }
      }
      return cg;
    };
    for (const t of tids) {
      if (!readStatus(`${base}/task/${t}/status`)) continue;
      res.threads++;
      const tid = Number(t);
      const list = get(K_CPUS) ?? '';
      if (kernel === null) {
        const kt = get(K_KTHREAD);
        const ppid = get(K_PPID);
        kernel = kt !== null ? kt === '1' : pid === 2 || ppid === '2';
      }
      const c = classify(list);
      if (kernel) {
        if (c.single) {
          res.perCpu.count++;
          if (c.overlaps) res.perCpu.onExclusive++;
          if (res.perCpu.sample.length < 8) res.perCpu.sample.push(get(K_NAME) ?? t);
          continue;
        }
        if (c.overlaps) {
          const comm = get(K_NAME) ?? '';
          // Unbound workqueue workers follow /sys/devices/virtual/workqueue/cpumask, not cpusets.
          if (comm.startsWith('kworker/u')) res.unboundWorkers.push({ pid, tid, comm, cpus: list });
          else res.kernelViolations.push({ pid, tid, comm, cpus: list });
        }
        continue;
      }
      let owner = -1;
      for (let i = 0; i < members.length; i++) {
        if (members[i]!.has(tid)) {
          owner = i;
          break;
        }
      }
      if (owner < 0 && (needProcCgroup || c.overlaps)) {
        // Not listed (fixture tree, or a thread born after the cgroup read): ask /proc.
        const g = procCgroup();
        if (g) {
          owner = targets.findIndex((tg) => g === tg || (tg !== '/' && g.startsWith(`${tg}/`)));
        }
      }
      if (owner >= 0) {
        const w = res.perWorkload[owner]!;
        w.threads++;
        if (!c.inside[owner]) {
          w.outside.push({ pid, tid, comm: get(K_NAME) ?? '', cpus: list, cgroup: procCgroup() });
        }
        continue;
      }
      if (c.overlaps) {
        res.violations.push({ pid, tid, comm: get(K_NAME) ?? '', cpus: list, cgroup: procCgroup() });
      }
    }
  }
  return res;
}

/** NIC interrupts and where they may be delivered (`/proc/irq/N/effective_affinity_list`). */
export function nicIrqs(root: string, exclusive: CpuSet): IrqInfo[] {
  const out: IrqInfo[] = [];
  const netDir = path.join(root, 'sys/class/net');
  let nics: string[] = [];
  try {
    nics = readdirSync(netDir);
  } catch {
    return out;
  }
  for (const nic of nics) {
    const dev = path.join(netDir, nic, 'device');
    const irqs = new Set<number>();
    try {
      for (const i of readdirSync(path.join(dev, 'msi_irqs'))) irqs.add(Number(i));
    } catch {}
    if (irqs.size === 0) {
      try {
        const n = Number(readFileSync(path.join(dev, 'irq'), 'latin1').trim());
        if (n > 0) irqs.add(n);
      } catch {}
    }
    for (const irq of [...irqs].sort((a, b) => a - b)) {
      let aff: string | null = null;
      for (const f of ['effective_affinity_list', 'smp_affinity_list']) {
        try {
          aff = readFileSync(path.join(root, 'proc/irq', String(irq), f), 'latin1').trim();
          if (aff) break;
        } catch {}
      }
      if (aff === null) continue;
      let overlaps = false;
      try {
        overlaps = CpuSet.parse(aff).overlaps(exclusive);
      } catch {}
      out.push({ irq, nic, affinity: aff, overlapsExclusive: overlaps });
    }
  }
  return out;
}

function readOr(file: string): string | null {
  try {
    return readFileSync(file, 'latin1').trim();
  } catch {
    return null;
  }
}

/** Resident bytes per node from `memory.numa_stat` (anon + file). */
export function numaBytes(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const [key, ...rest] = line.trim().split(/\s+/);
    if (key !== 'anon' && key !== 'file') continue;
    for (const kv of rest) {
      const m = /^N(\d+)=(\d+)$/.exec(kv);
      if (m) out[m[1]!] = (out[m[1]!] ?? 0) + Number(m[2]);
    }
  }
  return out;
}

export interface AuditInput {
  root: string;
  allocation: WorkloadAllocation[];
  /** Whether the kernel has cpuset partitions (exclusive top-level targets should be roots). */
  partitions: boolean;
  pendingChanges: number;
  policy?: string;
  extraFindings?: Finding[];
}

/** The pure-ish core of `check` (reads /proc and cgroupfs, no planner). */
export function audit(input: AuditInput): CheckReport {
  const t0 = performance.now();
  const excl = input.allocation.filter((a) => a.class === 'exclusive');
  const spec: ScanSpec = { exclusive: excl.map((a) => ({ name: a.name, target: a.target, cpus: a.cpus })) };
  const all = excl.reduce((acc, a) => acc.union(a.cpus), CpuSet.EMPTY);
  const scan = scanThreads(input.root, spec);
  const scanMs = performance.now() - t0;
  const findings: Finding[] = [...(input.extraFindings ?? [])];

  const workloads: WorkloadCheck[] = excl.map((a, i) => {
    const dir = cgroupDir(input.root, a.target);
    const partition = readOr(path.join(dir, 'cpuset.cpus.partition'));
    const effectiveCpus = readOr(path.join(dir, 'cpuset.cpus.effective'));
    const numa = readOr(path.join(dir, 'memory.numa_stat'));
    const byNode = numa ? numaBytes(numa) : {};
    const total = Object.values(byNode).reduce((x, y) => x + y, 0);
    const offNode = Object.entries(byNode)
      .filter(([n]) => !a.mems.includes(Number(n)))
      .reduce((x, [, b]) => x + b, 0);
    const w = scan.perWorkload[i]!;
    const topLevel = normCgPath(a.target).split('/').length === 2;
    if (w.threads === 0)
      findings.push({ severity: 'WARNING', message: `${a.name} is not running: no threads in ${a.target}` });
    if (w.outside.length > 0) {
      findings.push({
        severity: 'CRITICAL',
        message: `${w.outside.length} thread(s) of ${a.name} may run outside its CPUs ${a.cpus} (e.g. tid ${w.outside[0]!.tid} ${w.outside[0]!.comm}: ${w.outside[0]!.cpus})`,
      });
    }
    if (partition?.includes('invalid')) {
      findings.push({ severity: 'CRITICAL', message: `${a.target} cpuset.cpus.partition is "${partition}"` });
    } else if (input.partitions && topLevel && partition !== null && partition !== 'root') {
      findings.push({
        severity: 'WARNING',
        message: `${a.target} is not a cpuset partition root (cpuset.cpus.partition=${partition})`,
      });
    }
    if (effectiveCpus !== null) {
      let eff: CpuSet | null = null;
      try {
        eff = CpuSet.parse(effectiveCpus);
      } catch {}
      if (eff && !eff.equals(a.cpus)) {
        findings.push({
          severity: 'CRITICAL',
          message: `${a.target} cpuset.cpus.effective is "${effectiveCpus}", the policy gives ${a.name} "${a.cpus}"`,
        });
      }
    } else if (w.threads > 0) {
      findings.push({
        severity: 'WARNING',
        message: `${a.target} has no cpuset.cpus.effective (cpuset not enabled there)`,
      });
    }
    if (total > 0 && offNode > total * 0.01) {
      findings.push({
        severity: 'WARNING',
        message: `${((offNode / total) * 100).toFixed(1)}% of ${a.name}'s memory (${offNode} bytes) is off its node(s) ${a.mems.join(',')}`,
      });
    }
    return {
      name: a.name,
      class: a.class,
      target: a.target,
      cpus: a.cpus.toString(),
      mems: a.mems,
      threads: w.threads,
      outside: w.outside.slice(0, 100),
      partition,
      effectiveCpus,
      memoryByNode: byNode,
      offNodeBytes: offNode,
    };
  });

  if (scan.violations.length > 0) {
    const v = scan.violations[0]!;
    findings.push({
      severity: 'CRITICAL',
      message: `${scan.violations.length} thread(s) outside the exclusive workloads may run on their CPUs ${all} (e.g. pid ${v.pid} tid ${v.tid} ${v.comm} in ${v.cgroup ?? '?'}: ${v.cpus})`,
    });
  }
  if (scan.kernelViolations.length > 0) {
    findings.push({
      severity: 'WARNING',
      message: `${scan.kernelViolations.length} unbound kernel thread(s) may run on the exclusive CPUs ${all} (a valid cpuset partition root removes them; cgroupfs cannot move kernel threads)`,
    });
  }
  if (input.pendingChanges > 0) {
    findings.push({
      severity: 'WARNING',
      message: `${input.pendingChanges} change(s) pending: run "isolate plan" / "isolate apply"`,
    });
  }
  const irqs = nicIrqs(input.root, all);
  let wqMask: string | null = null;
  const wqRaw = readOr(path.join(input.root, 'sys/devices/virtual/workqueue/cpumask'));
  if (wqRaw) {
    try {
      wqMask = CpuSet.parseMask(wqRaw).toString();
    } catch {}
  }

  const status: CheckStatus = findings.some((f) => f.severity === 'CRITICAL')
    ? 'CRITICAL'
    : findings.length > 0
      ? 'WARNING'
      : 'OK';
  const summary =
    findings.length > 0
      ? findings
          .filter((f) => f.severity === status)
          .map((f) => f.message)
          .join('; ')
      : excl.length === 0
        ? 'no exclusive workloads in the policy'
        : `${excl.map((a) => `${a.name} alone on CPUs ${a.cpus}`).join(', ')}; ${scan.threads} threads checked`;
  return {
    status,
    summary,
    ...(input.policy ? { policy: input.policy } : {}),
    exclusiveCpus: all.toString(),
    workloads,
    violations: scan.violations.slice(0, 1000),
    kernelViolations: scan.kernelViolations.slice(0, 1000),
    perCpuKernelThreads: scan.perCpu,
    unboundWorkqueueWorkers: scan.unboundWorkers.slice(0, 100),
    workqueueCpumask: wqMask,
    irqs,
    pendingChanges: input.pendingChanges,
    findings,
    stats: { processes: scan.processes, threads: scan.threads, scanMs: Math.round(scanMs) },
  };
}

/** `isolate check`: plan (to know the allocation), then audit the host. */
export async function runCheck(opts: {
  root: string;
  policyPath?: string;
  notice?: (m: string) => void;
}): Promise<CheckReport> {
  const { buildPlan } = await import('../planner/build.js');
  const built = await buildPlan(opts);
  const extra: Finding[] = [];
  if (built.observed.cgroup.layout !== 'unified') {
    extra.push({ severity: 'WARNING', message: built.observed.cgroup.reason ?? 'no cgroup v2 hierarchy' });
  }
  return audit({
    root: opts.root,
    allocation: built.plan.allocation.workloads,
    partitions: built.observed.cgroup.features.partition,
    pendingChanges: built.plan.changes.length,
    policy: built.policy.source,
    extraFindings: extra,
  });
}

export function formatCheck(r: CheckReport): string {
  const lines: string[] = [];
  lines.push(
    `ISOLATE ${r.status} - ${r.summary} | processes=${r.stats.processes} threads=${r.stats.threads} violations=${r.violations.length} kernel_violations=${r.kernelViolations.length} scan_ms=${r.stats.scanMs}`,
  );
  for (const w of r.workloads) {
    const mem = Object.entries(w.memoryByNode)
      .map(([n, b]) => `N${n}=${(b / 2 ** 20).toFixed(1)}MiB`)
      .join(' ');
    lines.push(
      `  ${w.name} (${w.class}) ${w.target}: cpus ${w.cpus} (effective ${w.effectiveCpus ?? '?'}), mems ${w.mems.join(',')}, partition ${w.partition ?? '-'}, ${w.threads} threads, ${w.outside.length} outside its CPUs${mem ? `, memory ${mem}` : ''}`,
    );
    for (const t of w.outside.slice(0, 10))
      lines.push(`    outside: pid ${t.pid} tid ${t.tid} ${t.comm} Cpus_allowed_list ${t.cpus}`);
  }
  for (const f of r.findings) lines.push(`  ${f.severity}: ${f.message}`);
  for (const t of r.violations.slice(0, 20)) {
    lines.push(
      `    violation: pid ${t.pid} tid ${t.tid} ${t.comm} in ${t.cgroup ?? '?'} Cpus_allowed_list ${t.cpus}`,
    );
  }
  if (r.violations.length > 20) lines.push(`    ... and ${r.violations.length - 20} more (use --json)`);
  for (const t of r.kernelViolations.slice(0, 10))
    lines.push(`    kernel thread: pid ${t.pid} ${t.comm} Cpus_allowed_list ${t.cpus}`);
  lines.push(
    `  per-CPU kernel threads (not counted): ${r.perCpuKernelThreads.count}, ${r.perCpuKernelThreads.onExclusive} on exclusive CPUs${r.perCpuKernelThreads.sample.length ? ` (e.g. ${r.perCpuKernelThreads.sample.slice(0, 4).join(', ')})` : ''}`,
  );
  if (r.unboundWorkqueueWorkers.length > 0) {
    lines.push(
      `  unbound workqueue workers on exclusive CPUs (not counted): ${r.unboundWorkqueueWorkers.length}; workqueue cpumask ${r.workqueueCpumask ?? '?'} (set /sys/devices/virtual/workqueue/cpumask to the housekeeping CPUs to move them)`,
    );
  }
  if (r.irqs.length === 0) lines.push('  NIC IRQs: none found');
  for (const q of r.irqs) {
    lines.push(
      `  NIC IRQ ${q.irq} (${q.nic}) → CPUs ${q.affinity}${q.overlapsExclusive ? ' (on exclusive CPUs)' : ''}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
