// Memory, cpu and io settings of a cgroup v1 host, each in its own hierarchy (v1.ts step 7): memory
// limits and cpu.shares in the workload's memory and cpu cgroups (through systemd for a unit), blkio
// weights and throttles on the exclusive workloads' disks.
import { type ObservedState, type ObservedV1, UNIFIED_PARAM } from '../model/observed.js';
import type { CgroupSetting, Change } from '../model/plan.js';
import { IO_LIMIT_KEYS, type IoLimitKey, type WorkloadSpec } from '../model/policy.js';
import { type BlkioFile, ioLineOf, ioSatisfies } from '../model/io.js';
import { protectedDisks } from './io.js';
import { defaultUnitPath } from '../model/systemd.js';

/** v1's "no limit" reads as PAGE_COUNTER_MAX pages; anything this large is unlimited. */
const V1_UNLIMITED = 2 ** 62;

/** cpu.weight (1-10000, default 100) → cpu.shares (2-262144, default 1024), as systemd maps CPUWeight on v1. */
export function weightToShares(weight: number): number {
  return Math.min(262144, Math.max(2, Math.round((weight * 1024) / 100)));
}

export type Push = (
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
 * explicit target refused in v1-refusals.ts), no iocost. Written in a cgroup-matched workload's blkio
 * cgroup; a unit's blkio cgroup is systemd's and a process-matched workload has none of isolate's: said,
 * not written.
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
export function memoryAndCpu(
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
