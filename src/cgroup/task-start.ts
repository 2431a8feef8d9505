// Which task a process or thread move moved. A PID (TID) is handed out again once its task ends, so
// the undo of a move checks the task is still the one isolate moved: the same start time (field 22
// of /proc/ID/stat, clock ticks since boot), journaled with the move. A reused ID is another task,
// never moved by an old entry.
import path from 'node:path';
import type { Change } from '../model/plan.js';
import { readLiveSync, UnreadableError } from '../sys/read.js';

const MOVES = new Set(['cgroup.procs', 'tasks']);

/** The kernel's start time field: clock ticks since boot, digits only. */
export const START_TIME = /^\d{1,20}$/;

type TaskStart = { ticks: string } | { gone: true } | { unreadable: string };

/**
 * A task's start time from `/proc/ID/stat` (the kernel serves a thread's by its TID too, though /proc
 * does not list it). The command name (field 2) may hold spaces and ')': fields are counted after its
 * last ')'. Gone: ENOENT, or ESRCH while it exits; any other failure is unknown, not gone.
 */
function taskStart(root: string, id: number): TaskStart {
  const file = path.join(root, 'proc', String(id), 'stat');
  let text: string | null;
  try {
    text = readLiveSync(file);
  } catch (err) {
    if (err instanceof UnreadableError && err.code === 'ESRCH') return { gone: true };
    return { unreadable: err instanceof UnreadableError ? err.code : String(err) };
  }
  if (text === null) return { gone: true };
  const ticks = text.slice(text.lastIndexOf(')') + 2).split(' ')[19] ?? '';
  return START_TIME.test(ticks) ? { ticks } : { unreadable: `no start time in ${file}` };
}

/**
 * Each process or thread move with the start time of the task it moves, read now (just before the
 * apply writes it): the journal then names the task, not just its ID. A task already gone is left
 * unstamped (its move is skipped as exited).
 */
export function stampTaskStarts(root: string, changes: readonly Change[]): Change[] {
  return changes.map((c) => {
    if (c.backend !== 'cgroupfs' || !MOVES.has(c.setting) || c.startTime !== undefined) return c;
    const id = Number(c.to);
    if (!Number.isSafeInteger(id) || id <= 0) return c;
    const s = taskStart(root, id);
    return 'ticks' in s ? { ...c, startTime: s.ticks } : c;
  });
}

/**
 * Why the undo of a move must leave its task where it is: the task isolate moved exited, or its ID
 * is another task's now, or its start time cannot be read. Null: the same task, or a move journaled
 * without a start time (an older isolate's), which keeps the old check (the ID exists).
 */
export function notTheMovedTask(root: string, change: Change): string | null {
  if (change.backend !== 'cgroupfs' || change.startTime === undefined) return null;
  const id = Number(change.to);
  const what = `${change.setting === 'tasks' ? 'thread' : 'PID'} ${id}`;
  const s = taskStart(root, id);
  if ('ticks' in s && s.ticks === change.startTime) return null;
  const moved = `the task isolate moved started at tick ${change.startTime}`;
  if ('gone' in s) return `${what} exited (${moved}); nothing to move back`;
  if ('unreadable' in s)
    return `${what} not moved back: its start time is unknown (${s.unreadable}; ${moved})`;
  return `${what} is another task now (started at tick ${s.ticks}; ${moved}); not moved back`;
}
