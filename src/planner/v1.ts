// Turns an allocation into the ordered writes of a cgroup v1 host (legacy, or hybrid with cpuset on a
// v1 hierarchy). isolate owns the v1 cpuset hierarchy (systemd does not manage it there): one cpuset
// per workload, `/isolate-<name>`. The order follows v1's rules: a new cpuset gets cpus and mems
// before any task; a child's CPUs are a subset of its parent's (shrink bottom-up); a sibling may not
// overlap a `cpu_exclusive` cpuset (donors shrink before the exclusive one grows, the flag comes last);
// tasks move last. Fields v1 cannot express are refused, naming the layout and the kernel parameter.
import { CpuSet } from '../model/cpuset.js';
import { formatPath } from '../model/field.js';
import { type ObservedState, type ObservedV1, UNIFIED_PARAM } from '../model/observed.js';
import type { Allocation, CgroupSetting, Change } from '../model/plan.js';
import { IO_LIMIT_KEYS, type IoLimitKey, type Policy, type WorkloadSpec } from '../model/policy.js';
import { type BlkioFile, ioLineOf, ioSatisfies } from '../model/io.js';
import { protectedDisks } from './io.js';
import { defaultUnitPath } from '../model/systemd.js';
import type { Topology } from '../model/topology.js';
import { policyError } from './allocate.js';
import { byText } from '../model/order.js';

export const HOUSEKEEPING_CPUSET = '/isolate-housekeeping';
/** v1's "no limit" reads as PAGE_COUNTER_MAX pages; anything this large is unlimited. */
const V1_UNLIMITED = 2 ** 62;

export function v1CpusetPath(name: string): string {
  return `/isolate-${name}`;
}

/** cpu.weight (1-10000, default 100) → cpu.shares (2-262144, default 1024), as systemd maps CPUWeight on v1. */
export function weightToShares(weight: number): number {
  return Math.min(262144, Math.max(2, Math.round((weight * 1024) / 100)));
}

function layoutName(v1: ObservedV1): string {
  return v1.layout === 'hybrid' ? 'hybrid cgroup layout (cpuset on v1)' : 'legacy cgroup v1 layout';
}

/** A policy field this host's layout cannot express: one line with the layout, the feature and the fix. */
function refuse(policy: Policy, w: WorkloadSpec, field: string[], v1: ObservedV1, why: string) {
  return policyError(
    policy,
    [...w.path, ...field],
    `${why} on this ${layoutName(v1)}; remove ${formatPath([...w.path, ...field])} from the policy or boot with ${UNIFIED_PARAM}`,
  );
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
  const cpusetH = v1.hierarchies.cpuset!;
  const changes: Change[] = [];
  const cs = (p: string) => v1.cpusets[p];
  const push = (
    hierarchy: string,
    target: string,
    setting: CgroupSetting,
    from: string | null,
    to: string,
    workload?: string,
    note?: string,
  ) => {
    changes.push({
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

  // Refusals first: nothing is planned for a policy this layout cannot honour.
  for (const a of allocation.workloads) {
    const w = policy.workloads.find((x) => x.name === a.name)!;
    for (const key of ['min', 'low'] as const) {
      if (w.memory[key] !== undefined) {
        throw refuse(
          policy,
          w,
          ['memory', key],
          v1,
          `memory.${key} protection does not exist in cgroup v1 (no memory.${key} file)`,
        );
      }
    }
    if (w.cpu?.idle !== undefined) {
      throw refuse(
        policy,
        w,
        ['cpu', 'idle'],
        v1,
        'cpu.idle (cgroup SCHED_IDLE) does not exist in cgroup v1',
      );
    }
    const wantsMemory = w.memory.high !== undefined || w.memory.max !== undefined;
    if (w.match.kind === 'process' && (wantsMemory || w.cpu?.weight !== undefined)) {
      throw refuse(
        policy,
        w,
        wantsMemory ? ['memory'] : ['cpu', 'weight'],
        v1,
        "a process-matched workload gets only a cpuset on cgroup v1 (its memory and cpu cgroups are not isolate's); match it by cgroup or systemdUnit for memory and cpu settings",
      );
    }
    if (wantsMemory && !v1.hierarchies.memory) {
      throw refuse(
        policy,
        w,
        ['memory'],
        v1,
        'no cgroup v1 memory hierarchy is mounted under /sys/fs/cgroup',
      );
    }
    if (w.cpu?.weight !== undefined && !v1.hierarchies.cpu) {
      throw refuse(
        policy,
        w,
        ['cpu', 'weight'],
        v1,
        'no cgroup v1 cpu hierarchy is mounted under /sys/fs/cgroup',
      );
    }
    if (w.io && typeof w.io.latency === 'object') {
      throw refuse(
        policy,
        w,
        ['io', 'latency'],
        v1,
        'io.latency does not exist in cgroup v1 (blkio has BFQ weights and throttles only)',
      );
    }
    if (w.match.kind === 'cgroup' && !v1.hierarchies[w.match.hierarchy ?? 'cpu']) {
      throw policyError(
        policy,
        [...w.path, 'match', 'hierarchy'],
        `no cgroup v1 hierarchy with the ${w.match.hierarchy ?? 'cpu'} controller is mounted under /sys/fs/cgroup on this ${layoutName(v1)}; name the controller whose hierarchy ${w.match.path} lies in (match.hierarchy), or boot with ${UNIFIED_PARAM}`,
      );
    }
  }

  const exclusiveCpus = CpuSet.of(
    allocation.workloads.filter((a) => a.class === 'exclusive').flatMap((a) => a.cpus.toArray()),
  );
  const housekeepingCpus = topology.online.minus(exclusiveCpus);
  const rootMems = parse(cs('/')?.values['cpuset.mems']) ?? null;

  const desired: DesiredSet[] = [];
  for (const a of allocation.workloads) {
    const p = v1CpusetPath(a.name);
    desired.push({
      path: p,
      role: a.class,
      workload: a.name,
      cpus: a.cpus,
      mems: CpuSet.of(a.mems),
      create: !cs(p)?.exists,
      pids: v1.members[a.name] ?? [],
    });
  }
  const ours = new Set(desired.map((d) => d.path.slice(1)));
  warnings.push(...unmatchedWarnings(allocation, v1, policy.strict));
  if (policy.strict) {
    desired.push({
      path: HOUSEKEEPING_CPUSET,
      role: 'housekeeping',
      cpus: housekeepingCpus,
      mems: rootMems || undefined,
      create: !cs(HOUSEKEEPING_CPUSET)?.exists,
      pids: v1.rootProcs.filter((pid) => !Object.values(v1.members).some((m) => m.includes(pid))),
    });
    ours.add(HOUSEKEEPING_CPUSET.slice(1));
    // Every other cpuset cgroup, bottom-up, loses the exclusive CPUs (v1: children first).
    const others = Object.keys(v1.cpusets).filter((p) => p !== '/' && !ours.has(p.split('/')[1]!));
    for (const p of others.sort((a, b) => depth(b) - depth(a) || byText(a, b))) {
      const cur = parse(cs(p)?.values['cpuset.cpus']);
      if (!cur || cur.isEmpty || cur.intersect(exclusiveCpus).isEmpty) continue;
      const keep = cur.minus(exclusiveCpus);
      desired.push({
        path: p,
        role: 'fence',
        cpus: keep.isEmpty ? housekeepingCpus : keep,
        create: false,
        pids: [],
      });
    }
  }

  // 1. The cpusets isolate creates (v1: empty cpus and mems until written).
  for (const d of desired.filter((x) => x.create)) {
    push(
      cpusetH,
      d.path,
      'mkdir',
      null,
      'present',
      d.workload,
      'isolate owns the cgroup v1 cpuset hierarchy (systemd does not manage it there)',
    );
  }

  const fences = desired.filter((d) => d.role === 'fence');
  const ordered = [
    ...fences,
    ...desired
      .filter((d) => d.role !== 'fence')
      .sort((a, b) => ROLE_RANK[a.role] - ROLE_RANK[b.role] || byText(a.path, b.path)),
  ];
  // 2. Donors shrink to what they keep (fences bottom-up first), so no CPU is ever in two hands when
  // the exclusive cpuset grows; a cpuset that keeps none is written once, in step 4.
  const current = new Map<string, string | null>();
  for (const d of ordered) {
    const raw = cs(d.path)?.values['cpuset.cpus'] ?? null;
    current.set(d.path, raw);
    const old = parse(raw);
    if (old === null || old.isEmpty || old.isSubsetOf(d.cpus)) continue;
    const keep = old.intersect(d.cpus);
    if (keep.isEmpty) continue;
    push(cpusetH, d.path, 'cpuset.cpus', raw, keep.toString(), d.workload);
    current.set(d.path, keep.toString());
  }
  // 3. v1 moves a task's pages to its cpuset's memory nodes only when cpuset.memory_migrate is 1
  // (v2 always does): set on each exclusive cpuset before its nodes are written and its tasks moved
  // in, or Kafka's memory (its page cache and heap) stays on the node it left.
  for (const d of ordered) {
    if (d.role !== 'exclusive') continue;
    const raw = cs(d.path)?.values['cpuset.memory_migrate'] ?? null;
    if (raw !== '1') {
      push(
        cpusetH,
        d.path,
        'cpuset.memory_migrate',
        raw,
        '1',
        d.workload,
        "v1 moves a task's memory to the cpuset's nodes only with memory_migrate set (v2 always does)",
      );
    }
  }
  // 4. Memory nodes (a v1 cpuset takes no task without them).
  const same = (raw: string | null | undefined, want: CpuSet) =>
    parse(raw)?.equals(want) === true && raw !== '';
  for (const d of ordered) {
    if (!d.mems) continue;
    const raw = cs(d.path)?.values['cpuset.mems'] ?? null;
    if (!same(raw, d.mems)) push(cpusetH, d.path, 'cpuset.mems', raw, d.mems.toString(), d.workload);
  }
  // 5. Final CPUs: the exclusive cpusets (their donors have let go), then the rest grow.
  for (const d of ordered.filter((x) => x.role !== 'fence')) {
    const now = current.get(d.path) ?? null;
    if (!same(now, d.cpus)) push(cpusetH, d.path, 'cpuset.cpus', now, d.cpus.toString(), d.workload);
  }
  // 6. cpu_exclusive: v1's counterpart of a partition root — no sibling can take these CPUs while it
  // is set. mem_exclusive likewise for memory nodes, where no sibling shares them.
  const siblingsOf = (p: string) => [
    ...desired
      .filter((d) => d.path !== p && depth(d.path) === 1)
      .map((d) => ({ path: d.path, cpus: d.cpus, mems: d.mems ?? null })),
    ...v1.topLevel
      .map((t) => `/${t}`)
      .filter((t) => t !== p && !desired.some((d) => d.path === t))
      .map((t) => ({
        path: t,
        cpus: parse(cs(t)?.values['cpuset.cpus']) ?? CpuSet.EMPTY,
        mems: parse(cs(t)?.values['cpuset.mems']),
      })),
  ];
  for (const d of ordered.filter((x) => x.role === 'exclusive')) {
    const sibs = siblingsOf(d.path);
    const clash = sibs.find((s) => !s.cpus.intersect(d.cpus).isEmpty);
    if (clash) {
      warnings.push(
        `${d.workload}: cpuset:${clash.path} keeps CPUs ${clash.cpus.intersect(d.cpus)} of ${d.path}, so it cannot be cpu_exclusive (set strict: true to fence it)`,
      );
    } else if (cs(d.path)?.values['cpuset.cpu_exclusive'] !== '1') {
      push(
        cpusetH,
        d.path,
        'cpuset.cpu_exclusive',
        cs(d.path)?.values['cpuset.cpu_exclusive'] ?? null,
        '1',
        d.workload,
        'cgroup v1 has no partitions: cpu_exclusive keeps every sibling cpuset off these CPUs',
      );
    }
    if (d.mems && sibs.every((s) => s.mems === null || s.mems.intersect(d.mems!).isEmpty)) {
      if (cs(d.path)?.values['cpuset.mem_exclusive'] !== '1') {
        push(
          cpusetH,
          d.path,
          'cpuset.mem_exclusive',
          cs(d.path)?.values['cpuset.mem_exclusive'] ?? null,
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

  // 7. Memory and cpu settings in their own hierarchies.
  for (const a of allocation.workloads) {
    const w = policy.workloads.find((x) => x.name === a.name)!;
    memoryAndCpu(w, a.memory, v1, observed, push, changes, warnings);
    blkioChanges(w, v1, observed, push, warnings);
  }

  // 8. Processes last, into cpusets that are fully configured; then threads that escaped them.
  for (const d of ordered) {
    for (const pid of [...d.pids].sort((x, y) => x - y)) {
      const from = v1.cpusetOf[pid] ?? null;
      if (from === d.path) continue;
      push(cpusetH, d.path, 'cgroup.procs', from, String(pid), d.workload);
    }
  }
  for (const d of ordered) {
    if (!d.workload) continue;
    const stray = v1.strayThreads[d.workload] ?? {};
    for (const tid of Object.keys(stray)
      .map(Number)
      .sort((x, y) => x - y)) {
      push(cpusetH, d.path, 'tasks', stray[tid]!, String(tid), d.workload);
    }
  }
  // systemd's unit changes first, as on v2: each set-property re-realizes the unit's cgroups.
  return [
    ...changes.filter((c) => c.backend === 'systemd'),
    ...changes.filter((c) => c.backend !== 'systemd'),
  ];
}

type Push = (
  hierarchy: string,
  target: string,
  setting: CgroupSetting,
  from: string | null,
  to: string,
  workload?: string,
  note?: string,
) => void;

/** blkio throttle file of each io.max key. */
const THROTTLE: Record<IoLimitKey, BlkioFile> = {
  rbps: 'blkio.throttle.read_bps_device',
  wbps: 'blkio.throttle.write_bps_device',
  riops: 'blkio.throttle.read_iops_device',
  wiops: 'blkio.throttle.write_iops_device',
};

/**
 * io on v1 (docs/disks.md): blkio offers BFQ weights (`blkio.bfq.weight_device`, BFQ disks only) and
 * throttles, per device of the exclusive workloads' disks. No io.latency (`latency: auto` is said, an
 * explicit target refused above), no iocost. Written in a cgroup-matched workload's blkio cgroup; a
 * unit's blkio cgroup is systemd's and a process-matched workload has none of isolate's: said, not written.
 */
export function blkioChanges(
  w: WorkloadSpec,
  v1: ObservedV1,
  observed: ObservedState,
  push: Push,
  warnings: string[],
): void {
  if (!w.io || !observed.disks) return;
  const { latency, weight, max } = w.io;
  if (w.class === 'exclusive' && latency === 'auto') {
    warnings.push(
      `io ${w.name}: no latency target on this cgroup v1 host (blkio has no io.latency); weights and the batch workloads' caps only (set io.latency: off to say so in the policy)`,
    );
  }
  const disks = (
    w.class === 'exclusive'
      ? (observed.disks.find((d) => d.workload === w.name)?.disks ?? [])
      : protectedDisks(observed)
  ).filter((d) => d.dev !== null);
  const caps = IO_LIMIT_KEYS.filter((k) => max[k] !== undefined);
  const weighted = weight === 'off' ? [] : disks.filter((d) => d.scheduler === 'bfq');
  if (weighted.length === 0 && caps.length === 0) return;
  const blkio = v1.hierarchies.blkio;
  if (w.match.kind !== 'cgroup' || !blkio) {
    warnings.push(
      `io ${w.name}: ${!blkio ? 'no cgroup v1 blkio hierarchy is mounted under /sys/fs/cgroup' : w.match.kind === 'systemdUnit' ? `${w.match.unit}'s blkio cgroup is systemd's on cgroup v1` : "a process-matched workload has no blkio cgroup of isolate's on cgroup v1"}, so its io settings are not written; match it by cgroup, or boot with ${UNIFIED_PARAM}`,
    );
    return;
  }
  const g = v1.groups[`${blkio}:${w.match.path}`];
  if (!g?.exists) {
    warnings.push(`${w.name}: blkio:${w.match.path} does not exist, so its io settings are not written`);
    return;
  }
  const one = (file: BlkioFile, dev: string, value: string) => {
    const text = g.values[file];
    const from = text === undefined ? null : ioLineOf(file, text, dev);
    if (from !== null && ioSatisfies(file, from, `${dev} ${value}`)) return;
    push(blkio, w.match.kind === 'cgroup' ? w.match.path : '', file, from, `${dev} ${value}`, w.name);
  };
  for (const d of weighted) one('blkio.bfq.weight_device', d.dev!, String(weight));
  for (const d of disks) for (const k of caps) one(THROTTLE[k], d.dev!, String(max[k]));
}

function sameBytes(raw: string | undefined, want: number | 'max'): boolean {
  if (raw === undefined || !/^-?\d+$/.test(raw)) return false;
  const n = Number(raw);
  if (want === 'max') return n < 0 || n >= V1_UNLIMITED;
  return n >= 0 && Math.floor(n / 4096) === Math.floor(want / 4096);
}

/**
 * Memory limits and cpu weight on v1: `max` → memory.limit_in_bytes (and memory.memsw.limit_in_bytes
 * with swap accounting, so swap is no way around it), `high` → memory.soft_limit_in_bytes (reclaimed
 * toward under pressure), `weight` → cpu.shares. A systemd unit's limit and weight go through systemd
 * (it manages the memory and cpu hierarchies on v1); it has no property for the soft limit.
 */
function memoryAndCpu(
  w: WorkloadSpec,
  memory: Partial<Record<'min' | 'low' | 'high' | 'max', number | 'max'>>,
  v1: ObservedV1,
  observed: ObservedState,
  push: Push,
  changes: Change[],
  warnings: string[],
): void {
  if (w.match.kind === 'process') return;
  const sd = observed.systemd;
  const unit = w.match.kind === 'systemdUnit' ? w.match.unit : null;
  const viaSystemd = unit !== null && sd?.units[unit] !== undefined;
  const cgPath = w.match.kind === 'cgroup' ? w.match.path : defaultUnitPath(w.match.unit);
  const memH = v1.hierarchies.memory;
  const cpuH = v1.hierarchies.cpu;
  const systemd = (setting: 'MemoryMax' | 'CPUWeight', to: string) => {
    const from = sd!.units[unit!]![setting] ?? null;
    if (from === to) return;
    changes.push({ backend: 'systemd', target: unit!, setting, from, to, workload: w.name });
  };
  if (memH && (memory.high !== undefined || memory.max !== undefined)) {
    const g = v1.groups[`${memH}:${cgPath}`];
    if (memory.max !== undefined && viaSystemd) {
      systemd('MemoryMax', memory.max === 'max' ? 'infinity' : String(memory.max));
    }
    if (!g?.exists) {
      if (!viaSystemd || memory.high !== undefined) {
        warnings.push(
          `${w.name}: memory:${cgPath} does not exist, so its memory settings are not written (the v1 memory hierarchy holds no such cgroup)`,
        );
      }
    } else {
      const note = unit
        ? 'systemd has no property for this file on cgroup v1: isolate writes it and checks it every interval'
        : undefined;
      if (memory.max !== undefined && !viaSystemd) {
        const to = memory.max === 'max' ? '-1' : String(memory.max);
        const limit = g.values['memory.limit_in_bytes'];
        const memsw = g.values['memory.memsw.limit_in_bytes'];
        const writes: [CgroupSetting, string | undefined][] = [['memory.limit_in_bytes', limit]];
        if (v1.swapAccounting) {
          // memsw must stay ≥ the limit: raise it first, lower it last.
          const raising = memory.max === 'max' || Number(limit) < memory.max;
          if (raising) writes.unshift(['memory.memsw.limit_in_bytes', memsw]);
          else writes.push(['memory.memsw.limit_in_bytes', memsw]);
        }
        for (const [s, raw] of writes) {
          if (!sameBytes(raw, memory.max)) push(memH, cgPath, s, raw ?? null, to, w.name, note);
        }
      }
      if (memory.high !== undefined) {
        const raw = g.values['memory.soft_limit_in_bytes'];
        const to = memory.high === 'max' ? '-1' : String(memory.high);
        if (!sameBytes(raw, memory.high))
          push(memH, cgPath, 'memory.soft_limit_in_bytes', raw ?? null, to, w.name, note);
      }
    }
  }
  if (cpuH && w.cpu?.weight !== undefined) {
    if (viaSystemd) {
      systemd('CPUWeight', String(w.cpu.weight));
      return;
    }
    const g = v1.groups[`${cpuH}:${cgPath}`];
    if (!g?.exists) {
      warnings.push(`${w.name}: cpu:${cgPath} does not exist, so cpu.shares is not written`);
      return;
    }
    const to = String(weightToShares(w.cpu.weight));
    if (g.values['cpu.shares'] !== to)
      push(cpuH, cgPath, 'cpu.shares', g.values['cpu.shares'] ?? null, to, w.name);
  }
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
