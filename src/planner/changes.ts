// Turns an allocation into the smallest ordered list of cgroup writes, diffed against what the
// kernel reports. The order follows the kernel's rules (docs/cgroup-v2 §2.4, §9): controllers
// top-down, donors shrink before receivers grow, partitions last, process moves after the target
// is fully configured.
import type { ObservedGroup, ObservedState } from '../model/observed.js';
import type { Policy } from '../model/policy.js';
import { CpuSet, sameCpuList } from '../model/cpuset.js';
import type { Topology } from '../model/topology.js';
import { ancestors, parentOf, type SlicePlacement, slicePlacement } from './targets.js';
import type { Allocation, CgroupSetting, Change } from '../model/plan.js';
import {
  anchorSliceFor,
  cgroupCpuList,
  fromSystemdValue,
  SYSTEMD_PROPERTY,
  sliceDropInPath,
  slicePath,
  type SystemdManagedFile,
  toSystemdValue,
  unitOfCgroup,
} from '../model/systemd.js';
import { byText } from '../model/order.js';
import { ioLineOf, ioSatisfies } from '../model/io.js';
import { ioSiblingWarnings, ioUnitChanges, ioUnitNotInForce, ioWantsOf, type IoWant } from './io.js';

type Role = 'exclusive' | 'batch' | 'fence';

interface Desired {
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

const ROLE_RANK: Record<Role, number> = { exclusive: 0, batch: 1, fence: 2 };

export function cgroupChanges(
  topology: Topology,
  policy: Policy,
  allocation: Allocation,
  observed: ObservedState,
  warnings: string[],
): Change[] {
  const fs = observed.cgroup;
  const known = fs.layout === 'unified';
  const group = (path: string): ObservedGroup | undefined => fs.groups[path];
  // Where systemd runs the host, the cgroups of its units are changed through their unit
  // properties (systemd rewrites their files on every reload); diff against what systemd holds.
  const sd = observed.systemd;
  const unitFor = (path: string): string | null => {
    const unit = path === '/' ? null : unitOfCgroup(path);
    return unit && sd?.units[unit] ? unit : null;
  };
  // Unit properties systemd holds but could not write into the unit's running cgroup: not in force.
  const unrealised = new Map<string, string>();
  const value = (path: string, file: string): string | null => {
    if (!known) return null;
    const unit = unitFor(path);
    if (unit && file in SYSTEMD_PROPERTY) {
      const f = file as SystemdManagedFile;
      const held = fromSystemdValue(f, sd!.units[unit]![SYSTEMD_PROPERTY[f]] ?? '');
      const kernel = group(path);
      // No cpuset.cpus: cpuset is not enabled there (every observed group reads it). A sibling's
      // cpuset.mems is not read at all (observe.ts SIBLING_FILES): absent there is unknown, not wrong.
      if ((f === 'cpuset.cpus' || f === 'cpuset.mems') && held !== '' && kernel?.exists) {
        const enabled = kernel.values['cpuset.cpus'] !== undefined;
        const now = kernel.values[f];
        if (!enabled || (now !== undefined && !sameCpuList(now, held))) {
          unrealised.set(
            `${path} ${f}`,
            `systemd holds ${SYSTEMD_PROPERTY[f]}=${held} but ${path}/${f} ${now === undefined ? `does not exist (no cpuset in ${parentOf(path)})` : `is "${now}"`}: not in force; set again`,
          );
          return null;
        }
      }
      return held;
    }
    if (path === '/' && file === 'cgroup.subtree_control') return fs.rootSubtreeControl.join(' ');
    return group(path)?.values[file] ?? null;
  };
  const exists = (path: string) => !known || group(path)?.exists === true;

  const desired: Desired[] = [];
  const exclusiveCpus = CpuSet.of(
    allocation.workloads.filter((a) => a.class === 'exclusive').flatMap((a) => a.cpus.toArray()),
  );
  // strict on a systemd host: exclusive services move to a top-level slice of their own (a Slice=
  // drop-in isolate writes), which is then fenced and made the partition root (targets.ts).
  const sliceMoves: Change[] = [];
  const anchors: Change[] = [];
  const anchorNames = new Set<string>();
  const movingLater = new Set<string>();
  for (const a of allocation.workloads) {
    const spec = policy.workloads.find((w) => w.name === a.name)!;
    const placed = known ? slicePlacement(spec, observed, policy.strict) : null;
    if (!placed) continue;
    const home = slicePath(placed.slice);
    if (placed.move) {
      sliceMoves.push({
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
      movingLater.add(a.name);
      const anchor = anchorSliceFor(parentOf(placed.pending));
      if (anchor && !anchorNames.has(anchor)) {
        anchorNames.add(anchor);
        anchors.push(
          ...anchorChanges(anchor, topology.online.minus(exclusiveCpus), sd?.units[anchor], placed),
        );
      }
      warnings.push(
        `${a.name}: ${placed.unit} runs in ${placed.pending}; it moves to ${placed.slice} at its next restart (systemctl restart ${placed.unit}). Until then it is fenced as a unit, ${parentOf(placed.pending)} is not fenced and ${home} is no partition root`,
      );
    }
    // The slice gets the workload's settings before the unit runs in it (so it starts fenced), and a
    // unit that carries its own AllowedCPUs=/AllowedMemoryNodes= keeps them equal to the slice's.
    const extra: { path: string; memory: Desired['memory'] }[] = [];
    if (placed.pending !== null && unitFor(home)) extra.push({ path: home, memory: a.memory });
    const props = sd?.units[placed.unit];
    if (placed.pending === null && (props?.AllowedCPUs || props?.AllowedMemoryNodes)) {
      extra.push({ path: observed.cgroup.units[placed.unit] ?? `${home}/${placed.unit}`, memory: {} });
    }
    for (const x of extra) {
      desired.push({
        path: x.path,
        role: 'exclusive',
        workload: a.name,
        cpus: a.cpus,
        mems: CpuSet.of(a.mems),
        memory: x.memory,
        partition: false,
        pids: [],
        create: false,
        absent: !exists(x.path),
      });
    }
  }
  for (const a of allocation.workloads) {
    const spec = policy.workloads.find((w) => w.name === a.name)!;
    // A unit that is not running has no cgroup; systemd still takes its properties, so it starts fenced.
    const viaUnit = unitFor(a.target) !== null;
    if (known && !exists(a.target) && spec.match.kind === 'systemdUnit' && !viaUnit) {
      warnings.push(
        `${a.name}: ${spec.match.unit} has no cgroup (not running); nothing to change until it starts`,
      );
      continue;
    }
    const topLevel = parentOf(a.target) === '/';
    const partition = a.class === 'exclusive' && fs.features.partition && topLevel;
    if (a.class === 'exclusive' && known && !fs.features.partition) {
      warnings.push(
        `${a.name}: this kernel${fs.kernel ? ` (${fs.kernel})` : ''} has no cpuset partitions (cpuset.cpus.partition, Linux 5.0+), so only cpuset.cpus fences ${a.target}: no other cgroup is kept off its CPUs by the kernel, only by isolate's own writes`,
      );
    }
    if (a.class === 'exclusive' && fs.features.partition && !topLevel && !movingLater.has(a.name)) {
      warnings.push(
        `${a.name}: ${a.target} is not a top-level cgroup, so it cannot be a cpuset partition root; only cpuset.cpus fences it (${policy.strict ? 'strict: true moves only systemd units; match it by systemdUnit, or run it in a top-level slice of its own, e.g. kafka.slice' : 'put it in its own slice, e.g. kafka.slice, and use strict: true'})`,
      );
    }
    desired.push({
      path: a.target,
      role: a.class,
      workload: a.name,
      cpus: a.cpus,
      mems: CpuSet.of(a.mems),
      memory: a.memory,
      cpuWeight: spec.cpu?.weight,
      cpuIdle: spec.cpu?.idle,
      partition,
      pids: spec.match.kind === 'process' ? (observed.processes[a.name] ?? []) : [],
      create: known && !exists(a.target) && !viaUnit,
      absent: known && !exists(a.target) && viaUnit,
      io: ioWantsOf(spec, observed),
    });
  }
  const withIo = desired.filter((d) => d.io?.length && d.workload);
  warnings.push(
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

  if (policy.strict) {
    const targets = new Set(desired.map((d) => d.path));
    const exclusiveTargets = desired.filter((d) => d.role === 'exclusive').map((d) => d.path);
    if (!known)
      warnings.push('strict: the top-level cgroups cannot be read here, so the fences are not listed');
    // Under systemd, the standard top-level units are fenced even before they run (user.slice starts
    // at the first login), so they start fenced.
    const names = new Set(fs.topLevel);
    for (const u of STANDARD_TOP_LEVEL) if (sd?.units[u]) names.add(u);
    for (const name of [...names].sort()) {
      const path = `/${name}`;
      if (targets.has(path)) continue;
      if (exclusiveTargets.some((t) => t.startsWith(`${path}/`))) {
        warnings.push(
          `strict: ${path} holds an exclusive workload, so its other children are not fenced; run the workload in its own top-level slice`,
        );
        continue;
      }
      desired.push({
        path,
        role: 'fence',
        cpus: topology.online.minus(exclusiveCpus),
        memory: {},
        partition: false,
        pids: [],
        create: false,
        absent: known && !exists(path),
      });
    }
  }

  // A unit with Delegate=yes hands its subtree (and its own cgroup.subtree_control) to its process,
  // e.g. YARN's NodeManager: systemd never rewrites anything there, so cgroupfs writes below it last.
  const delegated = (path: string) => {
    const unit = unitFor(path);
    return unit !== null && sd!.units[unit]!.Delegate === 'yes';
  };
  const systemdOwned = (path: string) => {
    if (!known) return false;
    if (ancestors(path).some(delegated)) return false;
    return [...ancestors(path), path].some((p) => group(p)?.ownedBySystemd);
  };
  const note = (path: string, setting: CgroupSetting) => {
    if (unitFor(path) && setting === 'cpuset.cpus.partition') {
      return {
        note: 'systemd has no property for cpuset partitions: isolate writes this file and checks it every interval',
      };
    }
    return systemdOwned(path) && !unitFor(path)
      ? { note: 'systemd owns this cgroup: a systemctl daemon-reload can undo this write' }
      : {};
  };
  if (desired.some((d) => systemdOwned(d.path) && !unitFor(d.path))) {
    warnings.push(
      sd
        ? 'some targets lie inside systemd units but are not units themselves; a systemctl daemon-reload may undo these cgroupfs writes (give them their own slice, or Delegate=yes)'
        : 'some targets belong to systemd, which cannot be reached here; a systemctl daemon-reload may undo these cgroupfs writes',
    );
  }

  const changes: Change[] = [];
  const push = (
    d: Desired | { path: string; workload?: string },
    setting: CgroupSetting,
    from: string | null,
    to: string,
  ) => {
    const unit = unitFor(d.path);
    if (unit && setting in SYSTEMD_PROPERTY) {
      const f = setting as SystemdManagedFile;
      const stale = unrealised.get(`${d.path} ${setting}`);
      changes.push({
        backend: 'systemd',
        target: unit,
        setting: SYSTEMD_PROPERTY[f],
        from: sd!.units[unit]![SYSTEMD_PROPERTY[f]] ?? null,
        to: toSystemdValue(f, to),
        workload: d.workload || undefined,
        ...(stale ? { note: stale } : {}),
      });
      return;
    }
    if ('absent' in d && d.absent) return;
    changes.push({
      backend: 'cgroupfs',
      target: d.path,
      setting,
      from,
      to,
      workload: d.workload || undefined,
      ...note(d.path, setting),
    });
  };

  // 1. Controllers, top-down: a cgroup's files exist only when its parent enables the controller.
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
    const inUnit = [...ancestors(d.path), d.path].some((p) => unitFor(p) !== null);
    for (const p of inUnit ? ancestors(d.path) : ['/', ...ancestors(d.path)]) {
      const set = need.get(p) ?? new Set<string>();
      for (const c of ctrls) set.add(c);
      need.set(p, set);
    }
  }
  const byDepth = (a: string, b: string) => depth(a) - depth(b) || byText(a, b);
  for (const p of [...need.keys()].sort(byDepth)) {
    // systemd enables the controllers its units' properties need, down the slice tree; below a
    // delegated unit that is the delegatee's job (and isolate's, for the cgroups it is given).
    if (unitFor(p) && !delegated(p)) continue;
    const current = value(p, 'cgroup.subtree_control');
    const have = new Set((current ?? '').split(/\s+/).filter(Boolean));
    const want = [...need.get(p)!].filter((c) => !have.has(c));
    if (want.length === 0) continue;
    push({ path: p }, 'cgroup.subtree_control', current, [...new Set([...have, ...want])].sort().join(' '));
  }

  // 2. Cgroups isolate creates.
  for (const d of desired.filter((x) => x.create).sort((a, b) => byDepth(a.path, b.path))) {
    push(d, 'mkdir', null, 'present');
  }

  const ordered = [...desired].sort(
    (a, b) => ROLE_RANK[a.role] - ROLE_RANK[b.role] || byText(a.path, b.path),
  );
  const parse = (s: string | null): CpuSet | null => {
    if (s === null) return null;
    try {
      return CpuSet.parse(s);
    } catch {
      return null;
    }
  };

  // 3. Donors first: every cgroup that loses CPUs shrinks to what it keeps, so no CPU is ever in
  // two hands (a partition sibling with overlapping cpus is invalidated by the kernel). A cgroup
  // that keeps none of its CPUs is written once, in step 4, since it cannot pass through empty.
  const current = new Map<string, string | null>();
  for (const d of ordered) {
    const raw = value(d.path, 'cpuset.cpus');
    current.set(d.path, raw);
    const old = parse(raw);
    if (old === null) continue;
    // An empty cpuset.cpus inherits the parent's: for our cgroups, every online CPU.
    const effective = old.isEmpty ? topology.online : old;
    if (effective.isSubsetOf(d.cpus)) continue;
    const keep = effective.intersect(d.cpus);
    if (keep.isEmpty) continue;
    push(d, 'cpuset.cpus', raw, keep.toString());
    current.set(d.path, keep.toString());
  }

  // 4. Memory nodes, then every cgroup's final CPUs (receivers grow only now).
  const settled = (s: string | null, want: CpuSet) =>
    s !== null && s !== '' && (parse(s)?.equals(want) ?? false);
  for (const d of ordered) {
    if (!d.mems) continue;
    const raw = value(d.path, 'cpuset.mems');
    if (!settled(raw, d.mems)) push(d, 'cpuset.mems', raw, d.mems.toString());
  }
  for (const d of ordered) {
    const now = current.get(d.path) ?? null;
    if (!settled(now, d.cpus)) push(d, 'cpuset.cpus', now, d.cpus.toString());
  }

  // 5. Partition roots, once every sibling has let go of the CPUs.
  for (const d of ordered.filter((x) => x.partition)) {
    const raw = value(d.path, 'cpuset.cpus.partition');
    if (raw === 'root') continue;
    push(d, 'cpuset.cpus.partition', raw, 'root');
  }

  // 6. Memory: protections for the exclusive workloads before limits on the batch ones.
  for (const d of ordered) {
    for (const key of ['min', 'low', 'high', 'max'] as const) {
      const want = d.memory[key];
      if (want === undefined) continue;
      const raw = value(d.path, `memory.${key}`);
      if (raw !== null && sameMemory(raw, want)) continue;
      push(d, `memory.${key}`, raw, String(want));
    }
  }

  // 7. CPU weight for batch workloads (weights only compare siblings; idle = SCHED_IDLE).
  for (const d of ordered) {
    if (d.cpuIdle !== undefined) {
      const raw = value(d.path, 'cpu.idle');
      const want = d.cpuIdle ? '1' : '0';
      if (raw !== want) push(d, 'cpu.idle', raw, want);
    }
    if (d.cpuWeight !== undefined) {
      const raw = value(d.path, 'cpu.weight');
      if (raw !== String(d.cpuWeight)) push(d, 'cpu.weight', raw, String(d.cpuWeight));
    }
  }

  // 7b. Per-device io: the exclusive workloads' protection before the batch workloads' limits.
  for (const d of ordered) {
    for (const w of d.io ?? []) {
      const unit = unitFor(d.path);
      if (unit) {
        const props = sd!.units[unit]!;
        const planned = ioUnitChanges(unit, w, props);
        const again =
          planned.length === 0 ? ioUnitNotInForce(unit, w, props, d.path, group(d.path)?.values[w.file]) : [];
        for (const c of [...planned, ...again]) changes.push({ ...c, workload: d.workload });
        continue;
      }
      if (d.absent) continue;
      const text = value(d.path, w.file);
      const from = text === null ? null : ioLineOf(w.file, text, w.dev);
      if (from !== null && ioSatisfies(w.file, from, w.value)) continue;
      push(d, w.file, from, w.value);
    }
  }

  // 8. Move matched processes last, into a cgroup that is already fenced and sized.
  for (const d of ordered) {
    for (const pid of [...d.pids].sort((a, b) => a - b)) {
      const from = observed.processCgroups?.[pid] ?? null;
      if (from === d.path) continue;
      push(d, 'cgroup.procs', from, String(pid));
    }
  }
  // systemd's unit changes first, keeping their own order: each set-property makes systemd realize the
  // slice tree (enabling cpuset from the root down), so the cgroupfs writes after it land in a tree
  // systemd has finished reshaping. Partitions stay last: they are cgroupfs writes after every change.
  // The anchors after the Slice= drop-ins (which take the unit out of its slice's members) and before
  // the unit's own properties, which systemd can write only once the anchor keeps cpuset enabled.
  return [
    ...sliceMoves,
    ...anchors,
    ...changes.filter((c) => c.backend === 'systemd'),
    ...changes.filter((c) => c.backend !== 'systemd'),
  ];
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

function depth(path: string): number {
  return path === '/' ? 0 : path.split('/').length - 1;
}

function sameMemory(raw: string, want: number | 'max'): boolean {
  if (want === 'max') return raw === 'max' || raw === 'infinity';
  return /^\d+$/.test(raw) && Number(raw) === want;
}
