// The cgroupfs backend: reads, writes, verifies and undoes one Change on the cgroup2 filesystem.
import {
  type ChangeExecutor,
  type PreflightOptions,
  type PreflightStep,
  StepError,
  type UndoContext,
  type WriteResult,
} from '../apply/executor.js';
import { changeSubject } from '../model/describe.js';
import { UserError } from '../model/errors.js';
import { formatBytes, pageAlign, parseBytes } from '../model/units.js';
import { mkdir, rmdir } from 'node:fs/promises';
import path from 'node:path';
import type { Change } from '../model/plan.js';
import { sameCpuList } from '../model/cpuset.js';
import { WriteRefused, writeKernelFile } from '../sys/write.js';
import { isDirLiveSync, readLiveSync, UnreadableError } from '../sys/read.js';
import { errCode, errnoMeaning } from './errno.js';
import {
  cgroupDir,
  exists,
  isDir,
  listEntries,
  normCgPath,
  parseProcCgroup,
  readTrim,
  readTrimSync,
} from './fsutil.js';
import { writeRefusal } from './observe.js';
import { notTheMovedTask } from './task-start.js';
import { IO_FILES, type IoFile, ioDeviceOf, ioLineOf, ioSatisfies, sameIoValue } from '../model/io.js';

const CPU_LISTS = new Set(['cpuset.cpus', 'cpuset.mems', 'cpuset.cpus.exclusive']);
const MEMORY = new Set(['memory.min', 'memory.low', 'memory.high', 'memory.max']);
const PLAIN = new Set([
  ...CPU_LISTS,
  ...MEMORY,
  'cpuset.cpus.partition',
  'cpu.weight',
  'cpu.idle',
  'memory.oom.group',
]);

/** The cgroup v2 per-device io files: a change carries one device's line (model/io.ts). */
const IO = new Set<string>(IO_FILES);

export function isKnownSetting(setting: string): boolean {
  return (
    PLAIN.has(setting) ||
    IO.has(setting) ||
    setting === 'mkdir' ||
    setting === 'cgroup.subtree_control' ||
    setting === 'cgroup.procs'
  );
}

function tokens(v: string | null): string[] {
  return v ? v.split(/\s+/).filter(Boolean) : [];
}

export function sameValue(setting: string, a: string | null, b: string | null): boolean {
  if (a === null || b === null) return a === b;
  if (IO.has(setting)) return sameIoValue(setting as IoFile, a, b);
  if (CPU_LISTS.has(setting)) return sameCpuList(a, b);
  if (MEMORY.has(setting)) {
    const x = parseBytes(a);
    const y = parseBytes(b);
    if (x === null || y === null) return a.trim() === b.trim();
    if (x === 'max' || y === 'max') return x === y;
    // The kernel stores page counts: a written value reads back rounded down to the page.
    return pageAlign(x) === pageAlign(y);
  }
  if (setting === 'cgroup.subtree_control') {
    const ta = new Set(tokens(a));
    const tb = new Set(tokens(b));
    return ta.size === tb.size && [...ta].every((t) => tb.has(t));
  }
  if (setting === 'cgroup.procs' || setting === 'mkdir') {
    return a === b || (setting === 'cgroup.procs' && normCgPath(a) === normCgPath(b));
  }
  return a.trim() === b.trim();
}

function pidOf(change: Change): number {
  const pid = Number(change.to);
  if (!Number.isInteger(pid) || pid <= 0)
    throw new StepError(`cgroup.procs change has a bad PID "${change.to}"`);
  return pid;
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

export class CgroupFsExecutor implements ChangeExecutor {
  constructor(readonly root: string) {}

  /** isolate writes only to the unified hierarchy, and only with the cpuset controller on it. */
  async ready(): Promise<void> {
    const refusal = await writeRefusal(this.root);
    if (refusal) throw new UserError(`cannot apply: ${refusal}; "isolate plan" still works`, 1);
  }

  /** Files of a cgroup an earlier step creates appear with the mkdir; PIDs still have to be moved. */
  createdBy(change: Change, creator: Change): boolean {
    if (creator.setting !== 'mkdir' || change === creator || change.setting === 'cgroup.procs') return false;
    const made = normCgPath(creator.target);
    const t = normCgPath(change.target);
    return t === made || t.startsWith(`${made}/`);
  }

  /** Refusals the kernel would otherwise turn into a half-made change or an OOM kill. */
  async preflight(steps: PreflightStep[], opts: PreflightOptions): Promise<void> {
    for (const { index, change: c, live, done } of steps) {
      if (!isKnownSetting(c.setting)) {
        throw new UserError(`step ${index + 1}: unknown cgroupfs setting "${c.setting}" for ${c.target}`, 1);
      }
      if (c.target.split('/').includes('..')) {
        throw new UserError(`step ${index + 1}: cgroup path "${c.target}" must not contain ".."`, 1);
      }
      if (done) continue;
      if (
        (c.setting === 'cpuset.cpus' || c.setting === 'cpuset.mems') &&
        c.to.trim() === '' &&
        live?.trim()
      ) {
        const events = await readTrim(path.join(this.dir(c.target), 'cgroup.events'));
        if (events && /^populated 1$/m.test(events)) {
          throw new UserError(
            `refusing step ${index + 1}: emptying ${c.target} ${c.setting} ("${live}") while the cgroup has processes is refused by the kernel (ENOSPC) and would leave them without ${c.setting === 'cpuset.cpus' ? 'CPUs' : 'memory nodes'}; widen it instead`,
            1,
          );
        }
      }
      if (c.setting === 'memory.max' && !opts.force) {
        const limit = parseBytes(c.to);
        const dir = this.dir(c.target);
        const current = (await isDir(dir)) ? await readTrim(path.join(dir, 'memory.current')) : null;
        const usage = current === null ? null : Number(current);
        if (typeof limit === 'number' && usage !== null && Number.isFinite(usage) && limit < usage) {
          throw new UserError(
            `refusing to set ${c.target} memory.max to ${formatBytes(limit)} (${limit} bytes): the cgroup uses ${formatBytes(usage)} (${usage} bytes) now (memory.current); the kernel would reclaim and may OOM-kill its processes; raise the limit in the policy or pass --force`,
            1,
          );
        }
      }
    }
  }

  dir(target: string): string {
    return cgroupDir(this.root, normCgPath(target));
  }
  file(change: Change): string {
    return path.join(this.dir(change.target), change.setting);
  }

  /**
   * The live value before a write (journaled as what undo restores): null only when the file or
   * directory does not exist; a failed read throws, so the step fails before its write.
   */
  async read(change: Change): Promise<string | null> {
    switch (change.setting) {
      case 'mkdir':
        return isDirLiveSync(this.dir(change.target)) ? 'present' : null;
      case 'cgroup.procs': {
        const cg = procCgroup(path.join(this.root, 'proc', String(pidOf(change)), 'cgroup'));
        return cg === null ? null : parseProcCgroup(cg);
      }
      default: {
        const text = readLiveSync(this.file(change));
        if (!IO.has(change.setting) || text === null) return text;
        return ioLineOf(change.setting as IoFile, text, ioDeviceOf(change.to));
      }
    }
  }

  satisfied(change: Change, live: string | null): boolean {
    if (change.setting === 'cgroup.subtree_control') {
      const have = new Set(tokens(live));
      return live !== null && tokens(change.to).every((t) => have.has(t));
    }
    if (change.setting === 'cgroup.procs')
      return live !== null && normCgPath(live) === normCgPath(change.target);
    if (change.setting === 'mkdir') return live === 'present';
    if (change.setting === 'cpuset.cpus.partition') return live !== null && live.trim() === change.to.trim();
    if (IO.has(change.setting)) return ioSatisfies(change.setting as IoFile, live, change.to);
    return sameValue(change.setting, live, change.to);
  }

  same(change: Change, a: string | null, b: string | null): boolean {
    return sameValue(change.setting, a, b);
  }

  /**
   * One write(2) of `value` to `file` through the one writer's kernel-file write (which refuses a link,
   * a FIFO or a device at the name); errors become StepError with the errno's meaning.
   */
  async write(file: string, value: string, change: Change, what: string): Promise<void> {
    try {
      // An empty value is written as "\n" (the kernel strips it: the same empty list): Node's
      // FileHandle.write returns at once for a zero-length buffer without calling write(2), so an
      // undo to "" silently left the old list in place (seen on kernel 6.1: /hadoop-yarn kept
      // 0-1,4-7 after rollback, with no error and no ENOSPC, which the real write gets).
      await writeKernelFile(file, Buffer.from(value === '' ? '\n' : value));
    } catch (err) {
      if (err instanceof WriteRefused) throw new StepError(`${what}: ${err.message}`);
      const code = errCode(err);
      throw new StepError(
        `${what}: writing "${value}" to ${file} failed: ${code ?? String(err)} (${errnoMeaning(change.setting, code)})`,
        code,
      );
    }
  }

  async apply(change: Change, previous: string | null): Promise<WriteResult> {
    const what = changeSubject(change);
    switch (change.setting) {
      case 'mkdir': {
        try {
          await mkdir(this.dir(change.target));
        } catch (err) {
          const code = errCode(err);
          if (code !== 'EEXIST') {
            throw new StepError(
              `${what} failed: ${code} (${errnoMeaning('mkdir', code)}${code === 'ENOENT' ? '; the parent cgroup is missing' : ''})`,
              code,
            );
          }
        }
        if (!(await isDir(this.dir(change.target))))
          throw new StepError(`${what}: directory not present after mkdir`);
        return {};
      }
      case 'cgroup.subtree_control': {
        const have = new Set(tokens(previous));
        for (const t of tokens(change.to)) {
          if (!have.has(t)) await this.write(this.file(change), `+${t}`, change, `${what} +${t}`);
        }
        const now = await readTrim(this.file(change));
        if (!this.satisfied(change, now)) {
          throw new StepError(`${what}: read back "${now ?? ''}", expected it to include "${change.to}"`);
        }
        return {};
      }
      case 'cgroup.procs': {
        const pid = pidOf(change);
        try {
          await this.write(path.join(this.dir(change.target), 'cgroup.procs'), String(pid), change, what);
        } catch (err) {
          if (err instanceof StepError && err.code === 'ESRCH') return { skipped: `PID ${pid} exited` };
          throw err;
        }
        const now = await this.read(change);
        if (now === null) return { skipped: `PID ${pid} exited` };
        if (!this.satisfied(change, now)) {
          throw new StepError(`${what}: PID ${pid} is in ${now} after the move, expected ${change.target}`);
        }
        return {};
      }
      default: {
        if (!PLAIN.has(change.setting) && !IO.has(change.setting))
          throw new StepError(`${what}: unsupported cgroupfs setting`);
        if (!(await isDir(this.dir(change.target)))) {
          throw new StepError(
            `${what} failed: ENOENT (the cgroup ${change.target} does not exist; removed meanwhile?)`,
            'ENOENT',
          );
        }
        await this.settle(this.file(change));
        if (change.setting === 'cpuset.cpus.partition' && previous?.includes('invalid')) {
          // An invalid partition is still a root to the kernel: writing "root" again changes nothing
          // (6.1), so it is made a member first and becomes a root anew, now that its siblings let go.
          await this.write(this.file(change), 'member', change, `${what} (reset)`);
        }
        await this.write(this.file(change), change.to, change, what);
        await this.verify(change);
        return {};
      }
    }
  }

  /**
   * A controller's files exist only while the parent enables the controller. systemd re-realizes the
   * slice tree asynchronously after a set-property or daemon-reload and may drop and re-add cpuset
   * on the way: give a missing file a moment to come back before writing (and failing) on it.
   */
  private async settle(file: string): Promise<void> {
    for (let i = 0; i < 40 && !(await exists(file)); i++) await new Promise((r) => setTimeout(r, 50));
  }

  /** Read back a plain file (one device's line of an io file); a partition reading `... invalid (reason)` is a failure. */
  async verify(change: Change): Promise<void> {
    const what = changeSubject(change);
    const now = IO.has(change.setting) ? await this.read(change) : await readTrim(this.file(change));
    if (change.setting === 'cpuset.cpus.partition') {
      if (now?.includes('invalid')) {
        throw new StepError(`${what}: the kernel made the partition invalid: "${now}"`);
      }
    }
    if (!this.satisfied(change, now)) {
      throw new StepError(`${what}: read back "${now ?? '(missing)'}" after writing "${change.to}"`);
    }
  }

  /**
   * systemd enables a controller from the root down for a unit's property (AllowedCPUs=) before
   * isolate's own write of it; not process moves: a process may have got where it goes on its own.
   */
  madeByOtherSteps(change: Change): boolean {
    return change.setting === 'cgroup.subtree_control';
  }

  /** Controllers are disabled after every other undo: the cgroups below must have let go of them. */
  undoLast(change: Change): boolean {
    return change.setting === 'cgroup.subtree_control';
  }

  /** The child cgroups (relative to the mount) whose own subtree_control enables `controller`. */
  private usersOf(target: string, controller: string): string[] {
    const dir = this.dir(target);
    const out: string[] = [];
    for (const child of listEntries(dir)?.dirs.sort() ?? []) {
      const text = readTrimSync(path.join(dir, child, 'cgroup.subtree_control'));
      if (tokens(text).includes(controller)) out.push(path.posix.join(normCgPath(target), child));
    }
    return out;
  }

  async undo(change: Change, previous: string | null, ctx: UndoContext): Promise<{ note?: string }> {
    const what = `undo ${changeSubject(change)}`;
    switch (change.setting) {
      case 'mkdir': {
        if (previous === 'present') return {};
        const dir = this.dir(change.target);
        if (!(await isDir(dir))) return {};
        await this.evacuate(change.target, ctx);
        try {
          await rmdir(dir);
        } catch (err) {
          const code = errCode(err);
          if (code === 'ENOENT') return {};
          throw new StepError(`${what}: rmdir ${dir} failed: ${code} (${errnoMeaning('rmdir', code)})`, code);
        }
        return {};
      }
      case 'cgroup.subtree_control': {
        const had = new Set(tokens(previous));
        const now = new Set(tokens(await readTrim(this.file(change))));
        const kept: string[] = [];
        for (const t of tokens(change.to).reverse()) {
          if (had.has(t) || !now.has(t)) continue;
          try {
            await this.write(this.file(change), `-${t}`, change, `${what} -${t}`);
          } catch (err) {
            // EBUSY: a child still enables the controller for its own children. Undone last (undoLast),
            // after every write of isolate's and every systemd property, what is left is not isolate's:
            // systemd keeps a controller it enabled for a property in a slice, a delegated unit its own.
            const users =
              err instanceof StepError && err.code === 'EBUSY' ? this.usersOf(change.target, t) : [];
            if (users.length === 0) throw err;
            kept.push(
              `${change.target} keeps ${t} enabled: ${users.join(', ')} still enable${users.length === 1 ? 's' : ''} it for the cgroups below (not isolate's to change; systemd does not disable a controller it enabled for a unit property); those cgroups' ${t} files stay, holding every online CPU and memory node`,
            );
          }
        }
        return kept.length > 0 ? { note: kept.join('; ') } : {};
      }
      case 'cgroup.procs': {
        if (previous === null) return {};
        const pid = pidOf(change);
        const live = await this.read(change);
        if (live === null) return { note: `PID ${pid} exited` };
        if (normCgPath(live) === normCgPath(previous)) return {};
        // A PID handed out again since the move is another process: it stays where it is.
        const other = notTheMovedTask(this.root, change);
        if (other) return { note: other };
        try {
          await this.write(path.join(this.dir(previous), 'cgroup.procs'), String(pid), change, what);
        } catch (err) {
          if (err instanceof StepError && err.code === 'ESRCH') return { note: `PID ${pid} exited` };
          throw err;
        }
        return {};
      }
      default: {
        if (previous === null) return {}; // file did not exist: the cgroup was created by us (rmdir undoes it)
        const file = this.file(change);
        if (!(await isDir(this.dir(change.target)))) return { note: `${change.target} no longer exists` };
        let value = previous;
        if (change.setting === 'cpuset.cpus.partition') value = previous.split(/\s+/)[0] ?? 'member';
        // An io file's previous value is its device's line (the clearing value when it had none).
        const live = IO.has(change.setting) ? await this.read(change) : await readTrim(file);
        if (live !== null && this.same(change, live, value) && change.setting !== 'cpuset.cpus.partition')
          return {};
        if (change.setting === 'cpuset.cpus.partition' && live === value) return {};
        try {
          await this.write(file, value, change, what);
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
            const inherited = await readTrim(path.join(this.dir(parent), eff));
            if (inherited) {
              await this.write(file, inherited, change, what);
              return {
                note: `${change.target} ${change.setting} could not be emptied while the cgroup has processes; set to the parent's effective "${inherited}" (what the empty value inherits)`,
              };
            }
          }
          throw err;
        }
        return {};
      }
    }
  }

  /** Before removing a cgroup we created, move any processes left in it (forked since) back out. */
  private async evacuate(target: string, ctx: UndoContext): Promise<void> {
    const dir = this.dir(target);
    const procs = await readTrim(path.join(dir, 'cgroup.procs'));
    if (!procs) return;
    const home = movedFrom(ctx).get(normCgPath(target)) ?? path.posix.dirname(normCgPath(target));
    for (const pid of procs.split('\n').filter(Boolean)) {
      try {
        await this.write(
          path.join(this.dir(home), 'cgroup.procs'),
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
