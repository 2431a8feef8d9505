// The cgroups a cgroup v2 plan wants, and what each should hold: the workloads' targets, the dedicated
// slices strict moves exclusive services into (with the anchors that keep cpuset enabled meanwhile),
// and strict's fences on the other top-level cgroups. changes.ts diffs them against the host.
import { CpuSet, sameCpuList } from '../model/cpuset.js';
import type { ObservedState } from '../model/observed.js';
import type { Allocation, Change, WorkloadAllocation } from '../model/plan.js';
import type { Policy } from '../model/policy.js';
import {
  anchorSliceFor,
  cgroupCpuList,
  sliceDropInPath,
  slicePath,
  toSystemdValue,
} from '../model/systemd.js';
import type { Topology } from '../model/topology.js';
import { type IoWant, ioSiblingWarnings, ioWantsOf } from './io.js';
import type { ObservedCgroups } from './observed-cgroups.js';
import { parentOf, type SlicePlacement, slicePlacement } from './targets.js';

export type Role = 'exclusive' | 'batch' | 'fence';

export interface Desired {
  path: string;
  role: Role;
  workload?: string;
  cpus: CpuSet;
  mems?: CpuSet;
  memory: Partial<Record<'min' | 'low' | 'high' | 'max', number | 'max'>>;
  cpuWeight?: number;
  cpuIdle?: boolean;
  partition: boolean;
  pids: number[];
  create: boolean;
  /** A systemd unit not running now: only its unit properties can be set. */
  absent?: boolean;
  /** Per-device io settings on the exclusive workloads' disks (planner/io.ts). */
  io?: IoWant[];
}

/** Top-level units every systemd host has (machine.slice once a VM or container runs). */
export const STANDARD_TOP_LEVEL = ['init.scope', 'system.slice', 'user.slice', 'machine.slice'];

export interface DesiredState {
  desired: Desired[];
  /** The Slice= drop-ins that move strict's exclusive services into slices of their own. */
  sliceMoves: Change[];
  /** The empty slices that keep cpuset enabled where a moved service still runs until its restart. */
  anchors: Change[];
}

/** What every cgroup the plan touches should hold, in the order it is found; warnings as it goes. */
export function desiredState(
  topology: Topology,
  policy: Policy,
  allocation: Allocation,
  view: ObservedCgroups,
  warnings: string[],
): DesiredState {
  const state = new DesiredBuilder(topology, policy, allocation, view, warnings);
  for (const a of allocation.workloads) state.placeInSlice(a);
  for (const a of allocation.workloads) state.workloadTarget(a);
  state.ioSiblings();
  if (policy.strict) state.strictFences();
  return { desired: state.desired, sliceMoves: state.sliceMoves, anchors: state.anchors };
}

class DesiredBuilder {
  readonly desired: Desired[] = [];
  // strict on a systemd host: exclusive services move to a top-level slice of their own (a Slice=
  // drop-in isolate writes), which is then fenced and made the partition root (targets.ts).
  readonly sliceMoves: Change[] = [];
  readonly anchors: Change[] = [];
  private readonly anchorNames = new Set<string>();
  /** Workloads whose unit runs outside its dedicated slice until its next restart. */
  private readonly movingLater = new Set<string>();
  /** The dedicated slices (`/kafka.slice`) strict moves exclusive units into: never fenced off them. */
  private readonly homes = new Set<string>();
  private readonly exclusiveCpus: CpuSet;
  private readonly observed: ObservedState;

  constructor(
    private readonly topology: Topology,
    private readonly policy: Policy,
    allocation: Allocation,
    private readonly view: ObservedCgroups,
    private readonly warnings: string[],
  ) {
    this.observed = view.observed;
    this.exclusiveCpus = CpuSet.of(
      allocation.workloads.filter((a) => a.class === 'exclusive').flatMap((a) => a.cpus.toArray()),
    );
  }

  private specOf(a: WorkloadAllocation) {
    return this.policy.workloads.find((w) => w.name === a.name)!;
  }

  /** strict: an exclusive service's dedicated slice, the move into it, and its anchor meanwhile. */
  placeInSlice(a: WorkloadAllocation): void {
    const spec = this.specOf(a);
    const placed = this.view.known ? slicePlacement(spec, this.observed, this.policy.strict) : null;
    if (!placed) return;
    const home = slicePath(placed.slice);
    this.homes.add(home);
    if (placed.move) {
      this.sliceMoves.push({
        backend: 'systemd',
        target: placed.unit,
        setting: 'Slice',
        from: placed.configured || null,
        to: placed.slice,
        workload: a.name,
        note: `isolate writes the drop-in ${sliceDropInPath(placed.unit)}; it takes effect at the unit's next restart (isolate never restarts it)`,
      });
    }
    if (placed.pending !== null) {
      this.movingLater.add(a.name);
      this.anchor(placed);
      this.warnings.push(
        `${a.name}: ${placed.unit} runs in ${placed.pending}; it moves to ${placed.slice} at its next restart (systemctl restart ${placed.unit}). Until then it is fenced as a unit, ${parentOf(placed.pending)} is not fenced and ${home} is no partition root`,
      );
    }
    this.sliceSettings(a, placed, home);
  }

  /** The anchor slice of the shared slice a moved unit still runs in, once per anchor. */
  private anchor(placed: SlicePlacement): void {
    const anchor = anchorSliceFor(parentOf(placed.pending!));
    if (!anchor || this.anchorNames.has(anchor)) return;
    this.anchorNames.add(anchor);
    this.anchors.push(
      ...anchorChanges(
        anchor,
        this.topology.online.minus(this.exclusiveCpus),
        this.view.systemd?.units[anchor],
        placed,
      ),
    );
  }

  // The slice gets the workload's settings before the unit runs in it (so it starts fenced), and a
  // unit that carries its own AllowedCPUs=/AllowedMemoryNodes= keeps them equal to the slice's.
  private sliceSettings(a: WorkloadAllocation, placed: SlicePlacement, home: string): void {
    const extra: { path: string; memory: Desired['memory'] }[] = [];
    if (placed.pending !== null && this.view.unitFor(home)) extra.push({ path: home, memory: a.memory });
    const props = this.view.systemd?.units[placed.unit];
    if (placed.pending === null && (props?.AllowedCPUs || props?.AllowedMemoryNodes)) {
      extra.push({ path: this.observed.cgroup.units[placed.unit] ?? `${home}/${placed.unit}`, memory: {} });
    }
    for (const x of extra) {
      this.desired.push({
        path: x.path,
        role: 'exclusive',
        workload: a.name,
        cpus: a.cpus,
        mems: CpuSet.of(a.mems),
        memory: x.memory,
        partition: false,
        pids: [],
        create: false,
        absent: !this.view.exists(x.path),
      });
    }
  }

  /** A workload's own target: its CPUs, memory nodes, memory, cpu and io settings, and processes. */
  workloadTarget(a: WorkloadAllocation): void {
    const spec = this.specOf(a);
    const missing = this.view.known && !this.view.exists(a.target);
    // A unit that is not running has no cgroup; systemd still takes its properties, so it starts fenced.
    const viaUnit = this.view.unitFor(a.target) !== null;
    if (missing && spec.match.kind === 'systemdUnit' && !viaUnit) {
      this.warnings.push(
        `${a.name}: ${spec.match.unit} has no cgroup (not running); nothing to change until it starts`,
      );
      return;
    }
    const partition = this.partitionWarnings(a);
    this.desired.push({
      path: a.target,
      role: a.class,
      workload: a.name,
      cpus: a.cpus,
      mems: CpuSet.of(a.mems),
      memory: a.memory,
      cpuWeight: spec.cpu?.weight,
      cpuIdle: spec.cpu?.idle,
      partition,
      pids: spec.match.kind === 'process' ? (this.observed.processes[a.name] ?? []) : [],
      create: missing && !viaUnit,
      absent: missing && viaUnit,
      io: ioWantsOf(spec, this.observed),
    });
  }

  /** Whether an exclusive target becomes a partition root; says why not when it cannot. */
  private partitionWarnings(a: WorkloadAllocation): boolean {
    const fs = this.observed.cgroup;
    const topLevel = parentOf(a.target) === '/';
    const partition = a.class === 'exclusive' && fs.features.partition && topLevel;
    if (a.class === 'exclusive' && this.view.known && !fs.features.partition) {
      this.warnings.push(
        `${a.name}: this kernel${fs.kernel ? ` (${fs.kernel})` : ''} has no cpuset partitions (cpuset.cpus.partition, Linux 5.0+), so only cpuset.cpus fences ${a.target}: no other cgroup is kept off its CPUs by the kernel, only by isolate's own writes`,
      );
    }
    if (a.class === 'exclusive' && fs.features.partition && !topLevel && !this.movingLater.has(a.name)) {
      this.warnings.push(
        `${a.name}: ${a.target} is not a top-level cgroup, so it cannot be a cpuset partition root; only cpuset.cpus fences it (${this.policy.strict ? 'strict: true moves only systemd units; match it by systemdUnit, or run it in a top-level slice of its own, e.g. kafka.slice' : 'put it in its own slice, e.g. kafka.slice, and use strict: true'})`,
      );
    }
    return partition;
  }

  /** io.latency protects an exclusive workload only as far as its batch siblings allow: said. */
  ioSiblings(): void {
    const withIo = this.desired.filter((d) => d.io?.length && d.workload);
    this.warnings.push(
      ...ioSiblingWarnings(
        withIo
          .filter((e) => e.role === 'exclusive' && e.io!.some((w) => w.file === 'io.latency'))
          .flatMap((e) =>
            withIo
              .filter((b) => b.role === 'batch')
              .map((b) => ({
                exclusive: { name: e.workload!, target: e.path },
                batch: { name: b.workload!, target: b.path },
              })),
          ),
      ),
    );
  }

  /** strict: every other top-level cgroup is fenced off the exclusive CPUs. */
  strictFences(): void {
    const fs = this.observed.cgroup;
    const sd = this.view.systemd;
    const targets = new Set(this.desired.map((d) => d.path));
    const exclusiveTargets = this.desired.filter((d) => d.role === 'exclusive').map((d) => d.path);
    if (!this.view.known)
      this.warnings.push('strict: the top-level cgroups cannot be read here, so the fences are not listed');
    // Under systemd, the standard top-level units are fenced even before they run (user.slice starts
    // at the first login), so they start fenced.
    const names = new Set(fs.topLevel);
    for (const u of STANDARD_TOP_LEVEL) if (sd?.units[u]) names.add(u);
    for (const name of [...names].sort()) {
      const path = `/${name}`;
      // An exclusive unit's own slice, even one systemd has not loaded yet (an empty cgroup left there):
      // fenced, the unit would start off its own CPUs at its next restart.
      if (targets.has(path) || this.homes.has(path)) continue;
      if (exclusiveTargets.some((t) => t.startsWith(`${path}/`))) {
        this.warnings.push(
          `strict: ${path} holds an exclusive workload, so its other children are not fenced; run the workload in its own top-level slice`,
        );
        continue;
      }
      this.desired.push({
        path,
        role: 'fence',
        cpus: this.topology.online.minus(this.exclusiveCpus),
        memory: {},
        partition: false,
        pids: [],
        create: false,
        absent: this.view.known && !this.view.exists(path),
      });
    }
  }
}

/**
 * The anchor slice that keeps cpuset enabled in the shared slice a strict unit still runs in
 * (model/systemd.ts anchorSliceFor): its AllowedCPUs= (the fence: nothing runs in it), then started.
 */
function anchorChanges(
  anchor: string,
  fence: CpuSet,
  props: Record<string, string> | undefined,
  placed: SlicePlacement,
): Change[] {
  const why = `${placed.unit} still runs in ${parentOf(placed.pending!)} and systemd enables cpuset there only for its members (${placed.unit} is ${placed.slice}'s since the Slice= drop-in): this empty slice keeps cpuset enabled so ${placed.unit}'s AllowedCPUs= is in force until its restart`;
  const out: Change[] = [];
  const want = toSystemdValue('cpuset.cpus', fence.toString());
  const held = props?.AllowedCPUs ?? null;
  if (held === null || !sameCpuList(cgroupCpuList(held), fence.toString())) {
    out.push({ backend: 'systemd', target: anchor, setting: 'AllowedCPUs', from: held, to: want, note: why });
  }
  if (props?.ActiveState !== 'active') {
    out.push({
      backend: 'systemd',
      target: anchor,
      setting: 'ActiveState',
      from: props?.ActiveState ?? null,
      to: 'active',
      note: why,
    });
  }
  return out;
}
