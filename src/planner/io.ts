// Which cgroup io mechanism can act on each of a workload's disks, and why, as plan notes: nothing is
// written for io yet, but an SRE sees before any io setting exists whether a weight would do nothing
// on this host (no BFQ, no iocost), so the plan never offers a setting that cannot work.
import type { WholeDisk, WorkloadDisks } from '../model/disks.js';
import type { IoFacts } from '../model/io.js';
import type { ObservedState } from '../model/observed.js';

/** The io controller's state from the observed cgroup root: v1 controllers, unreadable, or listed. */
export function ioControllerOf(observed: ObservedState): IoFacts['controller'] {
  const cg = observed.cgroup;
  if (observed.v1 || cg.layout === 'hybrid' || cg.layout === 'legacy') return 'v1';
  if (cg.layout === 'none' || cg.rootControllers.length === 0) return 'unknown';
  return cg.rootControllers.includes('io') ? 'available' : 'missing';
}

/** Why io.latency is always an option: it throttles siblings' queue depth, whatever the scheduler. */
const ANY = 'it acts under any scheduler';

function mechanism(d: WholeDisk, facts: IoFacts): string {
  const dev = d.dev as string;
  const iocostOn = typeof facts.iocost === 'object' && facts.iocost.enabled.includes(dev);
  if (d.scheduler === 'bfq') {
    return `io.weight and io.latency: BFQ is the active scheduler (weights act through io.bfq.weight); io.latency acts under any scheduler`;
  }
  if (iocostOn) {
    return `io.weight and io.latency: iocost is enabled for ${dev} (enable=1 in ${facts.iocostFile}); io.latency acts under any scheduler`;
  }
  const sched = d.scheduler === null ? 'the scheduler is unknown' : `the scheduler is ${d.scheduler}`;
  if (facts.iocost === 'unknown') {
    return `io.latency (${ANY}); whether io.weight would act is unknown: ${sched} and ${facts.iocostFile} could not be read`;
  }
  if (d.scheduler === null) {
    return `io.latency (${ANY}); whether io.weight would act is unknown: ${sched} and iocost is not enabled for ${dev}`;
  }
  const iocost =
    facts.iocost === 'unsupported'
      ? `this kernel has no iocost (no ${facts.iocostFile})`
      : `iocost is not enabled for ${dev} in ${facts.iocostFile}`;
  const fix =
    facts.iocost === 'unsupported'
      ? 'select bfq in queue/scheduler for weights'
      : 'select bfq in queue/scheduler or enable iocost for weights';
  return `io.latency only (${ANY}): io.weight would do nothing, since ${sched} and ${iocost}; ${fix}`;
}

/** One note per workload for the controller when it is not usable, else one per disk. */
export function ioPreconditionNotes(list: readonly WorkloadDisks[], facts: IoFacts): string[] {
  const notes: string[] = [];
  for (const w of list) {
    if (w.disks.length === 0) continue;
    const names = w.disks.map((d) => d.name).join(', ');
    if (facts.controller === 'missing') {
      notes.push(
        `io ${w.workload}: the io controller is not in ${facts.controllersFile}, so no io setting can protect ${names} (a kernel without CONFIG_BLK_CGROUP, or io bound to a cgroup v1 hierarchy)`,
      );
      continue;
    }
    if (facts.controller === 'v1') {
      notes.push(
        `io ${w.workload}: this host runs cgroup v1 controllers, where blkio offers weights (BFQ only) and throttles only: no io.latency or iocost for ${names}`,
      );
      continue;
    }
    if (facts.controller === 'unknown') {
      notes.push(
        `io ${w.workload}: ${facts.controllersFile} could not be read, so whether io settings can act on ${names} is unknown`,
      );
      continue;
    }
    for (const d of w.disks) {
      if (d.dev === null) {
        notes.push(`io ${w.workload}: ${d.name}: its MAJ:MIN is unknown, so no io setting can name it`);
        continue;
      }
      notes.push(`io ${w.workload}: ${d.name} (${d.dev}): ${mechanism(d, facts)}`);
    }
  }
  return notes;
}
