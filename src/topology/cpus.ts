// Each CPU from sysfs: whether it is online, its core (SMT siblings, package, die, cluster), its L3
// group, node and core type; and the cores built from them. The kernel states each sibling relation
// twice, once per CPU: a contradiction stops the plan rather than being merged away.
import { existsSync } from 'node:fs';
import { CpuSet } from '../model/cpuset.js';
import { UserError } from '../model/errors.js';
import type { Core, Cpu } from '../model/topology.js';
import { CPU_DIR, numbered, type SysfsReader } from './sysfs-reader.js';

/** What the CPUs are read against: the global online list, each CPU's node, and hybrid core types. */
export interface CpuFacts {
  /** `online` (null on old kernels without it: each CPU's own `online` file says). */
  onlineList: CpuSet | null;
  nodeOfCpu: ReadonlyMap<number, number>;
  /** Hybrid parts publish their P-core and E-core CPUs as two PMU devices. */
  pCores: CpuSet | null;
  eCores: CpuSet | null;
}

interface CoreOf {
  siblings: CpuSet;
  pkg: number | null;
  die: number | null;
  cluster: number | null;
}

/** Every CPU of `cpuIds`, in order. */
export function readCpus(fs: SysfsReader, cpuIds: readonly number[], facts: CpuFacts): Cpu[] {
  const reader = new CpuReader(fs, facts);
  return cpuIds.map((id) => reader.cpu(id));
}

/**
 * Siblings share their core's package, die and cluster, and L3 groups are shared by many CPUs:
 * each is read once. Sibling lists are the exception: each CPU's own is read to cross-check them.
 */
class CpuReader {
  private readonly coreOfCpu = new Map<number, CoreOf>();
  private readonly siblingSource = new Map<object, { file: string; set: CpuSet }>();
  private readonly l3OfCpu = new Map<number, number>();

  constructor(
    private readonly fs: SysfsReader,
    private readonly facts: CpuFacts,
  ) {}

  cpu(id: number): Cpu {
    const { onlineList, nodeOfCpu, pCores, eCores } = this.facts;
    const base = `${CPU_DIR}/cpu${id}`;
    // The global online list and the per-CPU files come from the same kernel state; the per-CPU
    // file is only needed on old kernels without the list. cpu0 often has no `online` file at all
    // because it cannot be unplugged: absent means online.
    const flag = onlineList ? null : this.fs.int(`${base}/online`);
    const online = onlineList ? onlineList.has(id) : flag !== 0;
    const core = online ? this.coreOf(id, base) : undefined;
    const l3 = online ? this.l3Of(id, base) : null;
    const siblings = core?.siblings ?? CpuSet.EMPTY;
    return {
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
    };
  }

  /** An online CPU's core: a sibling's already read (checked against this CPU's own list), or read now. */
  private coreOf(id: number, base: string): CoreOf | undefined {
    const fs = this.fs;
    const core = this.coreOfCpu.get(id);
    if (!existsSync(fs.path(`${base}/topology`))) return core;
    // Every CPU's own sibling list is read, even when a sibling already named it: the kernel
    // states each relation twice, and a contradiction must stop the plan, not be merged away.
    const own = readSiblings(fs, id);
    if (core) {
      const first = this.siblingSource.get(core)!;
      if (!own.set.equals(core.siblings)) {
        throw new UserError(
          `${fs.path(own.file)} says "${own.set}" but ${fs.path(first.file)} says "${core.siblings}"; SMT sibling lists contradict each other — sysfs cannot be trusted for isolation; check the kernel and the --root tree`,
        );
      }
      return core;
    }
    const t = `${base}/topology`;
    const created: CoreOf = {
      siblings: own.set,
      pkg: fs.int(`${t}/physical_package_id`),
      die: fs.int(`${t}/die_id`),
      cluster: fs.int(`${t}/cluster_id`),
    };
    this.siblingSource.set(created, own);
    for (const s of own.set) {
      const claimed = this.coreOfCpu.get(s);
      if (claimed) {
        throw new UserError(
          `${fs.path(own.file)} says "${own.set}" but ${fs.path(this.siblingSource.get(claimed)!.file)} says "${claimed.siblings}"; SMT sibling lists contradict each other — sysfs cannot be trusted for isolation; check the kernel and the --root tree`,
        );
      }
      const onlineList = this.facts.onlineList;
      if (onlineList && !onlineList.has(s)) {
        throw new UserError(
          `${fs.path(own.file)} names cpu${s}, which ${fs.path(`${CPU_DIR}/online`)} does not list as online; sysfs contradicts itself — check the kernel and the --root tree`,
        );
      }
      this.coreOfCpu.set(s, created);
    }
    return created;
  }

  /** An online CPU's L3 group (named by its first CPU), read once per group. */
  private l3Of(id: number, base: string): number | null {
    const known = this.l3OfCpu.get(id) ?? null;
    if (known !== null) return known;
    const shared = readL3(this.fs, base);
    if (shared) for (const s of shared) this.l3OfCpu.set(s, shared.first!);
    return shared?.first ?? null;
  }
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

export function buildCores(cpus: Cpu[], warnings: string[]): Core[] {
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
