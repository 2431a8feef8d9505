// The cgroupfs backend: reads, writes, verifies and undoes one Change on the cgroup2 filesystem.
// The settings and their sameness are in settings.ts, the undo of each kind in cgroupfs-undo.ts.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
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
import { type IoFile, ioDeviceOf, ioLineOf, ioSatisfies } from '../model/io.js';
import type { Change } from '../model/plan.js';
import { formatBytes, parseBytes } from '../model/units.js';
import { isDirLiveSync, readLiveSync } from '../sys/read.js';
import { WriteRefused, writeKernelFile } from '../sys/write.js';
import { undoCgroupChange } from './cgroupfs-undo.js';
import { errCode, errnoMeaning } from './errno.js';
import { cgroupDir, exists, isDir, normCgPath, parseProcCgroup, readTrim } from './fsutil.js';
import { writeRefusal } from './observe.js';
import { pidOf, procCgroup } from './pid-cgroup.js';
import { IO, isKnownSetting, PLAIN, sameValue, tokens } from './settings.js';

export { sameValue } from './settings.js';

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

  async undo(change: Change, previous: string | null, ctx: UndoContext): Promise<{ note?: string }> {
    return undoCgroupChange(this, change, previous, ctx);
  }
}
