// Reads CPU, NUMA and device topology from a sysfs tree under `root` (default `/`), so the same code
// runs on a live host and on fixture trees captured from real kernels. Synchronous on purpose: a
// few hundred tiny files read in a tight loop is faster than as many promises, and `plan` must start fast.
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { dirname, normalize, relative } from 'node:path';
import { UserError } from '../model/errors.js';
import { ReadRefused, readBoundedIfPresent, readHeadSync } from '../sys/read.js';
import { CpuSet, CpuSetParseError } from '../model/cpuset.js';
import type { Core, Cpu, Device, NumaNode, Topology } from '../model/topology.js';
import { byNatural } from '../model/order.js';

const CPU_DIR = 'sys/devices/system/cpu';
const NODE_DIR = 'sys/devices/system/node';

class SysfsReader {
  /** `root` normalised once, with a trailing slash: every path is `base + rel`. */
  private readonly base: string;

  constructor(readonly root: string) {
    const r = normalize(root);
    this.base = r.endsWith('/') ? r : `${r}/`;
  }

  /**
   * Same as join(root, rel) for the paths built here (`rel` relative, made of constants and
   * directory entry names, never `.`, `..` or empty parts) without normalising each one: a
   * few hundred joins were a fifth of a cold topology read, and `plan` runs it cold.
   */
  path(rel: string): string {
    return this.base + rel;
  }

  /** File content with stray NULs removed (older kernels append them), or null when absent. */
  text(rel: string): string | null {
    return sysfsText(this.path(rel));
  }

  list(rel: string): CpuSet | null {
    const t = this.text(rel);
    if (t === null) return null;
    try {
      return CpuSet.parse(t);
    } catch (err) {
      throw this.bad(rel, err);
    }
  }

  mask(rel: string): CpuSet | null {
    const t = this.text(rel);
    if (t === null) return null;
    try {
      return CpuSet.parseMask(t);
    } catch (err) {
      throw this.bad(rel, err);
    }
  }

  /** Prefer the `_list` form, fall back to the hex mask (older kernels only have masks). */
  listOrMask(relBase: string): CpuSet | null {
    return this.list(`${relBase}_list`) ?? this.mask(relBase);
  }

  int(rel: string): number | null {
    const t = this.text(rel);
    if (t === null || t === '') return null;
    if (!/^-?\d+$/.test(t)) throw this.bad(rel, new Error(`expected an integer, found "${t}"`));
    return Number(t);
  }

  entries(rel: string): string[] {
    try {
      return readdirSync(this.path(rel));
    } catch (err) {
      if (isMissing(err)) return [];
      throw new UserError(`${this.path(rel)}: cannot list (${(err as Error).message})`);
    }
  }

  bad(rel: string, err: unknown): UserError {
    const why = err instanceof CpuSetParseError || err instanceof Error ? err.message : String(err);
    return new UserError(
      `${this.path(rel)}: ${why}; the sysfs tree looks damaged — check that --root points at a real /sys capture`,
    );
  }
}

/** Largest sysfs or /proc file isolate reads: the kernel's are one page; a bigger one is not sysfs. */
const SYSFS_MAX_BYTES = 256 * 1024;

/** A sysfs file's text (stray NULs removed: older kernels append them), or null when absent. */
function sysfsText(file: string): string | null {
  try {
    const text = readBoundedIfPresent(file, { maxBytes: SYSFS_MAX_BYTES });
    return text === null ? null : text.replace(/\0/g, '').trim();
  } catch (err) {
    if (err instanceof ReadRefused) {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null;
      throw new UserError(
        `${file}: cannot read (${err.reason}); the sysfs tree looks damaged — check that --root points at a real /sys capture`,
      );
    }
    throw err;
  }
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function numbered(names: string[], prefix: string): number[] {
  const re = new RegExp(`^${prefix}(\\d+)$`);
  const ids: number[] = [];
  for (const n of names) {
    const m = re.exec(n);
    if (m) ids.push(Number(m[1]));
  }
  return ids.sort((a, b) => a - b);
}

const STAMP_FILES = [`${CPU_DIR}/online`, `${NODE_DIR}/online`, `${NODE_DIR}/has_memory`];

/**
 * The few kernel files whose contents change when the topology does (CPU or memory hotplug): a
 * long-running reader compares this stamp each round and re-reads the whole tree only on a change.
 */
export function topologyStamp(root = '/'): string {
  // `offline` is `possible` (fixed at boot) minus `online`, and `isolated` is set at boot only
  // (isolcpus=): neither can change without one of these changing or a reboot. Read every round of
  // the agent, never parsed (a change only triggers readTopology).
  return STAMP_FILES.map((f) => readHeadSync(normalize(`${root}/${f}`), 4096) ?? '-').join('|');
}

/** Read the whole topology under `root`. Throws UserError naming the file when sysfs is malformed. */
export function readTopology(root = '/'): Topology {
  const fs = new SysfsReader(root);
  const warnings: string[] = [];

  const cpuIds = numbered(fs.entries(CPU_DIR), 'cpu');
  if (cpuIds.length === 0) {
    throw new UserError(
      `${fs.path(CPU_DIR)}: no cpuN directories found; --root must point at a tree containing sys/devices/system/cpu`,
    );
  }
  const possibleList = fs.list(`${CPU_DIR}/possible`);
  const possible = possibleList ?? CpuSet.of(cpuIds);
  const onlineList = fs.list(`${CPU_DIR}/online`);
  const offlineList = fs.list(`${CPU_DIR}/offline`);
  const isolated = fs.list(`${CPU_DIR}/isolated`) ?? CpuSet.EMPTY;
  checkOnline(fs, cpuIds, onlineList, offlineList);

  // Hybrid parts publish their P-core and E-core CPUs as two PMU devices.
  const pCores = fs.list('sys/devices/cpu_core/cpus');
  const eCores = fs.list('sys/devices/cpu_atom/cpus');

  const notes: string[] = [];
  const nodes = readNodes(fs, cpuIds, possibleList, warnings, notes);
  const nodeOfCpu = new Map<number, number>();
  for (const n of nodes) for (const c of n.cpus) nodeOfCpu.set(c, n.id);

  const cpus: Cpu[] = [];
  // Siblings share their core's package, die and cluster, and L3 groups are shared by many CPUs:
  // read each once. Sibling lists are the exception: each CPU's own is read to cross-check them.
  const coreOfCpu = new Map<
    number,
    { siblings: CpuSet; pkg: number | null; die: number | null; cluster: number | null }
  >();
  const siblingSource = new Map<object, { file: string; set: CpuSet }>();
  const l3OfCpu = new Map<number, number>();
  for (const id of cpuIds) {
    const base = `${CPU_DIR}/cpu${id}`;
    // The global online list and the per-CPU files come from the same kernel state; the per-CPU
    // file is only needed on old kernels without the list. cpu0 often has no `online` file at all
    // because it cannot be unplugged: absent means online.
    const flag = onlineList ? null : fs.int(`${base}/online`);
    const online = onlineList ? onlineList.has(id) : flag !== 0;
    let core = online ? coreOfCpu.get(id) : undefined;
    if (online && existsSync(fs.path(`${base}/topology`))) {
      // Every CPU's own sibling list is read, even when a sibling already named it: the kernel
      // states each relation twice, and a contradiction must stop the plan, not be merged away.
      const own = readSiblings(fs, id);
      if (core) {
        const first = siblingSource.get(core)!;
        if (!own.set.equals(core.siblings)) {
          throw new UserError(
            `${fs.path(own.file)} says "${own.set}" but ${fs.path(first.file)} says "${core.siblings}"; SMT sibling lists contradict each other — sysfs cannot be trusted for isolation; check the kernel and the --root tree`,
          );
        }
      } else {
        const t = `${base}/topology`;
        core = {
          siblings: own.set,
          pkg: fs.int(`${t}/physical_package_id`),
          die: fs.int(`${t}/die_id`),
          cluster: fs.int(`${t}/cluster_id`),
        };
        siblingSource.set(core, own);
        for (const s of own.set) {
          const claimed = coreOfCpu.get(s);
          if (claimed) {
            throw new UserError(
              `${fs.path(own.file)} says "${own.set}" but ${fs.path(siblingSource.get(claimed)!.file)} says "${claimed.siblings}"; SMT sibling lists contradict each other — sysfs cannot be trusted for isolation; check the kernel and the --root tree`,
            );
          }
          if (onlineList && !onlineList.has(s)) {
            throw new UserError(
              `${fs.path(own.file)} names cpu${s}, which ${fs.path(`${CPU_DIR}/online`)} does not list as online; sysfs contradicts itself — check the kernel and the --root tree`,
            );
          }
          coreOfCpu.set(s, core);
        }
      }
    }
    let l3: number | null = null;
    if (online) {
      l3 = l3OfCpu.get(id) ?? null;
      if (l3 === null) {
        const shared = readL3(fs, base);
        if (shared) for (const s of shared) l3OfCpu.set(s, shared.first!);
        l3 = shared?.first ?? null;
      }
    }
    const siblings = core?.siblings ?? CpuSet.EMPTY;
    cpus.push({
      id,
      online,
      package: core?.pkg ?? null,
      die: core?.die ?? null,
      cluster: core?.cluster ?? null,
      node: nodeOfCpu.get(id) ?? null,
      core: online ? (siblings.first ?? id) : null,
      siblings: online && siblings.isEmpty ? CpuSet.of([id]) : siblings,
      l3,
      coreType: pCores?.has(id) ? 'performance' : eCores?.has(id) ? 'efficiency' : null,
    });
  }

  // Offline siblings are not listed in their core's sibling set, so an offline thread cannot be
  // attributed to a core: say so, since it would not be fenced if it came back online.
  const offline = CpuSet.of(cpus.filter((c) => !c.online).map((c) => c.id));
  if (!offline.isEmpty) {
    warnings.push(
      `CPUs ${offline} are offline; their cores cannot be determined, and a CPU brought online later is not fenced until the next plan`,
    );
  }
  for (const c of cpus) {
    if (c.online && c.node === null) {
      warnings.push(
        `cpu${c.id} belongs to no NUMA node (firmware table problem); it is never given to exclusive workloads`,
      );
    }
  }

  const cores = buildCores(cpus, warnings);
  const online = CpuSet.of(cpus.filter((c) => c.online).map((c) => c.id));
  // Nodes list CPUs that are online only (a node's cpulist may still carry offline ones).
  const nodesOnline = nodes.map((n) => ({ ...n, cpus: n.cpus.intersect(online) }));

  return {
    root,
    cpus,
    cores,
    nodes: nodesOnline,
    devices: readDevices(fs),
    online,
    offline,
    possible,
    isolated,
    warnings,
    notes,
  };
}

/** A CPU's SMT sibling list and the file it came from (it always includes the CPU itself). */
function readSiblings(fs: SysfsReader, id: number): { file: string; set: CpuSet } {
  const t = `${CPU_DIR}/cpu${id}/topology`;
  for (const base of [`${t}/core_cpus`, `${t}/thread_siblings`]) {
    const list = fs.list(`${base}_list`);
    if (list) return { file: `${base}_list`, set: list.has(id) ? list : list.union(CpuSet.of([id])) };
    const mask = fs.mask(base);
    if (mask) return { file: base, set: mask.has(id) ? mask : mask.union(CpuSet.of([id])) };
  }
  return { file: t, set: CpuSet.of([id]) };
}

/** `online`, `offline` and the cpuN directories are three statements of one fact: they must agree. */
function checkOnline(fs: SysfsReader, cpuIds: number[], online: CpuSet | null, offline: CpuSet | null): void {
  const onlineFile = fs.path(`${CPU_DIR}/online`);
  const hint = 'sysfs contradicts itself — check the kernel and the --root tree';
  if (online?.isEmpty) throw new UserError(`${onlineFile}: empty, yet some CPU runs this program; ${hint}`);
  if (online) {
    const missing = online.minus(CpuSet.of(cpuIds));
    if (!missing.isEmpty) {
      throw new UserError(
        `${onlineFile} lists CPUs ${missing} that have no directory in ${fs.path(CPU_DIR)}; ${hint}`,
      );
    }
  }
  if (online && offline?.overlaps(online)) {
    throw new UserError(
      `${onlineFile} and ${fs.path(`${CPU_DIR}/offline`)} both list CPUs ${online.intersect(offline)}; ${hint}`,
    );
  }
}

/** The CPUs sharing this CPU's L3 cache, or null when sysfs lists no level-3 cache. */
function readL3(fs: SysfsReader, cpuBase: string): CpuSet | null {
  const indexes = numbered(fs.entries(`${cpuBase}/cache`), 'index');
  // L3 is index3 on nearly every machine: look there first, then anywhere.
  for (const idx of [...indexes.filter((i) => i === 3), ...indexes.filter((i) => i !== 3)]) {
    const b = `${cpuBase}/cache/index${idx}`;
    if (fs.int(`${b}/level`) !== 3) continue;
    return fs.list(`${b}/shared_cpu_list`) ?? fs.mask(`${b}/shared_cpu_map`);
  }
  return null;
}

function readNodes(
  fs: SysfsReader,
  cpuIds: number[],
  possible: CpuSet | null,
  warnings: string[],
  notes: string[],
): NumaNode[] {
  const ids = numbered(fs.entries(NODE_DIR), 'node');
  if (ids.length === 0) {
    // No NUMA support compiled in or exposed: one node 0 holds every CPU and all memory.
    const mem = readMemTotal(fs, 'proc/meminfo', /^MemTotal:\s+(\d+)\s*kB/m);
    return [
      {
        id: 0,
        cpus: CpuSet.of(cpuIds),
        memoryBytes: mem ?? 0,
        hasMemory: mem === null || mem > 0,
        distances: { 0: 10 },
      },
    ];
  }
  const hasMemory = fs.list(`${NODE_DIR}/has_memory`);
  const dirs = CpuSet.of(cpuIds);
  // Present CPUs have a cpuN directory; without the file (very old kernels), the directories say it.
  const present = fs.list(`${CPU_DIR}/present`) ?? dirs;
  // A node's cpumask is nr_cpu_ids bits wide: no kernel names a CPU past the last possible one.
  const nrCpuIds = possible ? (possible.toArray().at(-1) ?? -1) + 1 : Number.POSITIVE_INFINITY;
  const nodes: NumaNode[] = [];
  const claimedBy = new Map<number, string>();
  const hint = 'sysfs contradicts itself — check the kernel and the --root tree';
  for (const id of ids) {
    const base = `${NODE_DIR}/node${id}`;
    const listFile = fs.text(`${base}/cpulist`) !== null ? `${base}/cpulist` : `${base}/cpumap`;
    const listed = fs.list(`${base}/cpulist`) ?? fs.mask(`${base}/cpumap`) ?? CpuSet.EMPTY;
    const impossible = CpuSet.of(listed.toArray().filter((c) => c >= nrCpuIds));
    if (!impossible.isEmpty) {
      throw new UserError(
        `${fs.path(listFile)} lists CPUs ${impossible}, beyond the last possible CPU (${fs.path(`${CPU_DIR}/possible`)}: ${possible}); ${hint}`,
      );
    }
    // POWER kernels put possible CPUs that are not present (no cpuN directory, not in `present`)
    // in a node's cpulist: nothing runs on them and nothing can be given them, so they are left out.
    const notPresent = listed.minus(present).minus(dirs);
    if (!notPresent.isEmpty) {
      const one = notPresent.size === 1;
      notes.push(
        `node ${id}'s ${listFile.slice(base.length + 1)} names ${one ? 'cpu' : 'cpus'} ${notPresent}, which ${one ? 'is' : 'are'} not present; ignored`,
      );
    }
    const cpus = listed.minus(notPresent);
    for (const c of cpus) {
      const other = claimedBy.get(c);
      if (other) {
        throw new UserError(
          `${fs.path(listFile)} and ${fs.path(other)} both list cpu${c}; a CPU is on one NUMA node; ${hint}`,
        );
      }
      claimedBy.set(c, listFile);
    }
    const unknown = cpus.minus(dirs);
    if (!unknown.isEmpty) {
      throw new UserError(
        `${fs.path(listFile)} lists CPUs ${unknown} that have no directory in ${fs.path(CPU_DIR)}; ${hint}`,
      );
    }
    // A node without meminfo is not "a node without memory": the file is always there on a real
    // kernel, so its absence means the tree is incomplete.
    const mem = readMemTotal(fs, `${base}/meminfo`, /^Node\s+\d+\s+MemTotal:\s+(\d+)\s*kB/m);
    if (mem === null) {
      throw new UserError(
        `${fs.path(`${base}/meminfo`)}: missing; every NUMA node directory has one — the sysfs tree looks incomplete, check that --root points at a real /sys capture`,
      );
    }
    const distText = fs.text(`${base}/distance`);
    const distances: Record<number, number> = {};
    if (distText) {
      // The kernel prints one distance per online node, in node id order.
      const values = distText.split(/\s+/).map(Number);
      if (values.length === ids.length && values.every(Number.isFinite)) {
        ids.forEach((other, i) => {
          distances[other] = values[i]!;
        });
      } else {
        warnings.push(
          `${fs.path(`${base}/distance`)}: ${values.length} distances for ${ids.length} nodes; ignored`,
        );
      }
    }
    nodes.push({
      id,
      cpus,
      memoryBytes: mem,
      hasMemory: hasMemory ? hasMemory.has(id) && mem > 0 : mem > 0,
      distances,
    });
  }
  return nodes;
}

function readMemTotal(fs: SysfsReader, rel: string, re: RegExp): number | null {
  const t = fs.text(rel);
  if (t === null) return null;
  const m = re.exec(t);
  if (!m) throw fs.bad(rel, new Error('no MemTotal line'));
  return Number(m[1]) * 1024;
}

function buildCores(cpus: Cpu[], warnings: string[]): Core[] {
  const byId = new Map<number, Core>();
  for (const c of cpus) {
    if (!c.online || c.core === null) continue;
    let core = byId.get(c.core);
    if (!core) {
      core = {
        id: c.core,
        package: c.package,
        node: c.node,
        l3: c.l3,
        coreType: c.coreType,
        cpus: c.siblings,
      };
      byId.set(c.core, core);
    } else if (!core.cpus.equals(c.siblings)) {
      // Sibling lists must agree; if they do not, take the union so no thread is left behind.
      warnings.push(
        `cpu${c.id} reports siblings ${c.siblings} but cpu${core.id} reports ${core.cpus}; using both`,
      );
      core.cpus = core.cpus.union(c.siblings);
    }
    if (core.node !== c.node) {
      warnings.push(
        `core ${core.id} spans NUMA nodes ${core.node} and ${c.node}; it is never given to exclusive workloads`,
      );
      core.node = null;
    }
  }
  return [...byId.values()].sort((a, b) => a.id - b.id);
}

/** Walk up from a device directory to the nearest `numa_node` file (PCI parents carry it). */
function deviceNode(fs: SysfsReader, rel: string, sysReal: string): number | null {
  let dir: string;
  try {
    dir = realpathSync.native(fs.path(rel));
  } catch {
    return null;
  }
  for (let i = 0; i < 12 && dir.startsWith(`${sysReal}/`); dir = dirname(dir), i++) {
    const text = sysfsText(`${dir}/numa_node`);
    if (text === null) continue;
    if (!/^-?\d+$/.test(text))
      throw fs.bad(`${relative(fs.root, dir)}/numa_node`, new Error(`expected an integer, found "${text}"`));
    const n = Number(text);
    return n < 0 ? null : n;
  }
  return null;
}

function readDevices(fs: SysfsReader): Device[] {
  const out: Device[] = [];
  let sysReal: string;
  try {
    sysReal = realpathSync.native(fs.path('sys'));
  } catch {
    return out;
  }
  for (const name of fs.entries('sys/class/net').sort()) {
    if (!existsSync(fs.path(`sys/class/net/${name}/device`))) continue; // lo, bridges, veth: no hardware
    out.push({ kind: 'nic', name, node: deviceNode(fs, `sys/class/net/${name}/device`, sysReal) });
  }
  for (const name of fs.entries('sys/class/block').sort()) {
    const base = `sys/class/block/${name}`;
    if (existsSync(fs.path(`${base}/partition`))) continue;
    if (!existsSync(fs.path(`${base}/device`))) continue; // loop, ram, dm-*: virtual
    out.push({ kind: 'disk', name, node: deviceNode(fs, `${base}/device`, sysReal) });
  }
  for (const name of fs.entries('sys/class/scsi_host').sort(byNatural)) {
    const base = `sys/class/scsi_host/${name}`;
    const driver = fs.text(`${base}/proc_name`) ?? undefined;
    const node = existsSync(fs.path(`${base}/device`)) ? deviceNode(fs, `${base}/device`, sysReal) : null;
    out.push({ kind: 'scsi', name, node, driver: driver || undefined });
  }
  return out;
}
