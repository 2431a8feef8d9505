// Observed-state helpers for planner tests: a fresh cgroup v2 host, and the host after a list of
// changes was written (each write sets the file to the value, as the kernel reports it back).
import type { ObservedGroup, ObservedState } from '../../src/model/observed.js';
import { unavailableCgroupFs } from '../../src/model/observed.js';
import type { Change } from '../../src/model/plan.js';

export function freshHost(topLevel: string[] = [], partition = true): ObservedState {
  const groups: Record<string, ObservedGroup> = {};
  for (const t of topLevel)
    groups[`/${t}`] = {
      exists: true,
      values: {},
      ownedBySystemd: t.endsWith('.slice') || t.endsWith('.scope'),
    };
  return {
    cgroup: {
      layout: 'unified',
      writable: true,
      mount: 'sys/fs/cgroup',
      features: { partition, exclusive: partition, cpuIdle: true, memoryMin: true },
      rootControllers: ['cpuset', 'cpu', 'io', 'memory', 'pids'],
      rootSubtreeControl: [],
      topLevel,
      units: {},
      groups,
    },
    processes: {},
  };
}

export function noCgroupHost(): ObservedState {
  return { cgroup: unavailableCgroupFs('none', 'no cgroup v2 hierarchy'), processes: {} };
}

/** The observation after the changes were applied by a kernel that accepted them all. */
export function afterChanges(observed: ObservedState, changes: Change[]): ObservedState {
  const next: ObservedState = structuredClone(observed);
  const fs = next.cgroup;
  for (const c of changes) {
    if (c.backend !== 'cgroupfs') continue;
    if (c.setting === 'cgroup.subtree_control' && c.target === '/') {
      fs.rootSubtreeControl = c.to.split(' ');
      continue;
    }
    fs.groups[c.target] ??= { exists: false, values: {}, ownedBySystemd: false };
    const g = fs.groups[c.target]!;
    if (c.setting === 'mkdir') {
      g.exists = true;
      if (!fs.topLevel.includes(c.target.slice(1)) && c.target.lastIndexOf('/') === 0)
        fs.topLevel.push(c.target.slice(1));
    } else if (c.setting === 'cgroup.procs') {
      next.processCgroups = { ...(next.processCgroups ?? {}), [Number(c.to)]: c.target };
    } else {
      g.exists = true;
      g.values[c.setting] = c.to;
    }
  }
  return next;
}
