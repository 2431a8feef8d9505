// One vendor call at a time per *host*, not only per process: `raid check` from monitoring and
// `isolate apply` may run at the same moment, and these tools deadlock each other (raid-cli.md §8.6).
// An exclusive lock file holding the owner's pid; a lock whose owner is gone is taken over.
import { existsSync } from 'node:fs';
import { lstat, open, readFile, rm } from 'node:fs/promises';
import { UserError } from '../model/errors.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export function lockPath(): string {
  if (process.env.ISOLATE_RAID_LOCK) return process.env.ISOLATE_RAID_LOCK;
  return join(existsSync('/run/lock') ? '/run/lock' : tmpdir(), 'isolate-raid.lock');
}

/** Take the lock, waiting up to `waitMs`. Returns a release function, or the holder's pid on timeout. */
export async function acquireHostLock(waitMs: number): Promise<(() => Promise<void>) | { heldBy: string }> {
  const path = lockPath();
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const fh = await open(path, 'wx');
      await fh.writeFile(`${process.pid}\n`);
      await fh.close();
      return async () => {
        await rm(path, { force: true });
      };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') throw lockError(path, `cannot create it (${code ?? (err as Error).message})`);
      // Only a regular file is a lock someone holds: a directory or device there is a mistake.
      const st = await lstat(path).catch(() => null);
      if (st && !st.isFile()) throw lockError(path, 'it exists and is not a regular file');
    }
    const holder = (await readFile(path, 'utf8').catch(() => '')).trim();
    if (holder !== '' && !alive(Number(holder))) {
      await rm(path, { force: true });
      continue;
    }
    if (Date.now() >= deadline) return { heldBy: holder || 'unknown' };
    await sleep(50);
  }
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function lockError(path: string, why: string): UserError {
  return new UserError(
    `RAID lock ${path}: ${why}; point ISOLATE_RAID_LOCK at a file in an existing directory (default /run/lock/isolate-raid.lock)`,
  );
}
