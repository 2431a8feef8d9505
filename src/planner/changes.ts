// Turns an allocation into the smallest ordered list of cgroup writes, diffed against what the
// kernel reports. The order follows the kernel's rules (docs/cgroup-v2 §2.4, §9): controllers
// top-down, donors shrink before receivers grow, partitions last, process moves after the target
// is fully configured.
import type { ObservedState } from '../model/observed.js';
import type { Policy } from '../model/policy.js';
import { CpuSet } from '../model/cpuset.js';
import type { Topology } from '../model/topology.js';
import { ancestors } from './targets.js';
import type { Allocation, CgroupSetting, Change } from '../model/plan.js';
import { SYSTEMD_PROPERTY, type SystemdManagedFile, toSystemdValue } from '../model/systemd.js';
import { byText } from '../model/order.js';
import { ioLineOf, ioSatisfies } from '../model/io.js';
import { ioUnitNotInForce } from './held-not-in-force.js';
import { ioUnitChanges } from './io.js';
import { type Desired, desiredState, type Role } from './desired.js';
import { ObservedCgroups } from './observed-cgroups.js';

export { STANDARD_TOP_LEVEL } from './desired.js';

const ROLE_RANK: Record<Role, number> = { exclusive: 0, batch: 1, fence: 2 };

export function cgroupChanges(
  topology: Topology,
  policy: Policy,
  allocation: Allocation,
  observed: ObservedState,
  warnings: string[],
): Change[] {
  const view = new ObservedCgroups(observed);
  const { desired, sliceMoves, anchors } = desiredState(topology, policy, allocation, view, warnings);
  const owned = systemdOwnedWarning(desired, view);
  if (owned) warnings.push(owned);

  const writes = new CgroupWrites(view, topology);
  writes.controllers(desired);
  writes.created(desired);
  const ordered = [...desired].sort(
    (a, b) => ROLE_RANK[a.role] - ROLE_RANK[b.role] || byText(a.path, b.path),
  );
  const current = writes.donors(ordered);
  writes.memoryNodes(ordered);
  writes.finalCpus(ordered, current);
  writes.partitions(ordered);
  writes.memory(ordered);
  writes.cpuWeight(ordered);
  writes.io(ordered);
  writes.processMoves(ordered);
  return writes.inOrder(sliceMoves, anchors);
}

/** Targets inside systemd's units that are not units themselves: a daemon-reload may undo their writes. */
function systemdOwnedWarning(desired: Desired[], view: ObservedCgroups): string | null {
  if (!desired.some((d) => view.systemdOwned(d.path) && !view.unitFor(d.path))) return null;
  return view.systemd
    ? 'some targets lie inside systemd units but are not units themselves; a systemctl daemon-reload may undo these cgroupfs writes (give them their own slice, or Delegate=yes)'
    : 'some targets belong to systemd, which cannot be reached here; a systemctl daemon-reload may undo these cgroupfs writes';
}

/** The writes of a plan, one kind of change per method, each diffed against what the host holds. */
class CgroupWrites {
  private readonly changes: Change[] = [];

  constructor(
    private readonly view: ObservedCgroups,
    private readonly topology: Topology,
  ) {}

  /** A unit's managed file as its unit property (systemd's), anything else as a cgroupfs write. */
  private push(
    d: Desired | { path: string; workload?: string },
    setting: CgroupSetting,
    from: string | null,
    to: string,
  ): void {
    const unit = this.view.unitFor(d.path);
    if (unit && setting in SYSTEMD_PROPERTY) {
      const f = setting as SystemdManagedFile;
      const stale = this.view.notInForce(d.path, setting);
      this.changes.push({
        backend: 'systemd',
        target: unit,
        setting: SYSTEMD_PROPERTY[f],
        from: this.view.systemd!.units[unit]![SYSTEMD_PROPERTY[f]] ?? null,
        to: toSystemdValue(f, to),
        workload: d.workload || undefined,
        ...(stale ? { note: stale } : {}),
      });
      return;
    }
    if ('absent' in d && d.absent) return;
    this.changes.push({
      backend: 'cgroupfs',
      target: d.path,
      setting,
      from,
      to,
      workload: d.workload || undefined,
      ...this.note(d.path, setting),
    });
  }

  private note(path: string, setting: CgroupSetting): { note?: string } {
    if (this.view.unitFor(path) && setting === 'cpuset.cpus.partition') {
      return {
        note: 'systemd has no property for cpuset partitions: isolate writes this file and checks it every interval',
      };
    }
    return this.view.systemdOwned(path) && !this.view.unitFor(path)
      ? { note: 'systemd owns this cgroup: a systemctl daemon-reload can undo this write' }
      : {};
  }

  // 1. Controllers, top-down: a cgroup's files exist only when its parent enables the controller.
  controllers(desired: Desired[]): void {
    const need = new Map<string, Set<string>>();
    for (const d of desired) {
      const ctrls = ['cpuset'];
      if (Object.keys(d.memory).length > 0) ctrls.push('memory');
      if (d.cpuWeight !== undefined || d.cpuIdle !== undefined) ctrls.push('cpu');
      // io.latency acts only with io enabled in every ancestor; weights and caps need it in the parent.
      if (d.io?.length) ctrls.push('io');
      // The root is -.slice: systemd enables controllers there for its units (and for a delegated unit's
      // subtree) as it does in every slice, and keeps its own record of what it enabled. A write of
      // isolate's there, undone by rollback, would take away a controller systemd believes is on, and its
      // next property would not reach the kernel. The root is isolate's only for cgroups outside units.
      const inUnit = [...ancestors(d.path), d.path].some((p) => this.view.unitFor(p) !== null);
      for (const p of inUnit ? ancestors(d.path) : ['/', ...ancestors(d.path)]) {
        const set = need.get(p) ?? new Set<string>();
        for (const c of ctrls) set.add(c);
        need.set(p, set);
      }
    }
    for (const p of [...need.keys()].sort(byDepth)) {
      // systemd enables the controllers its units' properties need, down the slice tree; below a
      // delegated unit that is the delegatee's job (and isolate's, for the cgroups it is given).
      if (this.view.unitFor(p) && !this.view.delegated(p)) continue;
      const current = this.view.value(p, 'cgroup.subtree_control');
      const have = new Set((current ?? '').split(/\s+/).filter(Boolean));
      const want = [...need.get(p)!].filter((c) => !have.has(c));
      if (want.length === 0) continue;
      this.push(
        { path: p },
        'cgroup.subtree_control',
        current,
        [...new Set([...have, ...want])].sort().join(' '),
      );
    }
  }

  // 2. Cgroups isolate creates.
  created(desired: Desired[]): void {
    for (const d of desired.filter((x) => x.create).sort((a, b) => byDepth(a.path, b.path))) {
      this.push(d, 'mkdir', null, 'present');
    }
  }

  // 3. Donors first: every cgroup that loses CPUs shrinks to what it keeps, so no CPU is ever in
  // two hands (a partition sibling with overlapping cpus is invalidated by the kernel). A cgroup
  // that keeps none of its CPUs is written once, in step 4, since it cannot pass through empty.
  /** Returns each cgroup's cpuset.cpus once the donors have shrunk. */
  donors(ordered: Desired[]): Map<string, string | null> {
    const current = new Map<string, string | null>();
    for (const d of ordered) {
      const raw = this.view.value(d.path, 'cpuset.cpus');
      current.set(d.path, raw);
      const old = parse(raw);
      if (old === null) continue;
      // An empty cpuset.cpus inherits the parent's: for our cgroups, every online CPU.
      const effective = old.isEmpty ? this.topology.online : old;
      if (effective.isSubsetOf(d.cpus)) continue;
      const keep = effective.intersect(d.cpus);
      if (keep.isEmpty) continue;
      this.push(d, 'cpuset.cpus', raw, keep.toString());
      current.set(d.path, keep.toString());
    }
    return current;
  }

  // 4. Memory nodes, then every cgroup's final CPUs (receivers grow only now).
  memoryNodes(ordered: Desired[]): void {
    for (const d of ordered) {
      if (!d.mems) continue;
      const raw = this.view.value(d.path, 'cpuset.mems');
      if (!settled(raw, d.mems)) this.push(d, 'cpuset.mems', raw, d.mems.toString());
    }
  }

  finalCpus(ordered: Desired[], current: Map<string, string | null>): void {
    for (const d of ordered) {
      const now = current.get(d.path) ?? null;
      if (!settled(now, d.cpus)) this.push(d, 'cpuset.cpus', now, d.cpus.toString());
    }
  }

  // 5. Partition roots, once every sibling has let go of the CPUs.
  partitions(ordered: Desired[]): void {
    for (const d of ordered.filter((x) => x.partition)) {
      const raw = this.view.value(d.path, 'cpuset.cpus.partition');
      if (raw === 'root') continue;
      this.push(d, 'cpuset.cpus.partition', raw, 'root');
    }
  }

  // 6. Memory: protections for the exclusive workloads before limits on the batch ones.
  memory(ordered: Desired[]): void {
    for (const d of ordered) {
      for (const key of ['min', 'low', 'high', 'max'] as const) {
        const want = d.memory[key];
        if (want === undefined) continue;
        const raw = this.view.value(d.path, `memory.${key}`);
        if (raw !== null && sameMemory(raw, want)) continue;
        this.push(d, `memory.${key}`, raw, String(want));
      }
    }
  }

  // 7. CPU weight for batch workloads (weights only compare siblings; idle = SCHED_IDLE).
  cpuWeight(ordered: Desired[]): void {
    for (const d of ordered) {
      if (d.cpuIdle !== undefined) {
        const raw = this.view.value(d.path, 'cpu.idle');
        const want = d.cpuIdle ? '1' : '0';
        if (raw !== want) this.push(d, 'cpu.idle', raw, want);
      }
      if (d.cpuWeight !== undefined) {
        const raw = this.view.value(d.path, 'cpu.weight');
        if (raw !== String(d.cpuWeight)) this.push(d, 'cpu.weight', raw, String(d.cpuWeight));
      }
    }
  }

  // 7b. Per-device io: the exclusive workloads' protection before the batch workloads' limits.
  io(ordered: Desired[]): void {
    for (const d of ordered) {
      for (const w of d.io ?? []) {
        const unit = this.view.unitFor(d.path);
        if (unit) {
          const props = this.view.systemd!.units[unit]!;
          const planned = ioUnitChanges(unit, w, props);
          const again =
            planned.length === 0
              ? ioUnitNotInForce(unit, w, props, d.path, this.view.group(d.path)?.values[w.file])
              : [];
          for (const c of [...planned, ...again]) this.changes.push({ ...c, workload: d.workload });
          continue;
        }
        if (d.absent) continue;
        const text = this.view.value(d.path, w.file);
        const from = text === null ? null : ioLineOf(w.file, text, w.dev);
        if (from !== null && ioSatisfies(w.file, from, w.value)) continue;
        this.push(d, w.file, from, w.value);
      }
    }
  }

  // 8. Move matched processes last, into a cgroup that is already fenced and sized.
  processMoves(ordered: Desired[]): void {
    for (const d of ordered) {
      for (const pid of [...d.pids].sort((a, b) => a - b)) {
        const from = this.view.observed.processCgroups?.[pid] ?? null;
        if (from === d.path) continue;
        this.push(d, 'cgroup.procs', from, String(pid));
      }
    }
  }

  // systemd's unit changes first, keeping their own order: each set-property makes systemd realize the
  // slice tree (enabling cpuset from the root down), so the cgroupfs writes after it land in a tree
  // systemd has finished reshaping. Partitions stay last: they are cgroupfs writes after every change.
  // The anchors after the Slice= drop-ins (which take the unit out of its slice's members) and before
  // the unit's own properties, which systemd can write only once the anchor keeps cpuset enabled.
  inOrder(sliceMoves: Change[], anchors: Change[]): Change[] {
    return [
      ...sliceMoves,
      ...anchors,
      ...this.changes.filter((c) => c.backend === 'systemd'),
      ...this.changes.filter((c) => c.backend !== 'systemd'),
    ];
  }
}

function parse(s: string | null): CpuSet | null {
  if (s === null) return null;
  try {
    return CpuSet.parse(s);
  } catch {
    return null;
  }
}

function settled(s: string | null, want: CpuSet): boolean {
  return s !== null && s !== '' && (parse(s)?.equals(want) ?? false);
}

function byDepth(a: string, b: string): number {
  return depth(a) - depth(b) || byText(a, b);
}

function depth(path: string): number {
  return path === '/' ? 0 : path.split('/').length - 1;
}

function sameMemory(raw: string, want: number | 'max'): boolean {
  if (want === 'max') return raw === 'max' || raw === 'infinity';
  return /^\d+$/.test(raw) && Number(raw) === want;
}
