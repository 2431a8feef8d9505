// The /proc thread scan behind `isolate check`: every thread's allowed CPUs, classified against the
// exclusive workloads' cores in one pass.
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { cgroupDir, cgroupUnder, normCgPath, parseProcCgroup, readTrimSync } from '../cgroup/fsutil.js';
import { CpuSet } from '../model/cpuset.js';

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

/** A threaded cgroup's threads may sit in sub-cgroups of their own, with narrower cpusets. */
function isThreaded(dir: string): boolean {
  const t = readTrimSync(path.join(dir, 'cgroup.type'));
  return t !== null && t !== 'domain';
}

/** A listed thread's name: its comm, or the Name line of its status where a tree has no comm. */
function threadName(taskDir: string): string {
  const comm = readTrimSync(`${taskDir}/comm`);
  if (comm !== null) return comm;
  return /^Name:\s*(.*)$/m.exec(readTrimSync(`${taskDir}/status`) ?? '')?.[1] ?? '';
}

/** A cgroup's effective CPUs (parsed and as listed), and whether its threads may sit in sub-cgroups. */
interface CgroupCpus {
  cpus: CpuSet;
  list: string;
  threaded: boolean;
}

/** What a cgroup's effective CPUs decide about every thread of its processes (scanThreads). */
interface CgroupVerdict {
  whole: 'off' | 'unfenced' | number | null;
  e: CgroupCpus | null;
  listsAll: boolean;
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
  const procDir = path.join(root, 'proc');
  const all = spec.exclusive.reduce((acc, w) => acc.union(w.cpus), CpuSet.EMPTY);
  // Workload membership from the cgroup files when they exist, else from /proc/<pid>/cgroup.
  const members: Set<number>[] = spec.exclusive.map(() => new Set<number>());
  const v1 = spec.v1CpusetDir;
  const fromCgroupFs = spec.exclusive.map((w, i) =>
    v1
      ? threadsUnder(path.join(v1, normCgPath(w.target)), members[i]!, 'tasks')
      : threadsUnder(cgroupDir(root, w.target), members[i]!),
  );
  const parseCg = v1 ? v1CpusetLine : parseProcCgroup;
  const needProcCgroup = fromCgroupFs.some((ok) => !ok);
  const targets = spec.exclusive.map((w) => normCgPath(w.target));

  // Cpus_allowed_list strings repeat across threads: classify each distinct string once.
  const cache = new Map<string, { overlaps: boolean; inside: boolean[]; single: boolean } | null>();
  const classify = (list: string) => {
    let c = cache.get(list);
    if (c === undefined) {
      let set: CpuSet;
      try {
        set = CpuSet.parse(list);
      } catch {
        cache.set(list, null);
        return null;
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

  // What a cgroup lets its tasks use: the kernel keeps every task's allowed CPUs inside the
  // effective cpuset of its cgroup (threaded sub-cgroups included, each a subset of its parent), so a
  // cgroup's effective CPUs can decide a whole process without reading each thread's status (the
  // costly part of a scan: ~35 µs a thread). A cgroup without cpuset files (the controller not
  // enabled by its parent) is governed by its nearest ancestor that has them. v2 only; null: unknown
  // (no such cgroup, or an empty list, which means "the parent's" on some kernels: no proof).
  const effective = new Map<string, CgroupCpus | null>();
  const cgroupCpus = (g: string): CgroupCpus | null => {
    let e = effective.get(g);
    if (e !== undefined) return e;
    e = null;
    const dir = cgroupDir(root, g);
    const text = readTrimSync(path.join(dir, 'cpuset.cpus.effective'));
    if (text === null) {
      // No file: the controller is off here (walk up), or the cgroup is gone (unknown).
      if (g !== '/' && statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
        const parent = g.slice(0, g.lastIndexOf('/')) || '/';
        const up = cgroupCpus(parent);
        if (up) e = { ...up, threaded: up.threaded || isThreaded(dir) };
      }
    } else if (text) {
      try {
        e = { cpus: CpuSet.parse(text), list: text, threaded: isThreaded(dir) };
      } catch {}
    }
    effective.set(g, e);
    return e;
  };
  const ownerOf = (g: string) =>
    targets.findIndex((tg) => g === tg || (tg !== '/' && g.startsWith(`${tg}/`)));
  // A process whose cgroup may not use any exclusive CPU (a fenced batch container) cannot have a
  // thread there. On a host full of YARN containers this spares reading most threads' status.
  const fencedOff = (g: string | null): boolean => {
    if (v1 || g === null || all.isEmpty) return false;
    if (targets.some((tg) => cgroupUnder(g, tg))) return false;
    const e = cgroupCpus(g);
    return e !== null && !e.cpus.overlaps(all);
  };

  const fence = spec.fence ?? { strict: true, batchTargets: [] };
  const inBatch = (cg: string | null) => cg !== null && fence.batchTargets.some((t) => cgroupUnder(cg, t));

  const cap = spec.listCap ?? LIST_CAP;
  const shortCap = Math.min(cap, SHORT_LIST_CAP);
  const res: ScanResult = {
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
  const unreadable = (reason: string) => {
    res.unreadable.count++;
    res.unreadable.reasons.add(reason);
  };
  /** A thread that exited between the listing and the read is gone, not unreadable. */
  const gone = (err: unknown) => ['ENOENT', 'ESRCH'].includes((err as NodeJS.ErrnoException).code ?? '');
  const buf = Buffer.allocUnsafe(16384);
  // Read status into `buf` and return its length (-1 when gone). Fields are located in the bytes
  // and only the few needed are decoded: the file is ~1.4 KB and there may be 100k threads.
  let len = 0;
  let view = buf;
  const readStatus = (file: string): boolean => {
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch (err) {
      if (!gone(err)) unreadable((err as NodeJS.ErrnoException).code ?? 'error');
      return false;
    }
    try {
      len = readSync(fd, buf, 0, buf.length, 0);
      view = buf.subarray(0, len);
      return true;
    } catch (err) {
      if (!gone(err)) unreadable((err as NodeJS.ErrnoException).code ?? 'error');
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
    // In PID order, as the kernel lists /proc (a fixture tree's directory may not): reports list
    // threads in the same order everywhere, and a cgroup's second process comes before its later ones.
    pids = readdirSync(procDir).filter((p) => p.charCodeAt(0) >= 48 && p.charCodeAt(0) <= 57);
    pids.sort((a, b) => Number(a) - Number(b));
  } catch (err) {
    throw new Error(`cannot read ${procDir}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
  // A cgroup whose processes are judged whole has its threads counted once, from its
  // cgroup.threads (every thread of a domain cgroup's processes is listed there): one read for the
  // cgroup instead of one per process. Null: not readable (a fixture tree), count per process.
  const cgroupThreads = new Map<string, number | null>();
  const firstCount = (g: string): number | null => {
    if (cgroupThreads.has(g)) return cgroupThreads.get(g) === null ? null : 0;
    const text = readTrimSync(path.join(cgroupDir(root, g), 'cgroup.threads'));
    let n: number | null = null;
    if (text !== null) {
      n = 0;
      for (let k = text.indexOf('\n'); k >= 0; k = text.indexOf('\n', k + 1)) n++;
      if (text) n++;
    }
    cgroupThreads.set(g, n);
    return n;
  };

  // The PIDs of a cgroup decided whole, from its cgroup.procs, read when a second process of it shows
  // up (a cgroup of one process costs no extra read): the rest of its processes are then judged
  // without reading their /proc/<pid>/cgroup. A process that moves meanwhile is judged where it was
  // a moment before, as with any snapshot.
  const knownCgroup = new Map<number, string>();
  const sightings = new Map<string, number>();
  const learnProcs = (g: string) => {
    const n = (sightings.get(g) ?? 0) + 1;
    sightings.set(g, n);
    if (n !== 2) return;
    const text = readTrimSync(path.join(cgroupDir(root, g), 'cgroup.procs'));
    const lines = text ? text.split('\n') : [];
    // Indexed loops over the thousands of PIDs: see CpuSet.overlaps.
    for (let k = 0; k < lines.length; k++) {
      const id = Number(lines[k]);
      if (id > 0) knownCgroup.set(id, g);
    }
  };

  // How a process's cgroup decides all its threads at once, if it does (`whole`):
  // - 'off': its cgroup may not use any exclusive CPU (a fenced batch container);
  // - a workload's index: its cgroup allows only that workload's CPUs;
  // - 'unfenced': with strict: false, a process the policy does not fence: what may run on the
  //   exclusive CPUs is what its cgroup allows (a thread can widen its own affinity within it at
  //   any time). Threaded cgroups and the root (per-CPU kernel threads cannot leave it:
  //   PF_NO_SETAFFINITY) are read thread by thread; an unbound kernel thread someone moved out
  //   of the root is judged as its cgroup's.
  // Decided once per cgroup, not per process: a host's thousands of processes sit in a few dozen
  // cgroups, and deciding each anew was most of what an audit allocated (~3 MB an audit before, ~1.3
  // after, on the bench's 2,000 processes: V8's sampling heap profiler through the inspector), which
  // grew the young generation and made the agent compact after every audit.
  const verdicts = new Map<string, CgroupVerdict>();
  const verdictOf = (g0: string): CgroupVerdict => {
    let d = verdicts.get(g0);
    if (d) return d;
    const e = !v1 && g0 !== '/' ? cgroupCpus(g0) : null;
    let whole: CgroupVerdict['whole'] = null;
    if (fencedOff(g0)) whole = 'off';
    else if (e) {
      const owner = ownerOf(g0);
      if (owner >= 0 && e.cpus.isSubsetOf(spec.exclusive[owner]!.cpus)) whole = owner;
      else if (owner < 0 && !fence.strict && !inBatch(g0) && !e.threaded && e.cpus.overlaps(all)) {
        whole = 'unfenced';
      }
    }
    // Counted from the cgroup where it lists them (not a threaded one: its threads may sit below).
    d = { whole, e, listsAll: e !== null && !e.threaded };
    verdicts.set(g0, d);
    return d;
  };
  // A process's cgroup, from its cgroup's cgroup.procs when read already, else its /proc/<pid>/cgroup.
  const cgroupOfProcess = (pid: number, p: string): string | null => {
    const known = knownCgroup.get(pid);
    if (known !== undefined) return known;
    // readTrimSync, not readFileSync: that allocates a 64 KiB buffer for every file the kernel
    // reports as empty (all of /proc), one per process here, which the agent's allocator settings
    // (systemd/isolate.service) then map and unmap each time.
    const text = readTrimSync(`${procDir}/${p}/cgroup`);
    return text === null ? null : parseCg(text);
  };
  const taskIdsOf = (p: string): string[] | null => {
    try {
      return readdirSync(`${procDir}/${p}/task`);
    } catch {
      return null; // exited
    }
  };

  for (let k = 0; k < pids.length; k++) {
    const p = pids[k]!;
    const pid = Number(p);
    const g0 = cgroupOfProcess(pid, p);
    const d = g0 === null ? null : verdictOf(g0);
    if (d !== null && d.whole !== null && g0 !== null) {
      const { whole, e } = d;
      let n = d.listsAll ? firstCount(g0) : null;
      if (d.listsAll) learnProcs(g0);
      let tids: string[] | null = null;
      if (n === null) {
        tids = taskIdsOf(p);
        if (tids === null) continue; // exited
        n = tids.length;
      }
      res.processes++;
      res.threads += n;
      if (typeof whole === 'number') res.perWorkload[whole]!.threads += n;
      if (whole === 'unfenced') {
        res.unfenced.count += n;
        if (!res.unfenced.full) {
          const base = `${procDir}/${p}`;
          for (const t of tids ?? taskIdsOf(p) ?? []) {
            res.unfenced.keep(() => ({
              pid,
              tid: Number(t),
              comm: threadName(`${base}/task/${t}`),
              cpus: e!.list,
              cgroup: g0,
            }));
          }
        }
      }
      continue;
    }
    const base = `${procDir}/${p}`;
    let kernel: boolean | null = null;
    const ids = taskIdsOf(p);
    if (ids === null) continue; // exited
    res.processes++;
    for (let k = 0; k < ids.length; k++) {
      const t = ids[k]!;
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
      if (c === null) {
        unreadable(`Cpus_allowed_list "${list.slice(0, 40)}" is no CPU list`);
        continue;
      }
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
          (comm.startsWith('kworker/u') ? res.unboundWorkers : res.kernelViolations).add(() => ({
            pid,
            tid,
            comm,
            cpus: list,
          }));
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
        // Not listed (fixture tree, or a thread born after the cgroup read): its process's cgroup.
        if (g0) owner = ownerOf(g0);
      }
      if (owner >= 0) {
        const w = res.perWorkload[owner]!;
        w.threads++;
        if (!c.inside[owner]) {
          w.outside.add(() => ({ pid, tid, comm: get(K_NAME) ?? '', cpus: list, cgroup: g0 }));
        }
        continue;
      }
      if (c.overlaps) {
        (fence.strict || inBatch(g0) ? res.violations : res.unfenced).add(() => ({
          pid,
          tid,
          comm: get(K_NAME) ?? '',
          cpus: list,
          cgroup: g0,
        }));
      }
    }
  }
  return res;
}
