import type { ObservedState } from '../model/observed.js';
import type { WorkloadSpec } from '../model/policy.js';
import { dedicatedSliceName, defaultUnitPath, isDedicatedSlice, slicePath } from '../model/systemd.js';

/**
 * `strict: true` on a systemd host: an exclusive service in a shared slice (system.slice) cannot be
 * fenced from its neighbours by a slice-level setting, so it runs in a top-level slice of its own —
 * the operator's (a configured `Slice=` that is top-level and not shared) or `<workload>.slice`, which
 * isolate configures with a `Slice=` drop-in. The slice becomes the workload's target (and its
 * partition root) once the unit runs in it; a running unit moves only at its next restart.
 */
export interface SlicePlacement {
  unit: string;
  /** The dedicated slice, e.g. `kafka.slice`. */
  slice: string;
  /** `Slice=` as systemd has it configured now (empty when unknown). */
  configured: string;
  /** True when isolate must write the `Slice=` drop-in (the configured slice is shared). */
  move: boolean;
  /** The cgroup the unit runs in now when that is not in the slice yet (it moves at its next restart). */
  pending: string | null;
}

export function slicePlacement(
  w: WorkloadSpec,
  observed: ObservedState | undefined,
  strict: boolean,
): SlicePlacement | null {
  if (!strict || w.class !== 'exclusive' || w.match.kind !== 'systemdUnit') return null;
  const unit = w.match.unit;
  // Only services: a scope's slice is fixed by whoever creates it, and a slice is its own target.
  if (!unit.endsWith('.service')) return null;
  const props = observed?.systemd?.units[unit];
  if (!observed || !props) return null;
  const configured = props.Slice ?? '';
  const own = isDedicatedSlice(configured);
  const slice = own ? configured : dedicatedSliceName(w.name);
  const running = observed.cgroup.units[unit] ?? (props.ControlGroup || null);
  const pending = running !== null && parentOf(running) !== slicePath(slice) ? running : null;
  return { unit, slice, configured, move: !own, pending };
}

/**
 * The cgroup a workload's settings go to, relative to the cgroup2 mount.
 * - `cgroup:` the path itself (YARN's `/hadoop-yarn` is constrained at its root; containers inherit);
 * - `systemdUnit:` where systemd put the unit, or where it would put it; with `strict: true` and
 *   systemd running the host, an exclusive service's dedicated slice (see slicePlacement);
 * - `process:` a top-level cgroup isolate creates, so it can become a local partition root.
 */
export function workloadTarget(w: WorkloadSpec, observed?: ObservedState, strict = false): string {
  // On cgroup v1 every workload gets a cpuset of isolate's own; its match only selects processes.
  if (observed?.v1) return `/isolate-${w.name}`;
  switch (w.match.kind) {
    case 'cgroup':
      return w.match.path;
    case 'process':
      return `/isolate-${w.name}`;
    case 'systemdUnit': {
      const placed = slicePlacement(w, observed, strict);
      if (placed && placed.pending === null) return slicePath(placed.slice);
      return observed?.cgroup.units[w.match.unit] ?? defaultUnitPath(w.match.unit);
    }
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
