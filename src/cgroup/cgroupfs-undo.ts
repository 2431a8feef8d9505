// The cgroupfs backend's undo of one change: a created cgroup removed (its stragglers moved out
// first), controllers disabled unless a cgroup below still needs them, a process moved back, a file
// given its previous value (an emptied CPU list the parent's effective one when the kernel refuses "").
import { lstat, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { StepError, type UndoContext } from '../apply/executor.js';
import { changeSubject } from '../model/describe.js';
import type { Change } from '../model/plan.js';
import { errCode, errnoMeaning } from './errno.js';
import { isDir, listEntries, normCgPath, readTrim, readTrimSync } from './fsutil.js';
import { pidOf } from './pid-cgroup.js';
import { CPU_LISTS, IO, tokens } from './settings.js';
import { notTheMovedTask } from './task-start.js';

/** What the undo needs of the cgroupfs executor: its paths, reads and the one write. */
export interface CgroupFiles {
  readonly root: string;
  dir(target: string): string;
  file(change: Change): string;
  read(change: Change): Promise<string | null>;
  same(change: Change, a: string | null, b: string | null): boolean;
  write(file: string, value: string, change: Change, what: string): Promise<void>;
}

export async function undoCgroupChange(
  fs: CgroupFiles,
  change: Change,
  previous: string | null,
  ctx: UndoContext,
): Promise<{ note?: string }> {
  const what = `undo ${changeSubject(change)}`;
  switch (change.setting) {
    case 'mkdir':
      return removeCreated(fs, change, previous, ctx, what);
    case 'cgroup.subtree_control':
      return disableControllers(fs, change, previous, what);
    case 'cgroup.procs':
      return moveBack(fs, change, previous, what);
    default:
      return restoreValue(fs, change, previous, what);
  }
}

async function removeCreated(
  fs: CgroupFiles,
  change: Change,
  previous: string | null,
  ctx: UndoContext,
  what: string,
): Promise<{ note?: string }> {
  if (previous === 'present') return {};
  const dir = fs.dir(change.target);
  if (!(await isDir(dir))) return {};
  await evacuate(fs, change.target, ctx);
  try {
    await rmdir(dir);
  } catch (err) {
    const code = errCode(err);
    if (code === 'ENOENT') return {};
    throw new StepError(`${what}: rmdir ${dir} failed: ${code} (${errnoMeaning('rmdir', code)})`, code);
  }
  return {};
}

async function disableControllers(
  fs: CgroupFiles,
  change: Change,
  previous: string | null,
  what: string,
): Promise<{ note?: string }> {
  const had = new Set(tokens(previous));
  const now = new Set(tokens(await readTrim(fs.file(change))));
  const kept: string[] = [];
  for (const t of tokens(change.to).reverse()) {
    if (had.has(t) || !now.has(t)) continue;
    try {
      await fs.write(fs.file(change), `-${t}`, change, `${what} -${t}`);
    } catch (err) {
      // EBUSY: a child still enables the controller for its own children. Undone last (undoLast),
      // after every write of isolate's and every systemd property, what is left is not isolate's:
      // systemd keeps a controller it enabled for a property in a slice, a delegated unit its own.
      const users = err instanceof StepError && err.code === 'EBUSY' ? usersOf(fs, change.target, t) : [];
      if (users.length === 0) throw err;
      kept.push(
        `${change.target} keeps ${t} enabled: ${users.join(', ')} still enable${users.length === 1 ? 's' : ''} it for the cgroups below (not isolate's to change; systemd does not disable a controller it enabled for a unit property); those cgroups' ${t} files stay, holding every online CPU and memory node`,
      );
    }
  }
  return kept.length > 0 ? { note: kept.join('; ') } : {};
}

async function moveBack(
  fs: CgroupFiles,
  change: Change,
  previous: string | null,
  what: string,
): Promise<{ note?: string }> {
  if (previous === null) return {};
  const pid = pidOf(change);
  const live = await fs.read(change);
  if (live === null) return { note: `PID ${pid} exited` };
  if (normCgPath(live) === normCgPath(previous)) return {};
  // A PID handed out again since the move is another process: it stays where it is.
  const other = notTheMovedTask(fs.root, change);
  if (other) return { note: other };
  try {
    await fs.write(path.join(fs.dir(previous), 'cgroup.procs'), String(pid), change, what);
  } catch (err) {
    if (err instanceof StepError && err.code === 'ESRCH') return { note: `PID ${pid} exited` };
    throw err;
  }
  return {};
}

async function restoreValue(
  fs: CgroupFiles,
  change: Change,
  previous: string | null,
  what: string,
): Promise<{ note?: string }> {
  if (previous === null) return {}; // file did not exist: the cgroup was created by us (rmdir undoes it)
  const file = fs.file(change);
  if (!(await isDir(fs.dir(change.target)))) return { note: `${change.target} no longer exists` };
  if (await absent(file)) {
    // The cgroup is there but not the file: its controller is off in the parent now (a reboot, or
    // someone disabled it). The kernel applies nothing from it, and turning the controller on again
    // to write the old value would change more than isolate did.
    return {
      note: `${change.target} ${change.setting} is gone (its controller is off in the parent cgroup): nothing to restore`,
    };
  }
  let value = previous;
  if (change.setting === 'cpuset.cpus.partition') value = previous.split(/\s+/)[0] ?? 'member';
  // An io file's previous value is its device's line (the clearing value when it had none).
  const live = IO.has(change.setting) ? await fs.read(change) : await readTrim(file);
  if (live !== null && fs.same(change, live, value) && change.setting !== 'cpuset.cpus.partition') return {};
  if (change.setting === 'cpuset.cpus.partition' && live === value) return {};
  try {
    await fs.write(file, value, change, what);
  } catch (err) {
    // Emptying a populated cgroup's list is refused (ENOSPC): the nearest equivalent is the
    // parent's effective set, which is what an empty (inherited) list resolves to.
    if (
      err instanceof StepError &&
      err.code === 'ENOSPC' &&
      value.trim() === '' &&
      CPU_LISTS.has(change.setting)
    ) {
      const parent = path.posix.dirname(normCgPath(change.target));
      const eff = change.setting === 'cpuset.mems' ? 'cpuset.mems.effective' : 'cpuset.cpus.effective';
      const inherited = await readTrim(path.join(fs.dir(parent), eff));
      if (inherited) {
        await fs.write(file, inherited, change, what);
        return {
          note: `${change.target} ${change.setting} could not be emptied while the cgroup has processes; set to the parent's effective "${inherited}" (what the empty value inherits)`,
        };
      }
    }
    throw err;
  }
  return {};
}

/** Whether FILE is known to be absent (ENOENT); a failed look is not absence. */
async function absent(file: string): Promise<boolean> {
  try {
    await lstat(file);
    return false;
  } catch (err) {
    return errCode(err) === 'ENOENT';
  }
}

/** The child cgroups (relative to the mount) whose own subtree_control enables `controller`. */
function usersOf(fs: CgroupFiles, target: string, controller: string): string[] {
  const dir = fs.dir(target);
  const out: string[] = [];
  for (const child of listEntries(dir)?.dirs.sort() ?? []) {
    const text = readTrimSync(path.join(dir, child, 'cgroup.subtree_control'));
    if (tokens(text).includes(controller)) out.push(path.posix.join(normCgPath(target), child));
  }
  return out;
}

/** Cgroups PIDs were moved out of, by destination cgroup (to re-home stragglers before rmdir). */
function movedFrom(ctx: UndoContext): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of ctx.entries) {
    if (e.change.setting === 'cgroup.procs' && e.previous && !out.has(normCgPath(e.change.target))) {
      out.set(normCgPath(e.change.target), e.previous);
    }
  }
  return out;
}

/** Before removing a cgroup we created, move any processes left in it (forked since) back out. */
async function evacuate(fs: CgroupFiles, target: string, ctx: UndoContext): Promise<void> {
  const dir = fs.dir(target);
  const procs = await readTrim(path.join(dir, 'cgroup.procs'));
  if (!procs) return;
  const home = movedFrom(ctx).get(normCgPath(target)) ?? path.posix.dirname(normCgPath(target));
  for (const pid of procs.split('\n').filter(Boolean)) {
    try {
      await fs.write(
        path.join(fs.dir(home), 'cgroup.procs'),
        pid,
        { backend: 'cgroupfs', target: home, setting: 'cgroup.procs', from: target, to: pid },
        `move PID ${pid} out of ${target}`,
      );
    } catch (err) {
      if (!(err instanceof StepError && err.code === 'ESRCH')) throw err;
    }
  }
  // Child cgroups created meanwhile by others are not ours to delete; rmdir reports them.
}
