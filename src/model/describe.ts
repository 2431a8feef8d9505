import type { Change } from './plan.js';
import { IRQBALANCE_DROP_IN, IRQBALANCE_SETTING, showIrqbalanceValue } from './irqbalance.js';
import { jvmDropInPath } from './jvm-options.js';
import { sliceDropInPath } from './systemd.js';

/** One change as a person reads it, in plans, logs and errors alike. */
export function describeChange(c: Change): string {
  if (c.backend === 'cgroupfs') {
    const t = cgroupTarget(c);
    if (c.setting === 'mkdir') return `mkdir ${t}`;
    if (c.setting === 'cgroup.procs') return `move PID ${c.to} from ${c.from ?? '?'} to ${t}`;
    if (c.setting === 'tasks') return `move thread ${c.to} from ${c.from ?? '?'} to ${t}`;
    return `${t} ${c.setting}: ${showValue(c.from)} → ${c.to}`;
  }
  if (c.backend === 'systemd' && c.setting === 'Slice') {
    return `drop-in ${sliceDropInPath(c.target)}: Slice=${c.to} (takes effect at ${c.target}'s next restart)`;
  }
  if (c.backend === 'systemd' && c.setting === 'JvmOptions') {
    return `drop-in ${jvmDropInPath(c.target)}: Environment="${c.to}" (takes effect at ${c.target}'s next restart)`;
  }
  if (c.backend === 'systemd' && c.setting === IRQBALANCE_SETTING) {
    return `drop-in ${IRQBALANCE_DROP_IN}: ${showIrqbalanceValue(c.to)} (irqbalance restarted once)`;
  }
  if (c.backend === 'systemd' && c.setting === 'ActiveState') {
    return `systemctl ${c.to === 'active' ? 'start' : 'stop'} ${c.target} (an empty anchor slice of isolate's)`;
  }
  if (c.backend === 'systemd') return `systemctl set-property ${c.target} ${c.setting}=${c.to}`;
  return `${c.target} ${c.setting}: ${showValue(c.from)} → ${c.to}`;
}

/**
 * Undoing a change as a person reads it: what `isolate rollback` puts back, `previous` being the value
 * it found before (null: absent). Null when the undo has nothing to do (a cgroup that existed before,
 * a file that did not). `current` is the value it overwrites as shown (`rollback --dry-run` reads it
 * live: someone may have changed it since); isolate's own value when not given.
 */
export function describeUndo(c: Change, previous: string | null, current?: string): string | null {
  const t = cgroupTarget(c);
  const now = current ?? showValue(c.to);
  if (c.backend === 'cgroupfs') {
    if (c.setting === 'mkdir') return previous === 'present' ? null : `rmdir ${t}`;
    if (previous === null) return null;
    if (c.setting === 'cgroup.procs' || c.setting === 'tasks') {
      return `move ${c.setting === 'tasks' ? 'thread' : 'PID'} ${c.to} from ${current ?? t} back to ${previous}`;
    }
    return `${t} ${c.setting}: ${now} → ${showValue(previous)}`;
  }
  if (c.backend === 'systemd' && c.setting === 'Slice') {
    return `remove drop-in ${sliceDropInPath(c.target)} (Slice=${c.to}; takes effect at ${c.target}'s next restart)`;
  }
  if (c.backend === 'systemd' && c.setting === IRQBALANCE_SETTING) {
    return previous
      ? `drop-in ${IRQBALANCE_DROP_IN}: ${showIrqbalanceValue(previous)} again (irqbalance restarted once)`
      : `remove drop-in ${IRQBALANCE_DROP_IN} (irqbalance restarted once)`;
  }
  if (c.backend === 'systemd' && c.setting === 'ActiveState') {
    return previous === 'active' ? null : `systemctl stop ${c.target}`;
  }
  if (c.backend === 'systemd') {
    const unset = previous === null || previous === '' || previous === '[not set]';
    return `${c.target} ${c.setting}: ${now} → ${unset ? "unset (isolate's drop-in removed)" : showValue(previous)}`;
  }
  return `${t} ${c.setting}: ${now} → ${showValue(previous)}`;
}

/** A cgroup change's target; v1 paths carry their hierarchy (`cpuset:/isolate-kafka`), as /proc/<pid>/cgroup does. */
export function cgroupTarget(c: Change): string {
  return c.backend === 'cgroupfs' && c.hierarchy ? `${c.hierarchy}:${c.target}` : c.target;
}

/** A live or planned value: `(none)` for absent, `""` for empty. */
export function showValue(v: string | null): string {
  return v === null ? '(none)' : v === '' ? '""' : v;
}

/** What a change acts on, for the backends' own error messages: `mkdir /x`, `/x cpuset.cpus`. */
export function changeSubject(c: Change): string {
  const t = cgroupTarget(c);
  return c.setting === 'mkdir' ? `mkdir ${t}` : `${t} ${c.setting}`;
}
