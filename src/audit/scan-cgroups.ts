// What cgroups tell the thread scan (threads.ts) without reading each thread's status: a cgroup's
// effective CPUs, the verdict they give all its processes at once, its thread count, and the PIDs
// of its processes. Each is read once per scan and kept by cgroup: a host's thousands of processes
// sit in a few dozen cgroups.
import { statSync } from 'node:fs';
import path from 'node:path';
import { cgroupDir, cgroupUnder, readTrimSync } from '../cgroup/fsutil.js';
import { CpuSet } from '../model/cpuset.js';

/** A cgroup's effective CPUs (parsed and as listed), and whether its threads may sit in sub-cgroups. */
export interface CgroupCpus {
  cpus: CpuSet;
  list: string;
  threaded: boolean;
}

/**
 * What a cgroup's effective CPUs decide about every thread of its processes (`whole`):
 * - 'off': its cgroup may not use any exclusive CPU (a fenced batch container);
 * - a workload's index: its cgroup allows only that workload's CPUs;
 * - 'unfenced': with strict: false, a process the policy does not fence: what may run on the
 *   exclusive CPUs is what its cgroup allows (a thread can widen its own affinity within it at
 *   any time);
 * - null: nothing; its threads are read one by one. Threaded cgroups and the root (per-CPU kernel
 *   threads cannot leave it: PF_NO_SETAFFINITY) are always read thread by thread; an unbound kernel
 *   thread someone moved out of the root is judged as its cgroup's.
 * `listsAll`: the cgroup's cgroup.threads lists all its processes' threads (not a threaded one,
 * whose threads may sit below it).
 */
export interface CgroupVerdict {
  whole: 'off' | 'unfenced' | number | null;
  e: CgroupCpus | null;
  listsAll: boolean;
}

/** What the scan judges against: the exclusive workloads' cgroups and CPUs, and what is fenced. */
export interface CgroupScope {
  /** A cgroup v1 host: no effective cpuset decides anything, every thread is read. */
  v1: boolean;
  /** Every exclusive CPU. */
  all: CpuSet;
  /** Each exclusive workload's cgroup (normalised) and CPUs, in the spec's order. */
  targets: readonly string[];
  cpus: readonly CpuSet[];
  strict: boolean;
  batchTargets: readonly string[];
}

/** A threaded cgroup's threads may sit in sub-cgroups of their own, with narrower cpusets. */
function isThreaded(dir: string): boolean {
  const t = readTrimSync(path.join(dir, 'cgroup.type'));
  return t !== null && t !== 'domain';
}

export class CgroupFacts {
  private readonly effective = new Map<string, CgroupCpus | null>();
  private readonly verdicts = new Map<string, CgroupVerdict>();
  private readonly threadCounts = new Map<string, number | null>();
  private readonly knownCgroup = new Map<number, string>();
  private readonly sightings = new Map<string, number>();

  constructor(
    private readonly root: string,
    private readonly scope: CgroupScope,
  ) {}

  /**
   * What a cgroup lets its tasks use: the kernel keeps every task's allowed CPUs inside the
   * effective cpuset of its cgroup (threaded sub-cgroups included, each a subset of its parent), so
   * a cgroup's effective CPUs can decide a whole process without reading each thread's status (the
   * costly part of a scan: ~35 µs a thread). A cgroup without cpuset files (the controller not
   * enabled by its parent) is governed by its nearest ancestor that has them. v2 only; null: unknown
   * (no such cgroup, or an empty list, which means "the parent's" on some kernels: no proof).
   */
  cpusOf(g: string): CgroupCpus | null {
    let e = this.effective.get(g);
    if (e !== undefined) return e;
    e = null;
    const dir = cgroupDir(this.root, g);
    const text = readTrimSync(path.join(dir, 'cpuset.cpus.effective'));
    if (text === null) {
      // No file: the controller is off here (walk up), or the cgroup is gone (unknown).
      if (g !== '/' && statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
        const parent = g.slice(0, g.lastIndexOf('/')) || '/';
        const up = this.cpusOf(parent);
        if (up) e = { ...up, threaded: up.threaded || isThreaded(dir) };
      }
    } else if (text) {
      try {
        e = { cpus: CpuSet.parse(text), list: text, threaded: isThreaded(dir) };
      } catch {}
    }
    this.effective.set(g, e);
    return e;
  }

  /** The exclusive workload whose cgroup holds `g` (its index), or -1. */
  ownerOf(g: string): number {
    return this.scope.targets.findIndex((tg) => g === tg || (tg !== '/' && g.startsWith(`${tg}/`)));
  }

  /** Whether `cg` is a batch workload's cgroup or below one. */
  inBatch(cg: string | null): boolean {
    return cg !== null && this.scope.batchTargets.some((t) => cgroupUnder(cg, t));
  }

  /**
   * A process whose cgroup may not use any exclusive CPU (a fenced batch container) cannot have a
   * thread there. On a host full of YARN containers this spares reading most threads' status.
   */
  private fencedOff(g: string): boolean {
    const { v1, all, targets } = this.scope;
    if (v1 || all.isEmpty) return false;
    if (targets.some((tg) => cgroupUnder(g, tg))) return false;
    const e = this.cpusOf(g);
    return e !== null && !e.cpus.overlaps(all);
  }

  /**
   * The cgroup's verdict on all its processes (CgroupVerdict), decided once per cgroup, not per
   * process: deciding each anew was most of what an audit allocated (~3 MB an audit before, ~1.3
   * after, on the bench's 2,000 processes: V8's sampling heap profiler through the inspector), which
   * grew the young generation and made the agent compact after every audit.
   */
  verdictOf(g0: string): CgroupVerdict {
    let d = this.verdicts.get(g0);
    if (d) return d;
    const { v1, all, cpus, strict } = this.scope;
    const e = !v1 && g0 !== '/' ? this.cpusOf(g0) : null;
    let whole: CgroupVerdict['whole'] = null;
    if (this.fencedOff(g0)) whole = 'off';
    else if (e) {
      const owner = this.ownerOf(g0);
      if (owner >= 0 && e.cpus.isSubsetOf(cpus[owner]!)) whole = owner;
      else if (owner < 0 && !strict && !this.inBatch(g0) && !e.threaded && e.cpus.overlaps(all)) {
        whole = 'unfenced';
      }
    }
    d = { whole, e, listsAll: e !== null && !e.threaded };
    this.verdicts.set(g0, d);
    return d;
  }

  /**
   * The thread count of a cgroup decided whole, from its cgroup.threads (every thread of a domain
   * cgroup's processes is listed there): the whole count for its first process, 0 for the later ones.
   * Null: not readable (a fixture tree), count per process.
   */
  threadsFirstTime(g: string): number | null {
    if (this.threadCounts.has(g)) return this.threadCounts.get(g) === null ? null : 0;
    const text = readTrimSync(path.join(cgroupDir(this.root, g), 'cgroup.threads'));
    let n: number | null = null;
    if (text !== null) {
      n = 0;
      for (let k = text.indexOf('\n'); k >= 0; k = text.indexOf('\n', k + 1)) n++;
      if (text) n++;
    }
    this.threadCounts.set(g, n);
    return n;
  }

  /**
   * The PIDs of a cgroup decided whole, from its cgroup.procs, read when a second process of it
   * shows up (a cgroup of one process costs no extra read): the rest of its processes are then judged
   * without reading their /proc/<pid>/cgroup. A process that moves meanwhile is judged where it was
   * a moment before, as with any snapshot.
   */
  sighted(g: string): void {
    const n = (this.sightings.get(g) ?? 0) + 1;
    this.sightings.set(g, n);
    if (n !== 2) return;
    const text = readTrimSync(path.join(cgroupDir(this.root, g), 'cgroup.procs'));
    const lines = text ? text.split('\n') : [];
    // Indexed loops over the thousands of PIDs: see CpuSet.overlaps.
    for (let k = 0; k < lines.length; k++) {
      const id = Number(lines[k]);
      if (id > 0) this.knownCgroup.set(id, g);
    }
  }

  /** A process's cgroup when its cgroup's cgroup.procs listed it (sighted), else undefined. */
  knownCgroupOf(pid: number): string | undefined {
    return this.knownCgroup.get(pid);
  }
}
