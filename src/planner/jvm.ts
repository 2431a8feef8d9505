// The plan's word on the running JVMs whose CPUs it changes: a JVM sized its GC and JIT pools for
// the CPUs it had when it started, so a narrower (or wider) cpuset leaves them wrong until it
// restarts. apply never restarts anything: the plan names the process, and the restart is the
// operator's, in the rolling-restart window. Pure: ops/plan.ts reads the JVMs (cgroup/jvm.ts).
import { type CpuChange, type JvmFacts, judgeJvm, planNote } from '../model/jvm.js';
import {
  activeProcessorCountIn,
  assignmentOf,
  isIsolateJvmValue,
  isolateJvmAssignment,
  JVM_FLAG_VARIABLE,
  jvmDropInPath,
  splitAssignment,
} from '../model/jvm-options.js';
import type { ObservedState } from '../model/observed.js';
import type { Allocation, Change, Plan } from '../model/plan.js';
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

/**
 * `jvm: { activeProcessorCount: auto }`: one JvmOptions change per such unit whose JAVA_TOOL_OPTIONS
 * is not yet isolate's -XX:ActiveProcessorCount=<its CPUs>. Nothing of the operator's is copied
 * (model/jvm-options.ts says why): their options variable (jvm.optionsVariable) stays theirs, and is
 * only read for a count of their own, which the command line applies after JAVA_TOOL_OPTIONS.
 */
export function jvmOptionChanges(
  policy: Pick<Policy, 'workloads'>,
  allocation: Allocation,
  observed: Pick<ObservedState, 'systemd'>,
  warnings: string[],
): Change[] {
  const out: Change[] = [];
  for (const a of allocation.workloads) {
    const spec = policy.workloads.find((w) => w.name === a.name);
    if (!spec?.jvm || spec.match.kind !== 'systemdUnit') continue;
    const unit = spec.match.unit;
    const props = observed.systemd?.units[unit];
    if (!observed.systemd) {
      warnings.push(
        `${a.name}: jvm.activeProcessorCount needs systemd (isolate writes a drop-in of ${unit}); systemd does not run this host or --root is not /, so it is not planned`,
      );
      continue;
    }
    if (!props) {
      warnings.push(
        `${a.name}: ${unit} is not loaded; the JVM options drop-in is planned once systemd knows it`,
      );
      continue;
    }
    const current = assignmentOf(props.Environment, JVM_FLAG_VARIABLE);
    if (current === null) {
      warnings.push(
        `${a.name}: systemd's Environment= of ${unit} cannot be read (${JSON.stringify(props.Environment).slice(0, 80)}); the JVM options drop-in is not planned`,
      );
      continue;
    }
    const cpus = a.cpus.size;
    const value = splitAssignment(current)?.[1] ?? '';
    if (value !== '' && !isIsolateJvmValue(value)) {
      // The operator's own JAVA_TOOL_OPTIONS: a drop-in of isolate's would replace it (copy it).
      warnings.push(
        `${a.name}: ${unit} sets ${JVM_FLAG_VARIABLE} itself ("${value.slice(0, 80)}"); isolate's drop-in would replace it, so it is not planned: add -XX:ActiveProcessorCount=${cpus} to it yourself`,
      );
      continue;
    }
    warnTheirCount(a.name, unit, spec.jvm.optionsVariable, props.Environment, cpus, warnings);
    const to = isolateJvmAssignment(cpus);
    if (props.EnvironmentFiles) {
      // EnvironmentFile= is read after Environment= and wins (systemd.exec(5)).
      warnings.push(
        `${a.name}: ${unit} reads EnvironmentFile= (${props.EnvironmentFiles.split(' ')[0]}); if it sets ${JVM_FLAG_VARIABLE}, it overrides isolate's drop-in: add -XX:ActiveProcessorCount=${cpus} there instead`,
      );
    }
    if (current === to) continue;
    out.push({
      backend: 'systemd',
      target: unit,
      setting: 'JvmOptions',
      from: current,
      to,
      workload: a.name,
      note: `isolate writes the drop-in ${jvmDropInPath(unit)}; ${unit}'s JVM reads -XX:ActiveProcessorCount=${cpus} at its next restart (isolate never restarts it)`,
    });
  }
  return out;
}

/**
 * The operator's options variable with an -XX:ActiveProcessorCount of another count: the command
 * line is read after JAVA_TOOL_OPTIONS, so theirs wins over isolate's (said, never changed).
 */
function warnTheirCount(
  workload: string,
  unit: string,
  variable: string,
  environment: string | undefined,
  cpus: number,
  warnings: string[],
): void {
  if (variable === JVM_FLAG_VARIABLE) return;
  const theirs = splitAssignment(assignmentOf(environment, variable) ?? '')?.[1] ?? '';
  const count = activeProcessorCountIn(theirs);
  if (count !== null && count !== cpus) {
    warnings.push(
      `${workload}: ${variable} of ${unit} sets -XX:ActiveProcessorCount=${count}, which the JVM reads after isolate's ${JVM_FLAG_VARIABLE} (${cpus}): remove it from ${variable} to let isolate's count apply`,
    );
  }
}
