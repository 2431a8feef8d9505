// The plan's word on the running JVMs whose CPUs it changes: a JVM sized its GC and JIT pools for
// the CPUs it had when it started, so a narrower (or wider) cpuset leaves them wrong until it
// restarts. apply never restarts anything: the plan names the process, and the restart is the
// operator's, in the rolling-restart window. Pure: ops/plan.ts reads the JVMs (cgroup/jvm.ts).
import { type CpuChange, type JvmFacts, judgeJvm, planNote } from '../model/jvm.js';
import type { Plan } from '../model/plan.js';
import type { Policy } from '../model/policy.js';

/** The settings whose change moves a workload's processes to other CPUs. */
const MOVES_CPUS = new Set(['cpuset.cpus', 'AllowedCPUs', 'cgroup.procs', 'tasks', 'cpuset.cpus.partition']);

/** The workloads whose processes' CPUs this plan changes. */
export function workloadsWithCpuChanges(plan: Pick<Plan, 'changes'>): Set<string> {
  return new Set(
    plan.changes.filter((c) => c.workload && MOVES_CPUS.has(c.setting)).map((c) => c.workload as string),
  );
}

/**
 * Adds a line per JVM whose pools will not fit the CPUs its workload gets: a warning for an exclusive
 * workload (its GC pauses grow), a note for a batch one. `jvms` are each workload's running JVMs.
 */
export function addJvmNotes(
  plan: Plan,
  policy: Pick<Policy, 'workloads'>,
  jvms: Record<string, readonly JvmFacts[]>,
  cpuChange: (workload: string, pid: number) => CpuChange | null,
): void {
  for (const a of plan.allocation.workloads) {
    const spec = policy.workloads.find((w) => w.name === a.name);
    const owner = spec?.match.kind === 'systemdUnit' ? spec.match.unit : a.name;
    for (const j of jvms[a.name] ?? []) {
      const note = planNote(owner, j, judgeJvm(j, cpuChange(a.name, j.pid)), a.cpus.size);
      if (note) (a.class === 'exclusive' ? plan.warnings : plan.notes).push(note);
    }
  }
}
