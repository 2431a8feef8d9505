// The cgroup v1 backend's observer: the cpuset hierarchy isolate owns on a legacy or hybrid host, the
// memory and cpu cgroups the policy's settings go to, and which processes (and stray threads) belong
// to each workload. Never writes.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { cgroupMount, cgroupUnder, exists, listDirs, readTrimSync } from '../cgroup/fsutil.js';
import type { CgroupMounts } from '../cgroup/layout.js';
import { matchProcesses, type ProcessMatcher } from '../cgroup/processes.js';
import { BLKIO_FILES } from '../model/io.js';
import type { ObservedV1, ObservedV1Group } from '../model/observed.js';
import type { Match } from '../model/policy.js';

/** Files read on every observed cpuset cgroup (only those present are reported). */
export const CPUSET_FILES = [
  'cpuset.cpus',
  'cpuset.mems',
  'cpuset.effective_cpus',
  'cpuset.cpu_exclusive',
  'cpuset.mem_exclusive',
  'cpuset.memory_migrate',
] as const;

export const OTHER_FILES = [
  'memory.limit_in_bytes',
  'memory.soft_limit_in_bytes',
  'memory.memsw.limit_in_bytes',
  'memory.usage_in_bytes',
  'cpu.shares',
  // blkio (Kafka's disks, docs/disks.md): BFQ weights and throttles per device, a line each.
  ...BLKIO_FILES,
] as const;

export interface V1ObserveRequest {
  workloads: { name: string; match: Match; cpuset: string }[];
  /** Cpuset cgroups isolate may create (the housekeeping one). */
  cpusets: string[];
  /** Cgroups of other hierarchies: `{ hierarchy, path }`. */
  groups: { hierarchy: string; path: string }[];
  /** PIDs each process matcher selected, when the caller has matched them already this round. */
  matched?: Record<string, number[]>;
  /** Report the cpuset root's processes (strict moves them); false spares reading them. Default true. */
  rootProcs?: boolean;
}

/** `/proc/<pid>/cgroup` of a v1 host: hierarchy line → path, keyed by each controller (and `name=x`, `0` for v2). */
export function parseV1ProcCgroup(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const a = line.indexOf(':');
    const b = line.indexOf(':', a + 1);
    if (a < 0 || b < 0) continue;
    const ctrls = line.slice(a + 1, b);
    const p = line.slice(b + 1).replace(/ \(deleted\)$/, '') || '/';
    if (ctrls === '') out.set('0', p);
    for (const c of ctrls.split(',')) if (c) out.set(c, p);
  }
  return out;
}

function group(dir: string, files: readonly string[]): ObservedV1Group {
  const g: ObservedV1Group = { exists: false, values: {}, hasTasks: false };
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return g;
  }
  g.exists = true;
  const has = new Set(names);
  for (const f of files) {
    if (!has.has(f)) continue;
    const v = readTrimSync(path.join(dir, f));
    if (v !== null) g.values[f] = v;
  }
  g.hasTasks = (readTrimSync(path.join(dir, 'tasks')) ?? '') !== '';
  return g;
}

/** Does a process (its cgroup lines) belong to a workload matched by cgroup or unit? */
function belongs(lines: Map<string, string>, m: Match, layout: CgroupMounts): boolean {
  if (m.kind === 'cgroup') {
    const p = lines.get(m.hierarchy ?? 'cpu');
    return p !== undefined && cgroupUnder(p, m.path);
  }
  if (m.kind === 'systemdUnit') {
    // systemd tracks units in its own hierarchy: name=systemd on legacy, the cgroup2 mount on hybrid.
    const p = lines.get('name=systemd') ?? (layout.unified !== null ? lines.get('0') : undefined);
    return p?.split('/').includes(m.unit) === true;
  }
  return false;
}

// Deeper than any cgroup tree seen on a host (YARN: /hadoop-yarn/container_N; systemd: 3-4 levels).
const MAX_DEPTH = 16;

/**
 * The PIDs that can belong to a workload or sit in the cpuset root, found without reading every
 * process's /proc files: what the process matchers found, the `cgroup.procs` of each cgroup matcher's
 * subtree in its hierarchy and of each unit's cgroups in systemd's tracking hierarchy, and the cpuset
 * root's own processes when strict needs them. Reading two files of each of 2,000 processes held the
 * agent at 1.77 % of a core at a 1 s interval, 0.35 % this way (bench/agent-idle.mjs with
 * AGENT_LAYOUT=legacy): a few directories and files a round instead. Each candidate is then judged from
 * its own /proc files as before, so a process that moved meanwhile is judged where it is. null: a
 * matcher whose hierarchy is not mounted under /sys/fs/cgroup, or a unit matcher with no tracking
 * hierarchy known (a fixture tree without a mount table), so every process is read.
 */
async function candidatePids(
  mount: string,
  layout: CgroupMounts,
  req: V1ObserveRequest,
  byMatcher: Record<string, number[]>,
  cpusetDir: string,
): Promise<Set<number> | null> {
  const out = new Set<number>();
  const addProcs = (dir: string) => {
    const text = readTrimSync(path.join(dir, 'cgroup.procs'));
    if (!text) return;
    for (const line of text.split('\n')) {
      const pid = Number(line);
      if (Number.isSafeInteger(pid) && pid > 0) out.add(pid);
    }
  };
  const addTree = async (dir: string, depth: number): Promise<void> => {
    addProcs(dir);
    if (depth < MAX_DEPTH) for (const c of await listDirs(dir)) await addTree(path.join(dir, c), depth + 1);
  };
  const units = new Set<string>();
  for (const w of req.workloads) {
    const m = w.match;
    if (m.kind === 'process') {
      for (const pid of byMatcher[w.name] ?? []) out.add(pid);
    } else if (m.kind === 'cgroup') {
      const h = layout.v1[m.hierarchy ?? 'cpu'];
      // Not mounted under /sys/fs/cgroup: /proc/<pid>/cgroup may still name it, so read every process.
      if (h === undefined) return null;
      await addTree(path.join(mount, h, m.path), 0);
    } else if (m.kind === 'systemdUnit') {
      units.add(m.unit);
    }
  }
  if (units.size > 0) {
    // As belongs(): name=systemd where systemd mounted it, else the cgroup2 mount of a hybrid host.
    const tracking = layout.named?.systemd ?? layout.unified;
    if (tracking === null || tracking === undefined) return null;
    const find = async (dir: string, depth: number): Promise<void> => {
      for (const c of await listDirs(dir)) {
        const d = path.join(dir, c);
        if (units.has(c)) await addTree(d, 0);
        else if (depth < MAX_DEPTH) await find(d, depth + 1);
      }
    };
    await find(path.join(mount, tracking), 0);
  }
  if (req.rootProcs !== false) addProcs(cpusetDir);
  return out;
}

export async function observeV1(
  root: string,
  layout: CgroupMounts,
  req: V1ObserveRequest,
): Promise<ObservedV1> {
  const mount = cgroupMount(root);
  const cpusetDir = path.join(mount, layout.v1.cpuset!);
  const topLevel = await listDirs(cpusetDir);
  const cpusets: Record<string, ObservedV1Group> = {};
  cpusets['/'] = group(cpusetDir, CPUSET_FILES);
  // Top-level cpusets and everything below them: v1 refuses to shrink a parent below a child's CPUs.
  const walk = async (p: string, depth: number) => {
    cpusets[p] = group(path.join(cpusetDir, p), CPUSET_FILES);
    if (depth >= 4) return;
    for (const c of await listDirs(path.join(cpusetDir, p))) await walk(`${p}/${c}`, depth + 1);
  };
  for (const t of topLevel) await walk(`/${t}`, 1);
  for (const p of [...req.workloads.map((w) => w.cpuset), ...req.cpusets]) {
    cpusets[p] ??= group(path.join(cpusetDir, p), CPUSET_FILES);
  }
  const groups: Record<string, ObservedV1Group> = {};
  for (const g of req.groups) {
    const h = layout.v1[g.hierarchy];
    if (!h) continue;
    groups[`${h}:${g.path}`] = group(path.join(mount, h, g.path), OTHER_FILES);
  }
  const memH = layout.v1.memory;
  const swapAccounting =
    memH !== undefined && (await exists(path.join(mount, memH, 'memory.memsw.limit_in_bytes')));

  // Processes: every userspace process's cgroup lines, once.
  const members: Record<string, number[]> = {};
  const strayThreads: Record<string, Record<number, string>> = {};
  const cpusetOf: Record<number, string> = {};
  const rootProcs: number[] = [];
  const rootBrokers: number[] = [];
  for (const w of req.workloads) {
    members[w.name] = [];
    strayThreads[w.name] = {};
  }
  const matchers: Record<string, ProcessMatcher> = {};
  for (const w of req.workloads) {
    if (w.match.kind !== 'process') continue;
    const { cmdline, exe, user } = w.match;
    matchers[w.name] = {
      cmdline,
      exe,
      user,
    };
  }
  const byMatcher = req.matched ?? (await matchProcesses(root, matchers)).matched;
  const procDir = path.join(root, 'proc');
  const candidates = await candidatePids(mount, layout, req, byMatcher, cpusetDir);
  let entries: string[] = [];
  if (candidates) {
    entries = [...candidates].sort((a, b) => a - b).map(String);
  } else {
    try {
      entries = readdirSync(procDir).filter((e) => /^\d+$/.test(e));
    } catch {}
  }
  const self = root === '/' ? process.pid : -1;
  for (const e of entries) {
    const pid = Number(e);
    if (pid === self) continue;
    const cmdline = readTrimSync(path.join(procDir, e, 'cmdline'));
    if (!cmdline) continue; // kernel thread, zombie or gone
    const cg = readTrimSync(path.join(procDir, e, 'cgroup'));
    if (cg === null) continue;
    const lines = parseV1ProcCgroup(cg);
    const cpuset = lines.get('cpuset') ?? '/';
    cpusetOf[pid] = cpuset;
    if (cpuset === '/') {
      rootProcs.push(pid);
      if (runsKafka(cmdline)) rootBrokers.push(pid);
    }
    for (const w of req.workloads) {
      const mine =
        w.match.kind === 'process' ? byMatcher[w.name]!.includes(pid) : belongs(lines, w.match, layout);
      if (!mine) continue;
      members[w.name]!.push(pid);
      if (cpuset !== w.cpuset) continue;
      // v1 keeps a cgroup per thread: a thread moved elsewhere after its process was placed stays there.
      let tids: string[] = [];
      try {
        tids = readdirSync(path.join(procDir, e, 'task'));
      } catch {}
      for (const t of tids) {
        if (t === e) continue;
        const tcg = readTrimSync(path.join(procDir, e, 'task', t, 'cgroup'));
        const tp = tcg === null ? undefined : parseV1ProcCgroup(tcg).get('cpuset');
        if (tp !== undefined && tp !== w.cpuset) strayThreads[w.name]![Number(t)] = tp;
      }
    }
  }
  for (const w of req.workloads) members[w.name]!.sort((a, b) => a - b);
  rootProcs.sort((a, b) => a - b);
  return {
    layout: layout.layout === 'hybrid' ? 'hybrid' : 'legacy',
    hierarchies: { ...layout.v1 },
    swapAccounting,
    topLevel,
    cpusets,
    groups,
    members,
    strayThreads,
    cpusetOf,
    rootProcs,
    rootBrokers,
  };
}

/** Whether a /proc cmdline (NUL-separated) runs Kafka's broker: `kafka.Kafka` as one of its arguments. */
export function runsKafka(cmdline: string): boolean {
  return cmdline.split('\0').includes('kafka.Kafka');
}
