import type { Change } from './plan.js';
import { sliceDropInPath } from './systemd.js';

/** One change as a person reads it, in plans, logs and errors alike. */
export function describeChange(c: Change): string {
  if (c.backend === 'cgroupfs') {
    if (c.setting === 'mkdir') return `mkdir ${c.target}`;
    if (c.setting === 'cgroup.procs') return `move PID ${c.to} from ${c.from ?? '?'} to ${c.target}`;
  }
  if (c.backend === 'systemd' && c.setting === 'Slice') {
    return `drop-in ${sliceDropInPath(c.target)}: Slice=${c.to} (takes effect at ${c.target}'s next restart)`;
  }
  if (c.backend === 'systemd') return `systemctl set-property ${c.target} ${c.setting}=${c.to}`;
  return `${c.target} ${c.setting}: ${showValue(c.from)} → ${c.to}`;
}

/** A live or planned value: `(none)` for absent, `""` for empty. */
export function showValue(v: string | null): string {
  return v === null ? '(none)' : v === '' ? '""' : v;
}

/** What a change acts on, for the backends' own error messages: `mkdir /x`, `/x cpuset.cpus`. */
export function changeSubject(c: Change): string {
  return c.setting === 'mkdir' ? `mkdir ${c.target}` : `${c.target} ${c.setting}`;
}
