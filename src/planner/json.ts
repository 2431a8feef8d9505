import { createHash } from 'node:crypto';
import type { Plan, WorkloadAllocation } from '../model/plan.js';
import type { RaidDiskTie } from '../model/raid-disks.js';
import { type WorkloadDisksJson, workloadDisksToJson } from '../topology/disks-format.js';

/** The `--json` shape of a plan; also what `isolate plan` saves for `isolate apply --plan FILE`. */
export interface PlanJson {
  allocation: Record<
    string,
    {
      class: WorkloadAllocation['class'];
      target: string;
      cpus: number[];
      cpuList: string;
      cores: number[];
      nodes: number[];
      mems: number[];
      memory: WorkloadAllocation['memory'];
      /** Why these CPUs (kept / near a device / most free / lowest id). */
      reason: string;
    }
  >;
  reserved: { cpus: number[]; cpuList: string; reason: string };
  /** The cgroup layout judged: unified, hybrid or legacy, and where cpuset is. */
  layout?: string;
  changes: Plan['changes'];
  warnings: string[];
  /** INFO: facts worth knowing, nothing to fix (absent from plans saved before it existed). */
  notes?: string[];
  /**
   * The disks under each workload's data directories, by workload (plans of policies with `disks:`).
   * Facts, not changes: outside the fingerprint and not saved with the plan.
   */
  disks?: Record<string, WorkloadDisksJson>;
  /**
   * The RAID logical drive each exclusive workload's disk is (by the OS disk the vendor tool names),
   * when the controllers were read. Facts: outside the fingerprint.
   */
  raidDisks?: RaidDiskTie[];
  /** sha256 of allocation + changes: `apply --plan` recomputes it and refuses when the host moved on. */
  fingerprint: string;
}

/** What the reserved CPUs are for, said once in text and JSON. */
export const RESERVED_REASON =
  'housekeeping: never given to exclusive workloads; shared by batch workloads and the rest of the system';

export function planToJson(plan: Plan): PlanJson {
  const allocation: PlanJson['allocation'] = {};
  for (const a of plan.allocation.workloads) {
    allocation[a.name] = {
      class: a.class,
      target: a.target,
      cpus: a.cpus.toArray(),
      cpuList: a.cpus.toString(),
      cores: a.cores,
      nodes: a.nodes,
      mems: a.mems,
      memory: a.memory,
      reason: a.reason,
    };
  }
  const body = {
    allocation,
    reserved: {
      cpus: plan.allocation.reserved.toArray(),
      cpuList: plan.allocation.reserved.toString(),
      reason: RESERVED_REASON,
    },
    layout: plan.layout || undefined,
    changes: plan.changes,
    warnings: plan.warnings,
    notes: plan.notes,
    disks: plan.disks?.length ? workloadDisksToJson(plan.disks) : undefined,
    raidDisks: plan.raidDisks?.length ? plan.raidDisks : undefined,
  };
  return { ...body, fingerprint: fingerprintOf(body) };
}

/**
 * sha256 of what a plan does: each workload's target, CPUs, memory nodes and memory settings, and
 * every change. Computed from the JSON form, so a saved plan's own content can be checked against the
 * fingerprint it carries.
 */
export function fingerprintOf(plan: Pick<PlanJson, 'allocation' | 'changes'>): string {
  const stable = {
    allocation: Object.entries(plan.allocation).map(([name, a]) => [
      name,
      a.target,
      a.cpuList,
      a.mems,
      a.memory,
    ]),
    // A v1 change's hierarchy is part of its identity; v2 changes keep the fingerprint they always had.
    changes: plan.changes.map((c) =>
      c.backend === 'cgroupfs' && c.hierarchy
        ? [c.backend, c.target, c.setting, c.from, c.to, c.hierarchy]
        : [c.backend, c.target, c.setting, c.from, c.to],
    ),
  };
  return createHash('sha256').update(JSON.stringify(stable)).digest('hex');
}
