// Turns an allocation into the ordered writes of a cgroup v1 host (legacy, or hybrid with cpuset on a
// v1 hierarchy). isolate owns the v1 cpuset hierarchy (systemd does not manage it there): one cpuset
// per workload, `/isolate-<name>`. The order follows v1's rules: a new cpuset gets cpus and mems
// before any task; a child's CPUs are a subset of its parent's (shrink bottom-up); a sibling may not
// overlap a `cpu_exclusive` cpuset (donors shrink before the exclusive one grows, the flag comes last);
// tasks move last. Fields v1 cannot express are refused, naming the layout and the kernel parameter.
import { CpuSet } from '../model/cpuset.js';
import type { ObservedState, ObservedV1 } from '../model/observed.js';
import type { Allocation, Change, WorkloadAllocation } from '../model/plan.js';
import type { Policy } from '../model/policy.js';
import type { Topology } from '../model/topology.js';
import { refuseInexpressible } from './v1-refusals.js';
import { byText } from '../model/order.js';
import { blkioChanges, memoryAndCpu, type Push } from './v1-settings.js';

export { weightToShares } from './v1-settings.js';

export const HOUSEKEEPING_CPUSET = '/isolate-housekeeping';

export function v1CpusetPath(name: string): string {
  return `/isolate-${name}`;
}

interface DesiredSet {
  path: string;
  role: 'exclusive' | 'batch' | 'fence' | 'housekeeping';
  workload?: string;
  cpus: CpuSet;
  mems?: CpuSet;
  create: boolean;
  pids: number[];
}

const ROLE_RANK = { exclusive: 0, batch: 1, housekeeping: 2, fence: 3 } as const;

function parse(s: string | null | undefined): CpuSet | null {
  if (s === null || s === undefined) return null;
  try {
    return CpuSet.parse(s);
  } catch {
    return null;
  }
}

function depth(p: string): number {
  return p === '/' ? 0 : p.split('/').length - 1;
}

export function v1Changes(
  topology: Topology,
  policy: Policy,
  allocation: Allocation,
  observed: ObservedState,
  warnings: string[],
): Change[] {
  const v1 = observed.v1!;
  // Refusals first: nothing is planned for a policy this layout cannot honour.
  for (const a of allocation.workloads) {
    refuseInexpressible(policy, policy.workloads.find((x) => x.name === a.name)!, v1);
  }
  const desired = desiredCpusets(topology, policy, allocation, v1, warnings);
  const writes = new V1Writes(v1, desired);
  writes.created();
  const fences = desired.filter((d) => d.role === 'fence');
  const ordered = [
    ...fences,
    ...desired
      .filter((d) => d.role !== 'fence')
      .sort((a, b) => ROLE_RANK[a.role] - ROLE_RANK[b.role] || byText(a.path, b.path)),
  ];
  const current = writes.donors(ordered);
  writes.memoryMigrate(ordered);
  writes.memoryNodes(ordered);
  writes.finalCpus(ordered, current);
  writes.exclusiveFlags(ordered, warnings);
  writes.settings(policy, allocation, observed, warnings);
  writes.processMoves(ordered);
  return writes.inOrder();
}

/** The cpusets a v1 plan wants: one per workload and, under strict, the housekeeping cpuset and fences. */
function desiredCpusets(
  topology: Topology,
  policy: Policy,
  allocation: Allocation,
  v1: ObservedV1,
  warnings: string[],
): DesiredSet[] {
  const desired: DesiredSet[] = allocation.workloads.map((a) => workloadCpuset(a, v1));
  const ours = new Set(desired.map((d) => d.path.slice(1)));
  warnings.push(...unmatchedWarnings(allocation, v1, policy.strict));
  if (policy.strict) desired.push(...strictCpusets(topology, allocation, v1, ours));
  return desired;
}

function workloadCpuset(a: WorkloadAllocation, v1: ObservedV1): DesiredSet {
  const p = v1CpusetPath(a.name);
  return {
    path: p,
    role: a.class,
    workload: a.name,
    cpus: a.cpus,
    mems: CpuSet.of(a.mems),
    create: !v1.cpusets[p]?.exists,
    pids: v1.members[a.name] ?? [],
  };
}

/** strict: the housekeeping cpuset for the root's processes, and every other cpuset off the exclusive CPUs. */
function strictCpusets(
  topology: Topology,
  allocation: Allocation,
  v1: ObservedV1,
  ours: Set<string>,
): DesiredSet[] {
  const cs = (p: string) => v1.cpusets[p];
  const exclusiveCpus = CpuSet.of(
    allocation.workloads.filter((a) => a.class === 'exclusive').flatMap((a) => a.cpus.toArray()),
  );
  const housekeepingCpus = topology.online.minus(exclusiveCpus);
  const rootMems = parse(cs('/')?.values['cpuset.mems']) ?? null;
  const out: DesiredSet[] = [
    {
      path: HOUSEKEEPING_CPUSET,
      role: 'housekeeping',
      cpus: housekeepingCpus,
      mems: rootMems || undefined,
      create: !cs(HOUSEKEEPING_CPUSET)?.exists,
      pids: v1.rootProcs.filter((pid) => !Object.values(v1.members).some((m) => m.includes(pid))),
    },
  ];
  ours.add(HOUSEKEEPING_CPUSET.slice(1));
  // Every other cpuset cgroup, bottom-up, loses the exclusive CPUs (v1: children first).
  const others = Object.keys(v1.cpusets).filter((p) => p !== '/' && !ours.has(p.split('/')[1]!));
  for (const p of others.sort((a, b) => depth(b) - depth(a) || byText(a, b))) {
    const cur = parse(cs(p)?.values['cpuset.cpus']);
    if (!cur || cur.isEmpty || cur.intersect(exclusiveCpus).isEmpty) continue;
    const keep = cur.minus(exclusiveCpus);
    out.push({
      path: p,
      role: 'fence',
      cpus: keep.isEmpty ? housekeepingCpus : keep,
      create: false,
      pids: [],
    });
  }
  return out;
}
/** The writes of a v1 plan, one numbered step per method, each diffed against the cpuset hierarchy. */
class V1Writes {
  private readonly changes: Change[] = [];
  private readonly cpusetH: string;

  constructor(
    private readonly v1: ObservedV1,
    private readonly desired: DesiredSet[],
  ) {
    this.cpusetH = v1.hierarchies.cpuset!;
  }

  private cs(p: string) {
    return this.v1.cpusets[p];
  }

  private readonly push: Push = (hierarchy, target, setting, from, to, workload, note) => {
    this.changes.push({
      backend: 'cgroupfs',
      hierarchy,
      target,
      setting,
      from,
      to,
      workload: workload || undefined,
      note: note || undefined,
    });
  };

  // 1. The cpusets isolate creates (v1: empty cpus and mems until written).
  created(): void {
    for (const d of this.desired.filter((x) => x.create)) {
      this.push(
        this.cpusetH,
        d.path,
        'mkdir',
        null,
        'present',
        d.workload,
        'isolate owns the cgroup v1 cpuset hierarchy (systemd does not manage it there)',
      );
    }
  }

  // 2. Donors shrink to what they keep (fences bottom-up first), so no CPU is ever in two hands when
  // the exclusive cpuset grows; a cpuset that keeps none is written once, in step 4.
  /** Returns each cpuset's cpuset.cpus once the donors have shrunk. */
  donors(ordered: DesiredSet[]): Map<string, string | null> {
    const current = new Map<string, string | null>();
    for (const d of ordered) {
      const raw = this.cs(d.path)?.values['cpuset.cpus'] ?? null;
      current.set(d.path, raw);
      const old = parse(raw);
      if (old === null || old.isEmpty || old.isSubsetOf(d.cpus)) continue;
      const keep = old.intersect(d.cpus);
      if (keep.isEmpty) continue;
      this.push(this.cpusetH, d.path, 'cpuset.cpus', raw, keep.toString(), d.workload);
      current.set(d.path, keep.toString());
    }
    return current;
  }

  // 3. v1 moves a task's pages to its cpuset's memory nodes only when cpuset.memory_migrate is 1
  // (v2 always does): set on each exclusive cpuset before its nodes are written and its tasks moved
  // in, or Kafka's memory (its page cache and heap) stays on the node it left.
  memoryMigrate(ordered: DesiredSet[]): void {
    for (const d of ordered) {
      if (d.role !== 'exclusive') continue;
      const raw = this.cs(d.path)?.values['cpuset.memory_migrate'] ?? null;
      if (raw !== '1') {
        this.push(
          this.cpusetH,
          d.path,
          'cpuset.memory_migrate',
          raw,
          '1',
          d.workload,
          "v1 moves a task's memory to the cpuset's nodes only with memory_migrate set (v2 always does)",
        );
      }
    }
  }

  // 4. Memory nodes (a v1 cpuset takes no task without them).
  memoryNodes(ordered: DesiredSet[]): void {
    for (const d of ordered) {
      if (!d.mems) continue;
      const raw = this.cs(d.path)?.values['cpuset.mems'] ?? null;
      if (!same(raw, d.mems))
        this.push(this.cpusetH, d.path, 'cpuset.mems', raw, d.mems.toString(), d.workload);
    }
  }

  // 5. Final CPUs: the exclusive cpusets (their donors have let go), then the rest grow.
  finalCpus(ordered: DesiredSet[], current: Map<string, string | null>): void {
    for (const d of ordered.filter((x) => x.role !== 'fence')) {
      const now = current.get(d.path) ?? null;
      if (!same(now, d.cpus))
        this.push(this.cpusetH, d.path, 'cpuset.cpus', now, d.cpus.toString(), d.workload);
    }
  }

  // 6. cpu_exclusive: v1's counterpart of a partition root — no sibling can take these CPUs while it
  // is set. mem_exclusive likewise for memory nodes, where no sibling shares them.
  exclusiveFlags(ordered: DesiredSet[], warnings: string[]): void {
    for (const d of ordered.filter((x) => x.role === 'exclusive')) {
      const sibs = this.siblingsOf(d.path);
      const clash = sibs.find((s) => !s.cpus.intersect(d.cpus).isEmpty);
      if (clash) {
        warnings.push(
          `${d.workload}: cpuset:${clash.path} keeps CPUs ${clash.cpus.intersect(d.cpus)} of ${d.path}, so it cannot be cpu_exclusive (set strict: true to fence it)`,
        );
      } else if (this.cs(d.path)?.values['cpuset.cpu_exclusive'] !== '1') {
        this.push(
          this.cpusetH,
          d.path,
          'cpuset.cpu_exclusive',
          this.cs(d.path)?.values['cpuset.cpu_exclusive'] ?? null,
          '1',
          d.workload,
          'cgroup v1 has no partitions: cpu_exclusive keeps every sibling cpuset off these CPUs',
        );
      }
      this.memExclusive(d, sibs, warnings);
    }
  }

  private memExclusive(d: DesiredSet, sibs: Sibling[], warnings: string[]): void {
    if (d.mems && sibs.every((s) => s.mems === null || s.mems.intersect(d.mems!).isEmpty)) {
      if (this.cs(d.path)?.values['cpuset.mem_exclusive'] !== '1') {
        this.push(
          this.cpusetH,
          d.path,
          'cpuset.mem_exclusive',
          this.cs(d.path)?.values['cpuset.mem_exclusive'] ?? null,
          '1',
          d.workload,
        );
      }
    } else if (d.mems) {
      warnings.push(
        `${d.workload}: memory node(s) ${d.mems} are shared with other cpusets (batch workloads get every node with memory by default), so cpuset.mem_exclusive is not set`,
      );
    }
  }

  /** The top-level cpusets beside p: the plan's own as planned, the others as they are. */
  private siblingsOf(p: string): Sibling[] {
    return [
      ...this.desired
        .filter((d) => d.path !== p && depth(d.path) === 1)
        .map((d) => ({ path: d.path, cpus: d.cpus, mems: d.mems ?? null })),
      ...this.v1.topLevel
        .map((t) => `/${t}`)
        .filter((t) => t !== p && !this.desired.some((d) => d.path === t))
        .map((t) => ({
          path: t,
          cpus: parse(this.cs(t)?.values['cpuset.cpus']) ?? CpuSet.EMPTY,
          mems: parse(this.cs(t)?.values['cpuset.mems']),
        })),
    ];
  }

  // 7. Memory and cpu settings in their own hierarchies.
  settings(policy: Policy, allocation: Allocation, observed: ObservedState, warnings: string[]): void {
    for (const a of allocation.workloads) {
      const w = policy.workloads.find((x) => x.name === a.name)!;
      memoryAndCpu(w, a.memory, this.v1, observed, this.push, this.changes, warnings);
      blkioChanges(w, this.v1, observed, this.push, warnings);
    }
  }

  // 8. Processes last, into cpusets that are fully configured; then threads that escaped them.
  processMoves(ordered: DesiredSet[]): void {
    for (const d of ordered) {
      for (const pid of [...d.pids].sort((x, y) => x - y)) {
        const from = this.v1.cpusetOf[pid] ?? null;
        if (from === d.path) continue;
        this.push(this.cpusetH, d.path, 'cgroup.procs', from, String(pid), d.workload);
      }
    }
    for (const d of ordered) {
      if (!d.workload) continue;
      const stray = this.v1.strayThreads[d.workload] ?? {};
      for (const tid of Object.keys(stray)
        .map(Number)
        .sort((x, y) => x - y)) {
        this.push(this.cpusetH, d.path, 'tasks', stray[tid]!, String(tid), d.workload);
      }
    }
  }

  // systemd's unit changes first, as on v2: each set-property re-realizes the unit's cgroups.
  inOrder(): Change[] {
    return [
      ...this.changes.filter((c) => c.backend === 'systemd'),
      ...this.changes.filter((c) => c.backend !== 'systemd'),
    ];
  }
}

interface Sibling {
  path: string;
  cpus: CpuSet;
  mems: CpuSet | null;
}

function same(raw: string | null | undefined, want: CpuSet): boolean {
  return parse(raw)?.equals(want) === true && raw !== '';
}

/**
 * An exclusive workload that matches no process (a typo in its unit name or cgroup) is said, as v2's
 * plan says it; under strict, so is each Kafka broker (a root-cpuset process running kafka.Kafka)
 * that strict would move into the housekeeping cpuset because no exclusive workload matched it.
 */
function unmatchedWarnings(allocation: Allocation, v1: ObservedV1, strict: boolean): string[] {
  const out: string[] = [];
  const unmatched = allocation.workloads.filter(
    (a) => a.class === 'exclusive' && (v1.members[a.name] ?? []).length === 0,
  );
  for (const a of unmatched) {
    out.push(
      `${a.name}: its match finds no process on this host, so nothing is moved into ${v1CpusetPath(a.name)} until one starts (check the match if Kafka is running)`,
    );
  }
  if (!strict) return out;
  const matched = new Set(Object.values(v1.members).flat());
  for (const pid of v1.rootBrokers ?? []) {
    if (matched.has(pid)) continue;
    out.push(
      `process ${pid} runs kafka.Kafka but no workload matches it: strict: true moves it into ${HOUSEKEEPING_CPUSET}, off the exclusive CPUs; fix the exclusive workload's match if it is the broker`,
    );
  }
  return out;
}
