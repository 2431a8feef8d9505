// One apply/rollback at a time: `<root>/run/isolate.lock` holds the holder's PID and start time.
import { readFileSync } from 'node:fs';
import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../model/errors.js';

export function lockPath(root: string): string {
  return path.join(root, 'run/isolate.lock');
}

interface LockInfo {
  pid: number;
  /** Process start time (field 22 of /proc/<pid>/stat) to detect PID reuse. */
  start: string | null;
  since: string;
  command: string;
}

/** Start time of a live process in this machine's /proc, or null. */
function procStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return rest[19] ?? null; // field 22 overall; fields after comm start at 3
  } catch {
    return null;
  }
}

function alive(info: LockInfo): boolean {
  try {
    process.kill(info.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const start = procStart(info.pid);
  if (info.start && start && start !== info.start) return false; // PID reused
  return true;
}

export interface Lock {
  release(): Promise<void>;
}

/** Take the lock or fail at once naming the holder. Stale locks (dead holder) are taken over. */
export async function acquireLock(root: string, command: string): Promise<Lock> {
  const file = lockPath(root);
  try {
    await mkdir(path.dirname(file), { recursive: true });
  } catch (err) {
    throw new UserError(
      `cannot create the lock directory ${path.dirname(file)} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); check --root`,
    );
  }
  const info: LockInfo = {
    pid: process.pid,
    start: procStart(process.pid),
    since: new Date().toISOString(),
    command,
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fh = await open(file, 'wx', 0o644);
      try {
        await fh.writeFile(`${JSON.stringify(info)}\n`);
        await fh.sync();
      } finally {
        await fh.close();
      }
      let released = false;
      return {
        async release() {
          if (released) return;
          released = true;
          await unlink(file).catch(() => {});
        },
      };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') {
        throw new UserError(
          `cannot create the lock ${file} (${code ?? (err as Error).message}); check ${path.dirname(file)} under --root`,
        );
      }
    }
    let holder: LockInfo | null = null;
    try {
      holder = JSON.parse(await readFile(file, 'utf8')) as LockInfo;
    } catch {
      holder = null; // torn or empty: the holder died while writing it
    }
    if (holder && typeof holder.pid === 'number' && alive(holder)) {
      throw new UserError(
        `another isolate ${holder.command ?? 'apply'} is running (PID ${holder.pid}, since ${holder.since}; lock ${file}); wait for it to finish, or if PID ${holder.pid} is not isolate, remove the lock file`,
        1,
      );
    }
    await unlink(file).catch(() => {}); // stale
  }
  throw new UserError(`could not take the lock ${file}; remove it if no isolate is running`, 1);
}
