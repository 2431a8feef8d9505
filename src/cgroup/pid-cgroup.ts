// A process move's PID, and the cgroup a process is in now (/proc/PID/cgroup), gone when it exited.
import { StepError } from '../apply/executor.js';
import type { Change } from '../model/plan.js';
import { UnreadableError, readLiveSync } from '../sys/read.js';

/** The PID a cgroup.procs change moves. */
export function pidOf(change: Change): number {
  const pid = Number(change.to);
  if (!Number.isInteger(pid) || pid <= 0)
    throw new StepError(`cgroup.procs change has a bad PID "${change.to}"`);
  return pid;
}

/** A process's /proc/PID/cgroup; null when the process is gone (ENOENT, or ESRCH while it exits). */
export function procCgroup(file: string): string | null {
  try {
    return readLiveSync(file);
  } catch (err) {
    if (err instanceof UnreadableError && err.code === 'ESRCH') return null;
    throw err;
  }
}
