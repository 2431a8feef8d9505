// Allocation: which whole physical cores each exclusive workload gets, on which NUMA node, and
// what the batch workloads keep. Pure: same topology, policy and observation give the same answer.
import { plural } from '../model/units.js';
import type { ObservedState } from '../model/observed.js';
import { UserError } from '../model/errors.js';
import type { Policy, WorkloadSpec } from '../model/policy.js';
import { CpuSet } from '../model/cpuset.js';
import type { Core, NumaNode, Topology } from '../model/topology.js';
import { workloadTarget } from './targets.js';
import { checkProtections, memsFor, resolveMemory } from './memory.js';
import { policyError } from './policy-error.js';
import type { Allocation, WorkloadAllocation } from '../model/plan.js';

// Where the planner's other modules have always found it.
export { policyError } from './policy-error.js';

export function allocate(
  topology: Topology,
  policy: Policy,
  observed: ObservedState | undefined,
  warnings: string[],
): Allocation {
  checkCoresConsistent(topology);
  const reserved = reservedCpus(topology, policy);
  const coreById = new Map(topology.cores.map((c) => [c.id, c]));
  const taken = new Set<number>();
  // A core is eligible for exclusive use when it sits on one known node, holds no housekeeping
  // CPU and no boot-isolated CPU (those may only go into an `isolated` partition, not `root`).
  const eligible = (c: Core) =>
    c.node !== null && !taken.has(c.id) && !c.cpus.overlaps(reserved) && !c.cpus.overlaps(topology.isolated);
  if (!topology.isolated.isEmpty) {
    warnings.push(
      `CPUs ${topology.isolated} are isolated at boot (isolcpus=); they are not given to exclusive workloads`,
    );
  }

  const out: WorkloadAllocation[] = [];
  for (const w of policy.workloads) {
    if (w.class !== 'exclusive') continue;
    const target = workloadTarget(w, observed, policy.strict);
    const assigned = observed?.assignment?.[w.name];
    const current = currentCores(topology, observed, target, coreById, eligible, warnings, assigned);
    const { picked, reason } =
      w.numa === 'spread'
        ? pickSpread(topology, policy, w, current, eligible)
        : pickSingleNode(
            topology,
            policy,
            w,
            current,
            eligible,
            warnings,
            assigned !== undefined,
            diskNodes(observed, w),
          );
    for (const c of picked) taken.add(c.id);
    const cpus = CpuSet.of(picked.flatMap((c) => c.cpus.toArray()));
    const nodes = [...new Set(picked.map((c) => c.node!))].sort((a, b) => a - b);
    const mems = memsFor(topology, policy, w, nodes, warnings);
    out.push({
      name: w.name,
      class: 'exclusive',
      target,
      cpus,
      cores: picked.map((c) => c.id).sort((a, b) => a - b),
      nodes,
      mems,
      memory: resolveMemory(topology, policy, w, mems),
      reason,
    });
  }

  const exclusiveCpus = CpuSet.of(out.flatMap((a) => a.cpus.toArray()));
  const batchCpus = topology.online.minus(exclusiveCpus);
  for (const w of policy.workloads) {
    if (w.class !== 'batch') continue;
    if (batchCpus.isEmpty) {
      throw policyError(
        policy,
        w.path,
        "no online CPU is left for this batch workload; lower the exclusive workloads' cores",
      );
    }
    const nodes = topology.nodes.filter((n) => n.cpus.overlaps(batchCpus)).map((n) => n.id);
    const mems = memsFor(topology, policy, w, nodes, warnings);
    out.push({
      name: w.name,
      class: 'batch',
      target: workloadTarget(w, observed, policy.strict),
      cpus: batchCpus,
      cores: [],
      nodes,
      mems,
      memory: resolveMemory(topology, policy, w, mems),
      reason: reserved.isEmpty
        ? 'every online CPU the exclusive workloads leave'
        : `every online CPU the exclusive workloads leave, including the reserved housekeeping CPUs ${reserved} (shared with the system)`,
    });
  }
  // Keep the policy's order in the output, whatever order we allocated in.
  const order = new Map(policy.workloads.map((w, i) => [w.name, i]));
  out.sort((a, b) => order.get(a.name)! - order.get(b.name)!);
  checkProtections(topology, policy, out);
  return { workloads: out, reserved };
}

/**
 * Cores are the unit of isolation: two cores claiming one CPU, or a CPU whose own sibling set
 * disagrees with its core, would hand one CPU to two exclusive workloads. The topology reader
 * refuses such sysfs; this keeps the planner safe whatever Topology it is given.
 */
function checkCoresConsistent(topology: Topology): void {
  const owner = new Map<number, number>();
  const cpuById = new Map(topology.cpus.map((c) => [c.id, c]));
  for (const core of topology.cores) {
    for (const id of core.cpus) {
      const other = owner.get(id);
      if (other !== undefined) {
        throw new UserError(
          `topology: cores ${other} and ${core.id} both contain cpu${id}; the SMT sibling lists contradict each other — refusing to plan on them`,
        );
      }
      owner.set(id, core.id);
      const cpu = cpuById.get(id);
      if (cpu?.online && !cpu.siblings.equals(core.cpus)) {
        throw new UserError(
          `topology: cpu${id} lists siblings ${cpu.siblings} but its core ${core.id} holds ${core.cpus}; the SMT sibling lists contradict each other — refusing to plan on them`,
        );
      }
    }
  }
}

/** Housekeeping CPUs, always whole cores: a listed CPU brings its siblings along. */
function reservedCpus(topology: Topology, policy: Policy): CpuSet {
  const r = policy.reserved;
  if ('cpus' in r) {
    const ids: number[] = [];
    for (const id of r.cpus) {
      const cpu = topology.cpus.find((c) => c.id === id);
      if (!cpu?.online || cpu.core === null) {
        throw policyError(
          policy,
          ['reserved', 'cpus'],
          `cpu ${id} is not an online CPU on this host (online: ${topology.online}); list online CPUs`,
        );
      }
      ids.push(...cpu.siblings);
    }
    return CpuSet.of(ids);
  }
  // N lowest-numbered cores of every package (or NUMA node): the kernel's housekeeping work lands on
  // CPU 0 and on each package's first CPUs by default. Per node, every node keeps CPUs of its own for
  // its devices' interrupts and kernel work, which per package leaves only on each package's first node.
  const per = r.per;
  const groups = new Map<number | null, Core[]>();
  for (const c of topology.cores) {
    const key = per === 'node' ? c.node : c.package;
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  const ids: number[] = [];
  for (const cores of groups.values()) {
    for (const c of cores.slice(0, r.cores)) ids.push(...c.cpus);
  }
  const largest = Math.max(...[...groups.values()].map((cores) => cores.length), 0);
  if (r.cores > 0 && r.cores >= largest) {
    // Every core is housekeeping: no request could fit, so say which setting to lower, and to what.
    throw policyError(
      policy,
      ['reserved', 'cores'],
      `reserves ${plural(r.cores, 'core')} per ${per}, but the largest ${per} has ${plural(largest, 'core')}, leaving none for exclusive workloads; ${largest > 1 ? `set reserved.cores to at most ${largest - 1}` : `set reserved.cores to 0 (a single-core ${per} has no core to spare)`}`,
    );
  }
  return CpuSet.of(ids);
}

/** Cores of the workload's current cpuset that are whole, still valid, and may stay. */
function currentCores(
  topology: Topology,
  observed: ObservedState | undefined,
  target: string,
  coreById: Map<number, Core>,
  eligible: (c: Core) => boolean,
  warnings: string[],
  assigned?: string,
): Core[] {
  const text =
    assigned ??
    (observed?.v1
      ? observed.v1.cpusets[target]?.values['cpuset.cpus']
      : observed?.cgroup.groups[target]?.values['cpuset.cpus']);
  if (!text) return [];
  let cpus: CpuSet;
  try {
    cpus = CpuSet.parse(text);
  } catch (err) {
    // Not "no CPUs": what it holds is unknown, so nothing of it is kept; said, not swallowed.
    warnings.push(
      `${target} cpuset.cpus reads ${JSON.stringify(text.slice(0, 80))}, which is no CPU list (${(err as Error).message}); its current cores are unknown, so none of them is kept`,
    );
    return [];
  }
  const out: Core[] = [];
  for (const id of cpus) {
    const cpu = topology.cpus[id]?.id === id ? topology.cpus[id] : topology.cpus.find((c) => c.id === id);
    if (!cpu || cpu.core === null || cpu.core !== id) continue;
    const core = coreById.get(cpu.core);
    if (core?.cpus.isSubsetOf(cpus) && eligible(core)) out.push(core);
  }
  return out;
}

function requestedCores(spec: WorkloadSpec, coresInScope: number): number {
  const c = spec.cores!;
  if ('count' in c) return c.count;
  return Math.max(1, Math.floor((coresInScope * c.percent) / 100));
}

/**
 * Fill order inside a node: performance cores before efficiency cores (hybrid parts), then one L3
 * group before the next (groups we already hold first, then the emptiest), then lowest core id.
 */
function fillOrder(cores: Core[], keep: Set<number>): Core[] {
  const groupFree = new Map<number, number>();
  const groupHeld = new Map<number, number>();
  const g = (c: Core) => c.l3 ?? -1;
  for (const c of cores) {
    groupFree.set(g(c), (groupFree.get(g(c)) ?? 0) + 1);
    if (keep.has(c.id)) groupHeld.set(g(c), (groupHeld.get(g(c)) ?? 0) + 1);
  }
  const typeRank = (c: Core) => (c.coreType === 'efficiency' ? 1 : 0);
  return [...cores].sort(
    (a, b) =>
      Number(keep.has(b.id)) - Number(keep.has(a.id)) ||
      typeRank(a) - typeRank(b) ||
      (groupHeld.get(g(b)) ?? 0) - (groupHeld.get(g(a)) ?? 0) ||
      groupFree.get(g(b))! - groupFree.get(g(a))! ||
      g(a) - g(b) ||
      a.id - b.id,
  );
}

function nearScore(topology: Topology, w: WorkloadSpec, warnings: string[]): Map<number, number> {
  const score = new Map<number, number>();
  for (const ref of w.near) {
    const dev = topology.devices.find((d) => d.kind === ref.kind && d.name === ref.name);
    if (!dev) {
      warnings.push(`${w.name}: near ${ref.kind}:${ref.name} not found on this host; ignored`);
      continue;
    }
    if (dev.node === null) {
      warnings.push(
        `${w.name}: the kernel does not know which NUMA node ${ref.kind}:${ref.name} is on; ignored`,
      );
      continue;
    }
    score.set(dev.node, (score.get(dev.node) ?? 0) + 1);
  }
  return score;
}

/**
 * Node → how many of the workload's own disks (`disks:`, its data directories' whole disks) sit
 * there, with their names: Kafka's log segments are read and written through memory of the node its
 * disks' controller is on, so its cores go there, as they go near a `near:` device. Disks whose node
 * the kernel does not know (-1) count nowhere.
 */
function diskNodes(observed: ObservedState | undefined, w: WorkloadSpec): Map<number, string[]> {
  const out = new Map<number, string[]>();
  const disks = observed?.disks?.find((d) => d.workload === w.name)?.disks ?? [];
  for (const d of disks) if (d.node !== null) out.set(d.node, [...(out.get(d.node) ?? []), d.name]);
  return out;
}

function pickSingleNode(
  topology: Topology,
  policy: Policy,
  w: WorkloadSpec,
  current: Core[],
  eligible: (c: Core) => boolean,
  warnings: string[],
  assigned = false,
  disksOn: Map<number, string[]> = new Map(),
): { picked: Core[]; reason: string } {
  // Computed once: the comparators below would otherwise rescan every core per comparison.
  const free = new Map<number, Core[]>();
  const total = new Map<number, number>();
  for (const c of topology.cores) {
    if (c.node === null) continue;
    total.set(c.node, (total.get(c.node) ?? 0) + 1);
    if (eligible(c)) free.set(c.node, [...(free.get(c.node) ?? []), c]);
  }
  const freeOn = (n: NumaNode) => free.get(n.id) ?? [];
  const candidates = topology.nodes.filter((n) => !n.cpus.isEmpty);
  const need = (n: NumaNode) => requestedCores(w, total.get(n.id) ?? 0);
  const fits = candidates.filter((n) => freeOn(n).length >= need(n));

  const currentNodes = [...new Set(current.map((c) => c.node!))];
  let node: NumaNode | undefined;
  let reason = '';
  if (currentNodes.length === 1) {
    node = fits.find((n) => n.id === currentNodes[0]);
    if (node) {
      reason = assigned
        ? `kept on node ${node.id}: the cores isolate assigned it are still valid`
        : `kept on node ${node.id}: its current cores are still valid`;
    }
  }
  if (!node) {
    const score = nearScore(topology, w, warnings);
    const criteria: [string, (a: NumaNode, b: NumaNode) => number][] = [
      ['near', (a, b) => (score.get(b.id) ?? 0) - (score.get(a.id) ?? 0)],
      ['disks', (a, b) => (disksOn.get(b.id)?.length ?? 0) - (disksOn.get(a.id)?.length ?? 0)],
      ['memory', (a, b) => Number(b.hasMemory) - Number(a.hasMemory)],
      ['free', (a, b) => freeOn(b).length - freeOn(a).length],
      ['id', (a, b) => a.id - b.id],
    ];
    const ranked = [...fits].sort((a, b) => {
      for (const [, cmp] of criteria) {
        const d = cmp(a, b);
        if (d !== 0) return d;
      }
      return 0;
    });
    node = ranked[0];
    if (node) reason = nodeReason(w, node, ranked[1], criteria, freeOn(node).length, disksOn);
    if (node && current.length > 0) {
      warnings.push(
        `${w.name}: its current cores ${current.map((c) => c.id).join(',')} cannot hold the request on one node; moving to node ${node.id}`,
      );
    }
  }
  if (!node) {
    const best = [...candidates].sort((a, b) => freeOn(b).length - freeOn(a).length || a.id - b.id)[0];
    const largest = best ? freeOn(best).length : 0;
    const asked = need(best ?? candidates[0]!);
    // "lower cores to 0" would itself be invalid: say what took every core instead.
    if (largest === 0) throw noFreeCore(topology, policy, w);
    throw policyError(
      policy,
      [...w.path, 'cores'],
      `asks for ${plural(asked, 'whole core')} on one NUMA node, but the largest request that fits is ${largest} (node ${best?.id ?? '-'}, after reserved cores and other exclusive workloads); lower cores to ${largest} or set numa: spread`,
    );
  }
  if (!node.hasMemory) {
    warnings.push(
      `${w.name}: node ${node.id} has CPUs but no memory; memory comes from its nearest memory node`,
    );
  }
  const keep = new Set(current.filter((c) => c.node === node.id).map((c) => c.id));
  return { picked: fillOrder(freeOn(node), keep).slice(0, need(node)), reason };
}

/** The first criterion that set the chosen node apart from the runner-up, in words. */
function nodeReason(
  w: WorkloadSpec,
  node: NumaNode,
  next: NumaNode | undefined,
  criteria: [string, (a: NumaNode, b: NumaNode) => number][],
  free: number,
  disksOn: Map<number, string[]>,
): string {
  if (!next) return `node ${node.id}: the only node where the request fits`;
  const decided = criteria.find(([, cmp]) => cmp(node, next) !== 0)?.[0] ?? 'id';
  if (decided === 'near') {
    return `node ${node.id}: near ${w.near.map((d) => `${d.kind}:${d.name}`).join(', ')}`;
  }
  if (decided === 'disks') {
    return `node ${node.id}: its disks ${disksOn.get(node.id)!.join(', ')} (disks:) are on this node`;
  }
  if (decided === 'memory') return `node ${node.id}: has memory (node ${next.id} has none)`;
  if (decided === 'free') return `node ${node.id}: most free whole cores (${free})`;
  return `node ${node.id}: lowest id among equally good nodes`;
}

function pickSpread(
  topology: Topology,
  policy: Policy,
  w: WorkloadSpec,
  current: Core[],
  eligible: (c: Core) => boolean,
): { picked: Core[]; reason: string } {
  const need = requestedCores(w, topology.cores.length);
  const keep = new Set(current.map((c) => c.id));
  const nodes = [...topology.nodes].sort((a, b) => Number(b.hasMemory) - Number(a.hasMemory) || a.id - b.id);
  const ordered = nodes.flatMap((n) =>
    fillOrder(
      topology.cores.filter((c) => c.node === n.id && eligible(c)),
      keep,
    ),
  );
  // Cores already held come first whatever their node, so growing never moves anything.
  ordered.sort((a, b) => Number(keep.has(b.id)) - Number(keep.has(a.id)));
  if (ordered.length === 0) throw noFreeCore(topology, policy, w);
  if (ordered.length < need) {
    throw policyError(
      policy,
      [...w.path, 'cores'],
      `asks for ${plural(need, 'whole core')}, but only ${ordered.length} are free on the whole host; lower cores to ${ordered.length}`,
    );
  }
  const picked = ordered.slice(0, need);
  const kept = picked.filter((c) => keep.has(c.id)).length;
  return {
    picked,
    reason: `numa: spread — ${kept > 0 ? `keeps its ${plural(kept, 'current core')}, then ` : ''}fills nodes with memory first, lowest id first`,
  };
}

/** No whole core is left for an exclusive workload: name what took them. */
function noFreeCore(topology: Topology, policy: Policy, w: WorkloadSpec): UserError {
  const takers = [
    'reserved housekeeping cores (reserved)',
    ...(topology.isolated.isEmpty ? [] : [`boot-isolated CPUs ${topology.isolated} (isolcpus=)`]),
    ...(policy.workloads.filter((o) => o.class === 'exclusive').length > 1
      ? ['the other exclusive workloads']
      : []),
    ...(topology.cores.some((c) => c.node === null) ? ['cores on no single known NUMA node'] : []),
  ];
  return policyError(
    policy,
    [...w.path, 'cores'],
    `no whole core is free for ${w.name}: ${takers.join(', ')} take all ${plural(topology.cores.length, 'core')}; lower reserved, free boot-isolated CPUs, or remove a workload`,
  );
}
