// The /proc thread scan behind `isolate check`: every thread's allowed CPUs, classified against the
// exclusive workloads' cores in one pass.
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import path from 'node:path';
import { cgroupDir, normCgPath, parseProcCgroup, readTrimSync } from '../cgroup/fsutil.js';
import { CpuSet } from '../model/cpuset.js';
import { CgroupFacts, type CgroupVerdict } from './scan-cgroups.js';

export interface ThreadInfo {
  pid: number;
  tid: number;
  comm: string;
  cpus: string;
  cgroup?: string | null;
}

/** What the policy promised to fence: with `strict: false` only the batch workloads' cgroups. */
export interface FenceScope {
  strict: boolean;
  batchTargets: readonly string[];
  /** A cgroup v1 host: no partition can take the exclusive CPUs from kernel threads there. */
  v1?: boolean;
}

/**
 * A list of threads that keeps its first `cap` entries and counts every one: on a badly broken host
 * all 20,000 threads belong in it, and a report lists 1,000. The entry is made only when kept.
 */
export class ThreadList {
  readonly items: ThreadInfo[] = [];
  count = 0;
  constructor(readonly cap: number) {}
  add(make: () => ThreadInfo): void {
    this.count++;
    this.keep(make);
  }
  /** Keep an entry already counted (a cgroup's threads are counted at once), while there is room. */
  keep(make: () => ThreadInfo): void {
    if (this.items.length < this.cap) this.items.push(make());
  }
  get full(): boolean {
    return this.items.length >= this.cap;
  }
}

/** How many threads of each list a scan keeps (a workload's `outside`, the workqueue workers: 100). */
const LIST_CAP = 1000;
const SHORT_LIST_CAP = 100;

/** What the thread scan needs to know: exclusive workloads and their cgroups. */
export interface ScanSpec {
  exclusive: { name: string; target: string; cpus: CpuSet }[];
  /**
   * How many threads each list keeps (default 1,000; a workload's `outside` and the workqueue
   * workers at most 100). Every one is counted either way; the agent, which exports the counts and
   * logs the summary, keeps a few.
   */
  listCap?: number;
  /** Which violations the policy promised to prevent (`violations`) and which not (`unfenced`). Default: strict. */
  fence?: FenceScope;
  /**
   * cgroup v1: targets are paths in the cpuset hierarchy mounted at this directory, whose `tasks`
   * files list threads, and a thread's cgroup is its `cpuset` line of /proc/<pid>/cgroup.
   */
  v1CpusetDir?: string;
}

/** The cpuset path of a v1 `/proc/<pid>/cgroup` ("N:cpuset:/path"), or null. */
function v1CpusetLine(text: string): string | null {
  const m = /^\d+:(?:[^:]*,)?cpuset(?:,[^:]*)?:(.*)$/m.exec(text);
  return m ? normCgPath(m[1]!) : null;
}

/** A listed thread's name: its comm, or the Name line of its status where a tree has no comm. */
function threadName(taskDir: string): string {
  const comm = readTrimSync(`${taskDir}/comm`);
  if (comm !== null) return comm;
  return /^Name:\s*(.*)$/m.exec(readTrimSync(`${taskDir}/status`) ?? '')?.[1] ?? '';
}

export interface ScanResult {
  processes: number;
  threads: number;
  /** Per exclusive workload: thread count and threads outside its CPUs. */
  perWorkload: { threads: number; outside: ThreadList }[];
  /** Threads the policy promised to keep off the exclusive CPUs that may run there. */
  violations: ThreadList;
  /** With `strict: false`: the other threads that may run there (listed, not counted against it). */
  unfenced: ThreadList;
  kernelViolations: ThreadList;
  unboundWorkers: ThreadList;
  perCpu: { count: number; onExclusive: number; sample: string[] };
  /**
   * Threads whose status could not be read for another reason than having exited (EACCES, EIO), or
   * whose allowed CPUs are no CPU list: where they may run is unknown, never taken for "nowhere".
   */
  unreadable: { count: number; reasons: Set<string> };
}

/** TIDs in a cgroup and every cgroup below it (`cgroup.threads` lists all threads of a domain). */
function threadsUnder(dir: string, out: Set<number>, file = 'cgroup.threads'): boolean {
  const text = readTrimSync(path.join(dir, file));
  if (text === null) return false;
  const lines = text.split('\n');
  for (let k = 0; k < lines.length; k++) if (lines[k]) out.add(Number(lines[k]));
  let ents: import('node:fs').Dirent[] = [];
  try {
    ents = readdirSync(dir, { withFileTypes: true });
  } catch {}
  for (const e of ents) if (e.isDirectory()) threadsUnder(path.join(dir, e.name), out, file);
  return true;
}

/**
 * One pass over `<root>/proc/<pid>/task/<tid>/status`. Synchronous reads into one buffer: /proc
 * files are generated in memory, so the threadpool round trip of async I/O would only add cost.
 */
export function scanThreads(root: string, spec: ScanSpec): ScanResult {
  return new ThreadScan(root, spec).run();
}

/** How one distinct Cpus_allowed_list judges: overlaps the exclusive CPUs, inside each workload's, one CPU. */
interface ListClass {
  overlaps: boolean;
  inside: boolean[];
  single: boolean;
}

const K_CPUS = Buffer.from('\nCpus_allowed_list:');
const K_KTHREAD = Buffer.from('\nKthread:');
const K_PPID = Buffer.from('\nPPid:');
const K_NAME = Buffer.from('Name:');

/**
 * A thread's status file read into one reused buffer. Fields are located in the bytes and only the
 * few needed are decoded: the file is ~1.4 KB and there may be 100k threads.
 */
class StatusReader {
  private readonly buf = Buffer.allocUnsafe(16384);
  private len = 0;
  private view = this.buf;

  /** Reads `file`; false when the thread is gone or the read failed (`unreadable` is told why). */
  read(file: string, unreadable: (reason: string) => void): boolean {
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch (err) {
      if (!gone(err)) unreadable((err as NodeJS.ErrnoException).code ?? 'error');
      return false;
    }
    try {
      this.len = readSync(fd, this.buf, 0, this.buf.length, 0);
      this.view = this.buf.subarray(0, this.len);
      return true;
    } catch (err) {
      if (!gone(err)) unreadable((err as NodeJS.ErrnoException).code ?? 'error');
      return false;
    } finally {
      closeSync(fd);
    }
  }

  /** The value of the field `key` names in the status last read, or null. */
  get(key: Buffer): string | null {
    const i = this.view.indexOf(key);
    if (i < 0) return null;
    const start = i + key.length;
    let end = this.view.indexOf(10, start);
    if (end < 0) end = this.len;
    return this.view.toString('latin1', start, end).trim();
  }
}

/** A thread that exited between the listing and the read is gone, not unreadable. */
const gone = (err: unknown) => ['ENOENT', 'ESRCH'].includes((err as NodeJS.ErrnoException).code ?? '');

/** One scan: the processes in PID order, each judged whole by its cgroup or thread by thread. */
class ThreadScan {
  private readonly procDir: string;
  private readonly all: CpuSet;
  /** Each exclusive workload's threads, from its cgroup's files where they exist. */
  private readonly members: Set<number>[];
  /** Some workload's cgroup files could not be read: membership comes from /proc/<pid>/cgroup. */
  private readonly needProcCgroup: boolean;
  private readonly parseCg: (text: string) => string | null;
  private readonly strict: boolean;
  private readonly cgroups: CgroupFacts;
  private readonly status = new StatusReader();
  /** Cpus_allowed_list strings repeat across threads: each distinct string is classified once. */
  private readonly classes = new Map<string, ListClass | null>();
  private readonly res: ScanResult;

  constructor(
    root: string,
    private readonly spec: ScanSpec,
  ) {
    this.procDir = path.join(root, 'proc');
    this.all = spec.exclusive.reduce((acc, w) => acc.union(w.cpus), CpuSet.EMPTY);
    // Workload membership from the cgroup files when they exist, else from /proc/<pid>/cgroup.
    this.members = spec.exclusive.map(() => new Set<number>());
    const v1 = spec.v1CpusetDir;
    const fromCgroupFs = spec.exclusive.map((w, i) =>
      v1
        ? threadsUnder(path.join(v1, normCgPath(w.target)), this.members[i]!, 'tasks')
        : threadsUnder(cgroupDir(root, w.target), this.members[i]!),
    );
    this.needProcCgroup = fromCgroupFs.some((ok) => !ok);
    this.parseCg = v1 ? v1CpusetLine : parseProcCgroup;
    const fence = spec.fence ?? { strict: true, batchTargets: [] };
    this.strict = fence.strict;
    this.cgroups = new CgroupFacts(root, {
      v1: v1 !== undefined,
      all: this.all,
      targets: spec.exclusive.map((w) => normCgPath(w.target)),
      cpus: spec.exclusive.map((w) => w.cpus),
      strict: fence.strict,
      batchTargets: fence.batchTargets,
    });
    const cap = spec.listCap ?? LIST_CAP;
    const shortCap = Math.min(cap, SHORT_LIST_CAP);
    this.res = {
      processes: 0,
      threads: 0,
      perWorkload: spec.exclusive.map(() => ({ threads: 0, outside: new ThreadList(shortCap) })),
      violations: new ThreadList(cap),
      unfenced: new ThreadList(cap),
      kernelViolations: new ThreadList(cap),
      unboundWorkers: new ThreadList(shortCap),
      perCpu: { count: 0, onExclusive: 0, sample: [] },
      unreadable: { count: 0, reasons: new Set() },
    };
  }

  run(): ScanResult {
    const pids = this.pids();
    for (let k = 0; k < pids.length; k++) {
      const p = pids[k]!;
      const pid = Number(p);
      const g0 = this.cgroupOfProcess(pid, p);
      const d = g0 === null ? null : this.cgroups.verdictOf(g0);
      if (d !== null && d.whole !== null && g0 !== null) this.countWhole(pid, p, g0, d);
      else this.readThreads(pid, p, g0);
    }
    return this.res;
  }

  /**
   * The PIDs under /proc, in PID order as the kernel lists them (a fixture tree's directory may
   * not): reports list threads in the same order everywhere, and a cgroup's second process comes
   * before its later ones.
   */
  private pids(): string[] {
    try {
      const pids = readdirSync(this.procDir).filter((p) => p.charCodeAt(0) >= 48 && p.charCodeAt(0) <= 57);
      return pids.sort((a, b) => Number(a) - Number(b));
    } catch (err) {
      throw new Error(`cannot read ${this.procDir}: ${(err as NodeJS.ErrnoException).code ?? err}`);
    }
  }

  /** A process's cgroup, from its cgroup's cgroup.procs when read already, else its /proc/<pid>/cgroup. */
  private cgroupOfProcess(pid: number, p: string): string | null {
    const known = this.cgroups.knownCgroupOf(pid);
    if (known !== undefined) return known;
    // readTrimSync, not readFileSync: that allocates a 64 KiB buffer for every file the kernel
    // reports as empty (all of /proc), one per process here, which the agent's allocator settings
    // (systemd/isolate.service) then map and unmap each time.
    const text = readTrimSync(`${this.procDir}/${p}/cgroup`);
    return text === null ? null : this.parseCg(text);
  }

  private taskIdsOf(p: string): string[] | null {
    try {
      return readdirSync(`${this.procDir}/${p}/task`);
    } catch {
      return null; // exited
    }
  }

  /** A process its cgroup decides whole: its threads counted (from cgroup.threads where it can), none read. */
  private countWhole(pid: number, p: string, g0: string, d: CgroupVerdict): void {
    const res = this.res;
    const { whole, e } = d;
    let n = d.listsAll ? this.cgroups.threadsFirstTime(g0) : null;
    if (d.listsAll) this.cgroups.sighted(g0);
    let tids: string[] | null = null;
    if (n === null) {
      tids = this.taskIdsOf(p);
      if (tids === null) return; // exited
      n = tids.length;
    }
    res.processes++;
    res.threads += n;
    if (typeof whole === 'number') res.perWorkload[whole]!.threads += n;
    if (whole !== 'unfenced') return;
    res.unfenced.count += n;
    if (res.unfenced.full) return;
    const base = `${this.procDir}/${p}`;
    for (const t of tids ?? this.taskIdsOf(p) ?? []) {
      res.unfenced.keep(() => ({
        pid,
        tid: Number(t),
        comm: threadName(`${base}/task/${t}`),
        cpus: e!.list,
        cgroup: g0,
      }));
    }
  }

  /** A process read thread by thread: each thread's status, judged. */
  private readThreads(pid: number, p: string, g0: string | null): void {
    const base = `${this.procDir}/${p}`;
    let kernel: boolean | null = null;
    const ids = this.taskIdsOf(p);
    if (ids === null) return; // exited
    this.res.processes++;
    for (let k = 0; k < ids.length; k++) {
      const t = ids[k]!;
      if (!this.status.read(`${base}/task/${t}/status`, this.onUnreadable)) continue;
      this.res.threads++;
      if (kernel === null) {
        const kt = this.status.get(K_KTHREAD);
        const ppid = this.status.get(K_PPID);
        kernel = kt !== null ? kt === '1' : pid === 2 || ppid === '2';
      }
      const list = this.status.get(K_CPUS) ?? '';
      const c = this.classify(list);
      if (c === null) {
        this.unreadable(`Cpus_allowed_list "${list.slice(0, 40)}" is no CPU list`);
        continue;
      }
      if (kernel) this.judgeKernelThread(pid, Number(t), t, list, c);
      else this.judgeUserThread(pid, Number(t), g0, list, c);
    }
  }

  /** A kernel thread: per-CPU ones are counted apart; an unbound one allowed on an exclusive CPU is listed. */
  private judgeKernelThread(pid: number, tid: number, t: string, list: string, c: ListClass): void {
    const res = this.res;
    if (c.single) {
      res.perCpu.count++;
      if (c.overlaps) res.perCpu.onExclusive++;
      if (res.perCpu.sample.length < 8) res.perCpu.sample.push(this.status.get(K_NAME) ?? t);
      return;
    }
    if (!c.overlaps) return;
    const comm = this.status.get(K_NAME) ?? '';
    // Unbound workqueue workers follow /sys/devices/virtual/workqueue/cpumask, not cpusets.
    (comm.startsWith('kworker/u') ? res.unboundWorkers : res.kernelViolations).add(() => ({
      pid,
      tid,
      comm,
      cpus: list,
    }));
  }

  /** A user thread: its workload's (inside its CPUs or not), or another allowed on an exclusive CPU. */
  private judgeUserThread(pid: number, tid: number, g0: string | null, list: string, c: ListClass): void {
    let owner = -1;
    for (let i = 0; i < this.members.length; i++) {
      if (this.members[i]!.has(tid)) {
        owner = i;
        break;
      }
    }
    if (owner < 0 && (this.needProcCgroup || c.overlaps)) {
      // Not listed (fixture tree, or a thread born after the cgroup read): its process's cgroup.
      if (g0) owner = this.cgroups.ownerOf(g0);
    }
    // The entries are made only when a list keeps them: no name is decoded for a thread counted alone.
    if (owner >= 0) {
      const w = this.res.perWorkload[owner]!;
      w.threads++;
      if (!c.inside[owner]) {
        w.outside.add(() => ({ pid, tid, comm: this.status.get(K_NAME) ?? '', cpus: list, cgroup: g0 }));
      }
      return;
    }
    if (!c.overlaps) return;
    const to = this.strict || this.cgroups.inBatch(g0) ? this.res.violations : this.res.unfenced;
    to.add(() => ({ pid, tid, comm: this.status.get(K_NAME) ?? '', cpus: list, cgroup: g0 }));
  }

  private classify(list: string): ListClass | null {
    let c = this.classes.get(list);
    if (c !== undefined) return c;
    let set: CpuSet;
    try {
      set = CpuSet.parse(list);
    } catch {
      this.classes.set(list, null);
      return null;
    }
    c = {
      overlaps: set.overlaps(this.all),
      inside: this.spec.exclusive.map((w) => set.isSubsetOf(w.cpus)),
      single: set.size === 1,
    };
    this.classes.set(list, c);
    return c;
  }

  private unreadable(reason: string): void {
    this.res.unreadable.count++;
    this.res.unreadable.reasons.add(reason);
  }

  /** unreadable(), made once for the status reader. */
  private readonly onUnreadable = (reason: string) => this.unreadable(reason);
}
