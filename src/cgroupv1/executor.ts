// The cgroup v1 backend: reads, writes, verifies and undoes one Change on a v1 hierarchy
// (`change.hierarchy`: `cpuset`, `memory`, `cpu,cpuacct`) under /sys/fs/cgroup.
import { mkdir, rmdir } from 'node:fs/promises';
import path from 'node:path';
import {
  type ChangeExecutor,
  type PreflightStep,
  StepError,
  type UndoContext,
  type WriteResult,
} from '../apply/executor.js';
import { CgroupFsExecutor } from '../cgroup/cgroupfs.js';
import { procCgroup } from '../cgroup/pid-cgroup.js';
import { errCode, errnoMeaning } from '../cgroup/errno.js';
import { cgroupMount, isDir, normCgPath, readTrim } from '../cgroup/fsutil.js';
import { detectCgroupLayout } from '../cgroup/layout.js';
import { notTheMovedTask } from '../cgroup/task-start.js';
import { UNIFIED_PARAM } from '../model/observed.js';
import { sameCpuList } from '../model/cpuset.js';
import { changeSubject } from '../model/describe.js';
import { UserError } from '../model/errors.js';
import type { Change } from '../model/plan.js';
import { parseV1ProcCgroup } from './observe.js';
import { isDirLiveSync, readLiveSync } from '../sys/read.js';
import { BLKIO_FILES, type BlkioFile, ioDeviceOf, ioLineOf, ioSatisfies, sameIoValue } from '../model/io.js';

const CPU_LISTS = new Set(['cpuset.cpus', 'cpuset.mems']);
const BYTES = new Set(['memory.limit_in_bytes', 'memory.soft_limit_in_bytes', 'memory.memsw.limit_in_bytes']);
const PLAIN = new Set([
  ...CPU_LISTS,
  ...BYTES,
  'cpuset.cpu_exclusive',
  'cpuset.mem_exclusive',
  'cpuset.memory_migrate',
  'cpu.shares',
]);
const MOVES = new Set(['cgroup.procs', 'tasks']);
/** blkio per-device files: a change carries one device's line (model/io.ts). */
const BLKIO = new Set<string>(BLKIO_FILES);
/** v1 reads "no limit" back as PAGE_COUNTER_MAX pages (9223372036854771712 on x86-64). */
const UNLIMITED = 2 ** 62;

function bytes(v: string): number | 'max' | null {
  if (!/^-?\d+$/.test(v.trim())) return null;
  const n = Number(v);
  return n < 0 || n >= UNLIMITED ? 'max' : Math.floor(n / 4096);
}

export function sameV1Value(setting: string, a: string | null, b: string | null): boolean {
  if (a === null || b === null) return a === b;
  if (BLKIO.has(setting)) return sameIoValue(setting as BlkioFile, a, b);
  if (CPU_LISTS.has(setting)) return sameCpuList(a, b);
  if (BYTES.has(setting)) {
    const x = bytes(a);
    const y = bytes(b);
    return x !== null && x === y;
  }
  if (MOVES.has(setting)) return normCgPath(a) === normCgPath(b);
  return a.trim() === b.trim();
}

function idOf(change: Change): number {
  const id = Number(change.to);
  if (!Number.isInteger(id) || id <= 0)
    throw new StepError(`${change.setting} change has a bad id "${change.to}"`);
  return id;
}

function hierarchyOf(change: Change): string {
  const h = change.backend === 'cgroupfs' ? change.hierarchy : undefined;
  if (!h) throw new StepError(`${changeSubject(change)}: not a cgroup v1 change (no hierarchy)`);
  return h;
}

export class CgroupV1Executor implements ChangeExecutor {
  /** The v2 executor's single-write(2) helper, for the same errno messages. */
  private readonly writer: CgroupFsExecutor;
  constructor(readonly root: string) {
    this.writer = new CgroupFsExecutor(root);
  }

  /** Writes go to v1 hierarchies only while the host still mounts them (a reboot may have changed it). */
  async ready(): Promise<void> {
    const l = await detectCgroupLayout(this.root);
    if (l.cpuset !== 'v1') {
      throw new UserError(
        `cannot apply cgroup v1 changes: the host's layout is ${l.layout} and the cpuset controller is not on a v1 hierarchy under ${cgroupMount(this.root)} now (rebooted with ${UNIFIED_PARAM}?); run "isolate plan" again`,
        1,
      );
    }
  }

  dir(change: Change, target = change.target): string {
    return path.join(cgroupMount(this.root), hierarchyOf(change), normCgPath(target));
  }

  createdBy(change: Change, creator: Change): boolean {
    if (creator.setting !== 'mkdir' || change === creator || MOVES.has(change.setting)) return false;
    if (
      creator.backend !== 'cgroupfs' ||
      change.backend !== 'cgroupfs' ||
      creator.hierarchy !== change.hierarchy
    )
      return false;
    const made = normCgPath(creator.target);
    const t = normCgPath(change.target);
    return t === made || t.startsWith(`${made}/`);
  }

  async preflight(steps: PreflightStep[]): Promise<void> {
    for (const { index, change: c } of steps) {
      if (!PLAIN.has(c.setting) && !BLKIO.has(c.setting) && !MOVES.has(c.setting) && c.setting !== 'mkdir') {
        throw new UserError(
          `step ${index + 1}: "${c.setting}" is not a cgroup v1 setting isolate writes (${c.target})`,
          1,
        );
      }
      if (c.target.split('/').includes('..') || hierarchyOf(c).includes('/')) {
        throw new UserError(
          `step ${index + 1}: cgroup v1 target "${c.target}" must not leave its hierarchy`,
          1,
        );
      }
      if (!(await isDir(path.join(cgroupMount(this.root), hierarchyOf(c))))) {
        throw new UserError(
          `step ${index + 1}: the cgroup v1 hierarchy ${path.join(cgroupMount(this.root), hierarchyOf(c))} is not mounted; run "isolate plan" again`,
          1,
        );
      }
    }
  }

  /** The cgroup of a process or thread in this change's hierarchy, from `/proc/<id>/cgroup`. */
  private async memberOf(change: Change, id: number): Promise<string | null> {
    const text = procCgroup(path.join(this.root, 'proc', String(id), 'cgroup'));
    if (text === null) return null;
    const first = hierarchyOf(change).split(',')[0]!;
    return parseV1ProcCgroup(text).get(first) ?? null;
  }

  /** The live value before a write: null only when absent; a failed read throws (see CgroupFsExecutor.read). */
  async read(change: Change): Promise<string | null> {
    if (change.setting === 'mkdir') return isDirLiveSync(this.dir(change)) ? 'present' : null;
    if (MOVES.has(change.setting)) return this.memberOf(change, idOf(change));
    const text = readLiveSync(path.join(this.dir(change), change.setting));
    if (!BLKIO.has(change.setting) || text === null) return text;
    return ioLineOf(change.setting as BlkioFile, text, ioDeviceOf(change.to));
  }

  satisfied(change: Change, live: string | null): boolean {
    if (change.setting === 'mkdir') return live === 'present';
    if (MOVES.has(change.setting)) return live !== null && normCgPath(live) === normCgPath(change.target);
    if (BLKIO.has(change.setting)) return ioSatisfies(change.setting as BlkioFile, live, change.to);
    return sameV1Value(change.setting, live, change.to);
  }

  same(change: Change, a: string | null, b: string | null): boolean {
    return change.setting === 'mkdir' ? a === b : sameV1Value(change.setting, a, b);
  }

  async apply(change: Change): Promise<WriteResult> {
    const what = changeSubject(change);
    if (change.setting === 'mkdir') {
      try {
        await mkdir(this.dir(change));
      } catch (err) {
        const code = errCode(err);
        if (code !== 'EEXIST')
          throw new StepError(`${what} failed: ${code} (${errnoMeaning('mkdir', code)})`, code);
      }
      if (!(await isDir(this.dir(change)))) throw new StepError(`${what}: directory not present after mkdir`);
      return {};
    }
    if (MOVES.has(change.setting)) {
      const id = idOf(change);
      try {
        await this.writer.write(path.join(this.dir(change), change.setting), String(id), change, what);
      } catch (err) {
        if (err instanceof StepError && err.code === 'ESRCH') return { skipped: `${id} exited` };
        throw err;
      }
      const now = await this.read(change);
      if (now === null) return { skipped: `${id} exited` };
      if (!this.satisfied(change, now)) throw new StepError(`${what}: ${id} is in ${now} after the move`);
      return {};
    }
    if (!PLAIN.has(change.setting) && !BLKIO.has(change.setting))
      throw new StepError(`${what}: unsupported cgroup v1 setting`);
    if (!(await isDir(this.dir(change)))) {
      throw new StepError(`${what} failed: ENOENT (the cgroup does not exist; removed meanwhile?)`, 'ENOENT');
    }
    const file = path.join(this.dir(change), change.setting);
    await this.writer.write(file, change.to, change, what);
    const now = BLKIO.has(change.setting) ? await this.read(change) : await readTrim(file);
    if (!this.satisfied(change, now))
      throw new StepError(`${what}: read back "${now ?? '(missing)'}" after writing "${change.to}"`);
    return {};
  }

  async undo(change: Change, previous: string | null, ctx: UndoContext): Promise<{ note?: string }> {
    const what = `undo ${changeSubject(change)}`;
    const created = ctx.entries.some(
      (e) =>
        e.change.setting === 'mkdir' &&
        e.previous !== 'present' &&
        e.change.backend === 'cgroupfs' &&
        e.change.hierarchy === hierarchyOf(change) &&
        normCgPath(e.change.target) === normCgPath(change.target),
    );
    if (change.setting === 'mkdir') {
      if (previous === 'present' || !(await isDir(this.dir(change)))) return {};
      await this.evacuate(change, ctx);
      try {
        await rmdir(this.dir(change));
      } catch (err) {
        const code = errCode(err);
        if (code === 'ENOENT') return {};
        throw new StepError(`${what}: rmdir failed: ${code} (${errnoMeaning('rmdir', code)})`, code);
      }
      return {};
    }
    if (MOVES.has(change.setting)) {
      if (previous === null) return {};
      const id = idOf(change);
      const live = await this.read(change);
      if (live === null) return { note: `${id} exited` };
      if (normCgPath(live) === normCgPath(previous)) return {};
      // An ID handed out again since the move is another task: it stays where it is.
      const other = notTheMovedTask(this.root, change);
      if (other) return { note: other };
      try {
        await this.writer.write(
          path.join(this.dir(change, previous), change.setting),
          String(id),
          change,
          what,
        );
      } catch (err) {
        if (err instanceof StepError && err.code === 'ESRCH') return { note: `${id} exited` };
        throw err;
      }
      return {};
    }
    // cpu_exclusive is dropped even on a cpuset we created: a sibling's CPUs are restored before the
    // rmdir, and v1 refuses them (EINVAL) while the flag stands.
    const flag = change.setting === 'cpuset.cpu_exclusive' || change.setting === 'cpuset.mem_exclusive';
    if (flag) previous ??= '0';
    // Other files of a cpuset we created go with it (an emptied cpus list would be refused while
    // late children still sit in it).
    if (previous === null || (created && !flag)) return {};
    if (!(await isDir(this.dir(change)))) return { note: `${change.target} no longer exists` };
    const file = path.join(this.dir(change), change.setting);
    const live = BLKIO.has(change.setting) ? await this.read(change) : await readTrim(file);
    if (live !== null && sameV1Value(change.setting, live, previous)) return {};
    await this.writer.write(file, previous, change, what);
    return {};
  }

  /** Move what is left in a cpuset we created (children forked since) back where it came from. */
  private async evacuate(change: Change, ctx: UndoContext): Promise<void> {
    const procs = await readTrim(path.join(this.dir(change), 'cgroup.procs'));
    if (!procs) return;
    const from = ctx.entries.find(
      (e) =>
        e.change.setting === 'cgroup.procs' &&
        e.previous &&
        e.change.backend === 'cgroupfs' &&
        e.change.hierarchy === hierarchyOf(change) &&
        normCgPath(e.change.target) === normCgPath(change.target),
    )?.previous;
    const home = from ?? path.posix.dirname(normCgPath(change.target));
    for (const pid of procs.split('\n').filter(Boolean)) {
      try {
        await this.writer.write(
          path.join(this.dir(change, home), 'cgroup.procs'),
          pid,
          change,
          `move PID ${pid} out of ${change.target}`,
        );
      } catch (err) {
        if (!(err instanceof StepError && err.code === 'ESRCH')) throw err;
      }
    }
  }
}
