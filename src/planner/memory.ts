// A workload's memory in the allocation: which nodes it may take memory from (mems), its min, low,
// high and max in bytes (percentages of those nodes, a page cache sized from a write rate), and the
// check that every workload's protections fit in the host.
import { formatBytes, pageAlign } from '../model/units.js';
import type { MemoryAmount, MemoryKey, Policy, WorkloadSpec } from '../model/policy.js';
import { sizeCache } from './page-cache.js';
import { CpuSet } from '../model/cpuset.js';
import type { NumaNode, Topology } from '../model/topology.js';
import type { WorkloadAllocation } from '../model/plan.js';
import { policyError } from './policy-error.js';

export function memsFor(
  topology: Topology,
  policy: Policy,
  w: WorkloadSpec,
  nodes: number[],
  warnings: string[],
): number[] {
  const memNodes = topology.nodes.filter((n) => n.hasMemory).map((n) => n.id);
  const spec = w.memory.mems;
  if (spec === 'all' || (spec === 'local' && w.class === 'batch')) return memNodes;
  if (spec === 'local') {
    const out = new Set<number>();
    for (const id of nodes) {
      const n = topology.nodes.find((x) => x.id === id)!;
      if (n.hasMemory) out.add(id);
      else {
        const nearest = nearestMemoryNode(topology, n);
        if (nearest === null)
          throw policyError(policy, [...w.path, 'memory', 'mems'], 'no node on this host has memory');
        warnings.push(`${w.name}: mems use node ${nearest} (nearest memory to node ${id})`);
        out.add(nearest);
      }
    }
    return [...out].sort((a, b) => a - b);
  }
  for (const id of spec) {
    if (!memNodes.includes(id)) {
      throw policyError(
        policy,
        [...w.path, 'memory', 'mems'],
        `node ${id} has no memory on this host (nodes with memory: ${CpuSet.of(memNodes)}); list nodes with memory`,
      );
    }
  }
  return spec.toArray();
}

function nearestMemoryNode(topology: Topology, from: NumaNode): number | null {
  const withMem = topology.nodes.filter((n) => n.hasMemory);
  withMem.sort((a, b) => (from.distances[a.id] ?? 255) - (from.distances[b.id] ?? 255) || a.id - b.id);
  return withMem[0]?.id ?? null;
}

/**
 * The most of its nodes' memory a memory.low derived from `{ writeRate, window }` may protect. All of
 * it (what the planner once capped at) leaves nothing reclaimable for the heap Kafka itself grows, the
 * kernel and the batch workloads on that node; a bigger protection is the operator's to write as a size.
 */
const DERIVED_SHARE_MAX = 75;

/** The share (in %, rounded up) of `scope` that `bytes` is, when above DERIVED_SHARE_MAX; null when within it or unknown. */
function derivedShare(bytes: number, scope: number): number | null {
  if (scope <= 0 || bytes * 100 <= scope * DERIVED_SHARE_MAX) return null;
  return Math.ceil((bytes * 100) / scope);
}

export function resolveMemory(
  topology: Topology,
  policy: Policy,
  w: WorkloadSpec,
  mems: number[],
): WorkloadAllocation['memory'] {
  // Percentages are of the memory the workload may use: its mems nodes (all nodes for batch).
  const scope = topology.nodes.filter((n) => mems.includes(n.id)).reduce((s, n) => s + n.memoryBytes, 0);
  const out: WorkloadAllocation['memory'] = {};
  const resolve = (a: MemoryAmount): number | 'max' => {
    if ('unlimited' in a) return 'max';
    if ('writeRate' in a) {
      const share = derivedShare(a.writeRate * a.windowSeconds, scope);
      if (share !== null) {
        const where = `node${mems.length === 1 ? '' : 's'} ${mems.join(',')}`;
        throw policyError(
          policy,
          [...w.path, 'memory', 'low'],
          `${a.written.writeRate} × ${a.written.window} is ${formatBytes(a.writeRate * a.windowSeconds)}, ${share} % of the ${formatBytes(scope)} of ${where}; a protection derived from a write rate is kept to ${DERIVED_SHARE_MAX} % of its nodes' memory (${formatBytes((scope * DERIVED_SHARE_MAX) / 100)} here: the heap, the kernel and the other workloads live there too): lower window or writeRate, give ${w.name} more nodes (memory.mems), or write memory.low as a size if you mean that much`,
        );
      }
      return sizeCache(a).bytes;
    }
    const bytes = 'bytes' in a ? a.bytes : (scope * a.percent) / 100;
    return pageAlign(bytes);
  };
  for (const key of ['min', 'low', 'high', 'max'] as MemoryKey[]) {
    const a = w.memory[key];
    if (a) out[key] = resolve(a);
  }
  const { high, max } = out;
  if (typeof high === 'number' && typeof max === 'number' && max < high) {
    throw policyError(
      policy,
      [...w.path, 'memory', 'max'],
      `max (${formatBytes(max)}) is below high (${formatBytes(high)}) on this host; max must be at least high`,
    );
  }
  return out;
}

/** Protections promised to all workloads together must fit in the host's memory. */
export function checkProtections(topology: Topology, policy: Policy, allocs: WorkloadAllocation[]): void {
  const hostMemory = topology.nodes.reduce((s, n) => s + n.memoryBytes, 0);
  if (hostMemory === 0) return;
  let sum = 0;
  for (const a of allocs) {
    const m = a.memory;
    // Counted separately and conservatively: min and low both promise memory to someone.
    sum += (typeof m.min === 'number' ? m.min : 0) + (typeof m.low === 'number' ? m.low : 0);
    if (sum > hostMemory) {
      const w = policy.workloads.find((x) => x.name === a.name)!;
      throw policyError(
        policy,
        [...w.path, 'memory'],
        `memory protections (min + low) of all workloads add up to ${formatBytes(sum)}, more than the host's ${formatBytes(hostMemory)}; lower min/low`,
      );
    }
  }
}
