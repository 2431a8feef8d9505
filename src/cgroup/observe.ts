// The cgroup backend's observer: what the host looks like now, read under `--root`. Never writes.
import { slicePath } from '../model/systemd.js';
import path from 'node:path';
import type { CgroupLayout, ObservedCgroupFs, ObservedGroup, ObservedState } from '../model/observed.js';
import { unavailableCgroupFs } from '../model/observed.js';
import type { ProcessMatcher, ProcessScanner } from './proc-scan.js';
import { matchProcesses } from './processes.js';
import { type CgroupMounts, detectCgroupLayout } from './layout.js';
import {
  cgroupDir,
  cgroupMount,
  exists,
  isDir,
  listDirs,
  listEntries,
  listNames,
  normCgPath,
  ownedBySystemd,
  readTrim,
  readTrimSync,
} from './fsutil.js';

export type { ProcessMatcher } from './proc-scan.js';

export interface ObserveRequest {
  paths: string[];
  units: string[];
  processMatchers: Record<string, ProcessMatcher>;
  /** The agent's memory of PIDs that matched nothing (see proc-scan.ts); absent: read every PID. */
  processScan?: ProcessScanner;
  /** The mount table as the caller already read it this round (absent: read here). */
  mounts?: CgroupMounts;
}

/** Files read for every observed cgroup (only those present are reported). */
export const GROUP_FILES = [
  'cpuset.cpus',
  'cpuset.mems',
  'cpuset.cpus.effective',
  'cpuset.mems.effective',
  'cpuset.cpus.partition',
  'cpuset.cpus.exclusive',
  'cpuset.cpus.exclusive.effective',
  'memory.min',
  'memory.low',
  'memory.high',
  'memory.max',
  // Not memory.current: it moves all the time on a running workload, and it is part of what the agent
  // compares from round to round (ops/plan.ts PlanMemo, ops/systemd-memo.ts), so on a real host every
  // round planned again and asked systemd again. No plan reads it; the executor reads it itself
  // before a memory.max (cgroup/cgroupfs.ts).
  'cpu.weight',
  'cpu.idle',
  // Per-device io settings (present only where the parent enables io): a line per device isolate set.
  'io.latency',
  'io.weight',
  'io.bfq.weight',
  'io.max',
  'cgroup.subtree_control',
  'cgroup.controllers',
  'cgroup.type',
] as const;

/**
 * Files read for a top-level cgroup that is there only as a sibling (not a workload's target, an
 * ancestor of one or a unit the policy names). The planner diffs no more of it (planner/changes.ts)
 * than the cpuset.cpus of a strict fence and the partition of a strict exclusive service's dedicated
 * slice (`kafka.slice`, a target the observer is not told of: its CPUs and memory are systemd
 * properties, its partition a file). On a systemd host siblings are most of the top level
 * (init.scope, the slices, the .mount units): 4 files each instead of 12, every round
 * (bench/observe-round.mjs). Their controllers and type also say when to list them again (observeKept).
 */
const SIBLING_FILES = ['cpuset.cpus', 'cpuset.cpus.partition', 'cgroup.controllers', 'cgroup.type'] as const;

/** Files read on the root cgroup (it has no cpuset.cpus, memory.max ...). */
const ROOT_FILES = [
  'cgroup.controllers',
  'cgroup.subtree_control',
  'cpuset.cpus.effective',
  'cpuset.mems.effective',
  'cpuset.cpus.isolated',
] as const;

/** Why isolate cannot write to this layout (null: unified v2, it can). The one test for "v2 usable". */
export function layoutRefusal(mount: string, layout: CgroupLayout): string | null {
  if (layout === 'unified') return null;
  return layout === 'none'
    ? `${mount} is not a cgroup v2 hierarchy (cgroup.controllers not found); isolate needs the unified cgroup v2 hierarchy (boot with systemd.unified_cgroup_hierarchy=1)`
    : `${mount} is a ${layout === 'hybrid' ? 'hybrid (v1 + v2)' : 'legacy cgroup v1'} layout; isolate needs the unified cgroup v2 hierarchy (boot with systemd.unified_cgroup_hierarchy=1 cgroup_no_v1=all)`;
}

export function cpusetRefusal(mount: string): string {
  return `the cpuset controller is not available in ${path.join(mount, 'cgroup.controllers')} (it is bound to a cgroup v1 hierarchy or disabled with cgroup_disable=); boot with cgroup_no_v1=all`;
}

/** Null when isolate can write cpusets under the mount, else why not. */
export async function writeRefusal(root: string): Promise<string | null> {
  const mount = cgroupMount(root);
  const layout = await detectLayout(root);
  if (layout !== 'unified') return layoutRefusal(mount, layout);
  const ctrls = splitWords(await readTrim(path.join(mount, 'cgroup.controllers')));
  return ctrls.includes('cpuset') ? null : cpusetRefusal(mount);
}

/**
 * Snapshot the cgroup hierarchy and the processes a policy cares about. Missing pieces are
 * reported, not thrown: `plan` must work on a host without cgroup v2.
 */
export async function observeHost(root: string, req: ObserveRequest): Promise<ObservedState> {
  const [cgroup, procs] = await Promise.all([
    observeCgroupFs(root, req),
    matchProcesses(root, req.processMatchers, req.processScan),
  ]);
  return { cgroup, processes: procs.matched, processCgroups: procs.cgroups };
}

/** The running kernel's release. */
function kernelRelease(root: string): Promise<string | null> {
  return readTrim(path.join(root, 'proc/sys/kernel/osrelease'));
}

async function observeCgroupFs(root: string, req: ObserveRequest): Promise<ObservedCgroupFs> {
  const mount = cgroupMount(root);
  const layout = req.mounts?.layout ?? (await detectLayout(root));
  if (layout !== 'unified') return unavailableCgroupFs(layout, layoutRefusal(mount, layout)!);

  // Each directory is listed once a round: the root's listing gives its files and the top level, and
  // the top-level groups' listings also say which features the kernel has (detectFeatures).
  const listings = new Map<string, Set<string> | null>();
  const rootEntries = listEntries(mount);
  const topLevel = rootEntries?.dirs.sort() ?? [];
  const kernel = await kernelRelease(root);

  const units: Record<string, string | null> = {};
  await Promise.all(
    req.units.map(async (u) => {
      units[u] = await findUnitCgroup(root, u);
    }),
  );

  const wanted = new Set<string>();
  for (const p of req.paths) wanted.add(normCgPath(p));
  for (const p of Object.values(units)) if (p) wanted.add(p);
  const asked = new Set(wanted);
  for (const t of topLevel) wanted.add(`/${t}`);

  const groups: Record<string, ObservedGroup> = {};
  groups['/'] = readListed(root, '/', ROOT_FILES, rootEntries?.names ?? null);
  for (const p of wanted) {
    const files = asked.has(p) ? GROUP_FILES : SIBLING_FILES;
    const seen = listAndObserve(root, p, files);
    listings.set(p, seen.names);
    groups[p] = seen.group;
  }
  const rootControllers = splitWords(groups['/'].values['cgroup.controllers'] ?? null);
  const rootSubtreeControl = splitWords(groups['/'].values['cgroup.subtree_control'] ?? null);

  const features = await detectFeatures(root, topLevel, kernel, listings);
  let reason: string | undefined;
  if (!rootControllers.includes('cpuset')) {
    reason = cpusetRefusal(mount);
  }
  const out: ObservedCgroupFs = {
    layout,
    writable: reason === undefined,
    mount: 'sys/fs/cgroup',
    features,
    rootControllers,
    rootSubtreeControl,
    topLevel,
    units,
    groups,
  };
  if (reason) out.reason = reason;
  if (kernel) out.kernel = kernel;
  return out;
}

function splitWords(text: string | null): string[] {
  return text ? text.split(/\s+/).filter(Boolean) : [];
}

/** unified: cgroup.controllers at the mount; hybrid: cgroup2 at .../unified; legacy: v1 mounts. */
export async function detectLayout(root: string): Promise<CgroupLayout> {
  return (await detectCgroupLayout(root)).layout;
}

function kernelAtLeast(release: string | null, major: number, minor: number): boolean {
  const m = release ? /^(\d+)\.(\d+)/.exec(release) : null;
  if (!m) return false;
  const a = Number(m[1]);
  const b = Number(m[2]);
  return a > major || (a === major && b >= minor);
}

/**
 * Feature files exist only on non-root cgroups whose parent enabled the controller, so probe the
 * top-level children first and fall back to the kernel release when none has them.
 */
async function detectFeatures(
  root: string,
  topLevel: string[],
  kernel: string | null,
  listings: ReadonlyMap<string, Set<string> | null>,
): Promise<ObservedCgroupFs['features']> {
  const f = { partition: false, exclusive: false, cpuIdle: false, memoryMin: false };
  let sawCpuset = false;
  let sawCpu = false;
  let sawMemory = false;
  for (const t of topLevel) {
    const has = listings.get(`/${t}`);
    if (!has) continue;
    if (has.has('cpuset.cpus')) {
      sawCpuset = true;
      f.partition ||= has.has('cpuset.cpus.partition');
      f.exclusive ||= has.has('cpuset.cpus.exclusive');
    }
    if (has.has('cpu.weight')) {
      sawCpu = true;
      f.cpuIdle ||= has.has('cpu.idle');
    }
    if (has.has('memory.max')) {
      sawMemory = true;
      f.memoryMin ||= has.has('memory.min');
    }
    if (sawCpuset && sawCpu && sawMemory) break;
  }
  const mount = cgroupMount(root);
  if (!sawCpuset) {
    const isolatedFile = await exists(path.join(mount, 'cpuset.cpus.isolated'));
    f.partition = isolatedFile || kernelAtLeast(kernel, 5, 0);
    f.exclusive = isolatedFile || kernelAtLeast(kernel, 6, 7);
  }
  if (!sawCpu) f.cpuIdle = kernelAtLeast(kernel, 5, 15);
  if (!sawMemory) f.memoryMin = kernelAtLeast(kernel, 4, 18);
  return f;
}

/** Observe one cgroup; absent files are left out of `values`. */
export async function observeGroup(
  root: string,
  cgPath: string,
  files: readonly string[] = GROUP_FILES,
): Promise<ObservedGroup> {
  return listAndObserve(root, normCgPath(cgPath), files).group;
}

/**
 * A cgroup's listing and what it shows. One listing instead of a failed open per file the kernel
 * does not have (no memory controller enabled, no cpuset.cpus.exclusive before 6.7): a failed open
 * throws, and throwing is what costs.
 */
function listAndObserve(
  root: string,
  p: string,
  files: readonly string[],
): { names: Set<string> | null; group: ObservedGroup } {
  const names = listNames(cgroupDir(root, p));
  return { names, group: readListed(root, p, files, names) };
}

/**
 * A cgroup's files as its listing shows them (null: it does not exist; a controller enabled or
 * disabled adds or removes its files).
 */
function readListed(
  root: string,
  p: string,
  files: readonly string[],
  names: Set<string> | null,
): ObservedGroup {
  const dir = cgroupDir(root, p);
  const g: ObservedGroup = {
    exists: names !== null,
    values: {},
    ownedBySystemd: ownedBySystemd(p),
  };
  if (names === null) return g;
  for (const f of files) {
    if (!names.has(f)) continue;
    const v = readTrimSync(`${dir}/${f}`);
    if (v !== null) g.values[f] = v;
  }
  return g;
}

/**
 * Find a systemd unit's cgroup. Slices map by name (`foo-bar.slice` ↦ `/foo.slice/foo-bar.slice`);
 * other units are searched for under the slices (usually `/system.slice/<unit>`).
 */
export async function findUnitCgroup(root: string, unit: string): Promise<string | null> {
  if (unit.endsWith('.slice')) {
    const p = slicePath(unit);
    return (await isDir(cgroupDir(root, p))) ? p : null;
  }
  const direct = [`/system.slice/${unit}`, `/${unit}`];
  for (const c of direct) if (await isDir(cgroupDir(root, c))) return c;
  // Breadth-first through slices only (units live in slices; never descend into unit cgroups).
  let frontier = ['/'];
  for (let depth = 0; depth < 6 && frontier.length > 0; depth++) {
    const next: string[] = [];
    for (const p of frontier) {
      const children = await listDirs(cgroupDir(root, p));
      for (const c of children) {
        const cp = p === '/' ? `/${c}` : `${p}/${c}`;
        if (c === unit) return cp;
        if (c.endsWith('.slice')) next.push(cp);
      }
    }
    frontier = next;
  }
  return null;
}
