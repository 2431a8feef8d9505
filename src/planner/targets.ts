import type { ObservedState } from '../model/observed.js';
import type { WorkloadSpec } from '../model/policy.js';
import { defaultUnitPath } from '../model/systemd.js';

/**
 * The cgroup a workload's settings go to, relative to the cgroup2 mount.
 * - `cgroup:` the path itself (YARN's `/hadoop-yarn` is constrained at its root; containers inherit);
 * - `systemdUnit:` where systemd put the unit, or where it would put it;
 * - `process:` a top-level cgroup isolate creates, so it can become a local partition root.
 */
export function workloadTarget(w: WorkloadSpec, observed?: ObservedState): string {
  // On cgroup v1 every workload gets a cpuset of isolate's own; its match only selects processes.
  if (observed?.v1) return `/isolate-${w.name}`;
  switch (w.match.kind) {
    case 'cgroup':
      return w.match.path;
    case 'process':
      return `/isolate-${w.name}`;
    case 'systemdUnit':
      return observed?.cgroup.units[w.match.unit] ?? defaultUnitPath(w.match.unit);
  }
}

/** `/a/b/c` → [`/a`, `/a/b`]: the non-root ancestors of a cgroup, top-down. */
export function ancestors(path: string): string[] {
  const parts = path.split('/').filter(Boolean);
  const out: string[] = [];
  for (let i = 1; i < parts.length; i++) out.push(`/${parts.slice(0, i).join('/')}`);
  return out;
}

export function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}
