// Synthetic topologies for property tests and benchmarks: shapes seen on real machines (sibling
// numbering adjacent as on POWER/qemu or N/N+half as on Intel servers, several L3 groups per node
// as on EPYC, uneven thread counts, memory-less nodes, offline threads), built straight into the
// model so thousands of cases run in seconds.
import { CpuSet } from '../../src/model/cpuset.js';
import type { Core, Cpu, NumaNode, Topology } from '../../src/model/topology.js';

export interface SynthSpec {
  packages: number;
  nodesPerPackage: number;
  coresPerNode: number;
  /** Threads of each core, cycled over cores (e.g. [2] for SMT2, [2,1] for uneven cores). */
  threads: readonly number[];
  siblings: 'adjacent' | 'split';
  l3PerNode: number;
  /** Node ids that have CPUs but no memory. */
  memoryless?: number[];
  /** CPU ids to mark offline (their core loses them, as the kernel reports). */
  offline?: number[];
  nodeMemoryBytes?: number;
}

/**
 * Two nodes (one per package) of 4 SMT2 cores, siblings N and N+8: node 0 = cpus 0-3,8-11,
 * node 1 = 4-7,12-15. The small two-socket host many planner and CLI tests plan on.
 */
export const TWO_NODES_SMT2_SPLIT: SynthSpec = {
  packages: 2,
  nodesPerPackage: 1,
  coresPerNode: 4,
  threads: [2],
  siblings: 'split',
  l3PerNode: 1,
};

export function synthTopology(spec: SynthSpec): Topology {
  const nodesTotal = spec.packages * spec.nodesPerPackage;
  const coresTotal = nodesTotal * spec.coresPerNode;
  const threadsOf = (coreIndex: number) => spec.threads[coreIndex % spec.threads.length]!;
  // Assign CPU ids per (core, thread).
  const idOf: number[][] = [];
  let next = 0;
  for (let c = 0; c < coresTotal; c++) {
    idOf.push([]);
    for (let t = 0; t < threadsOf(c); t++) {
      idOf[c]!.push(spec.siblings === 'split' ? t * coresTotal + c : next++);
    }
  }
  const offline = new Set(spec.offline ?? []);
  const cpus: Cpu[] = [];
  const cores: Core[] = [];
  for (let c = 0; c < coresTotal; c++) {
    const node = Math.floor(c / spec.coresPerNode);
    const pkg = Math.floor(node / spec.nodesPerPackage);
    const inNode = c % spec.coresPerNode;
    const l3Index = Math.floor((inNode * spec.l3PerNode) / spec.coresPerNode);
    const onlineIds = idOf[c]!.filter((id) => !offline.has(id));
    const siblings = CpuSet.of(onlineIds);
    const coreId = siblings.first ?? null;
    for (const id of idOf[c]!) {
      cpus.push({
        id,
        online: !offline.has(id),
        package: offline.has(id) ? null : pkg,
        die: null,
        cluster: null,
        node,
        core: offline.has(id) ? null : coreId,
        siblings: offline.has(id) ? CpuSet.EMPTY : siblings,
        l3: null, // filled below once core ids are known
        coreType: null,
      });
    }
    if (coreId !== null) {
      cores.push({
        id: coreId,
        package: pkg,
        node,
        l3: node * 1000 + l3Index,
        coreType: null,
        cpus: siblings,
      });
    }
  }
  // L3 group id: lowest CPU id sharing the cache, as the reader computes it.
  const l3Min = new Map<number, number>();
  for (const core of cores)
    l3Min.set(core.l3!, Math.min(l3Min.get(core.l3!) ?? Number.MAX_SAFE_INTEGER, core.id));
  for (const core of cores) core.l3 = l3Min.get(core.l3!)!;
  const coreOf = new Map(cores.map((c) => [c.id, c]));
  for (const cpu of cpus) if (cpu.core !== null) cpu.l3 = coreOf.get(cpu.core)!.l3;
  cpus.sort((a, b) => a.id - b.id);
  cores.sort((a, b) => a.id - b.id);

  const memoryless = new Set(spec.memoryless ?? []);
  const mem = spec.nodeMemoryBytes ?? 64 * 1024 ** 3;
  const nodes: NumaNode[] = [];
  for (let n = 0; n < nodesTotal; n++) {
    const distances: Record<number, number> = {};
    for (let m = 0; m < nodesTotal; m++) {
      distances[m] =
        m === n
          ? 10
          : Math.floor(m / spec.nodesPerPackage) === Math.floor(n / spec.nodesPerPackage)
            ? 12
            : 21;
    }
    nodes.push({
      id: n,
      cpus: CpuSet.of(cpus.filter((c) => c.node === n && c.online).map((c) => c.id)),
      memoryBytes: memoryless.has(n) ? 0 : mem,
      hasMemory: !memoryless.has(n),
      distances,
    });
  }
  const online = CpuSet.of(cpus.filter((c) => c.online).map((c) => c.id));
  return {
    root: '(synthetic)',
    cpus,
    cores,
    nodes,
    devices: [{ kind: 'nic', name: 'eth0', node: nodesTotal - 1 }],
    online,
    offline: CpuSet.of(cpus.filter((c) => !c.online).map((c) => c.id)),
    possible: CpuSet.of(cpus.map((c) => c.id)),
    isolated: CpuSet.EMPTY,
    warnings: [],
    notes: [],
  };
}
