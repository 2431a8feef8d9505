// One vendor call at a time per *host*, not only per process: `raid check` from monitoring and
// `isolate apply` may run at the same moment, and these tools deadlock each other (raid-cli.md §8.6).
// The lock itself is src/sys/lock.ts (atomic, stale-holder takeover, PID reuse detected).
import { UserError } from '../model/errors.js';
import { acquireLock, LockPathError } from '../sys/lock.js';

/** The host's lock directory; never a temp directory another user could pre-create the lock in. */
export const DEFAULT_RAID_LOCK = '/run/lock/isolate-raid.lock';

export function lockPath(): string {
  return process.env.ISOLATE_RAID_LOCK || DEFAULT_RAID_LOCK;
}

/**
 * Take the lock, waiting up to `waitMs`. Returns a release function, or who holds it on timeout
 * ("held by PID 123 (isolate raid check) since ...").
 */
export async function acquireHostLock(waitMs: number): Promise<(() => Promise<void>) | { heldBy: string }> {
  const path = lockPath();
  let attempt: Awaited<ReturnType<typeof acquireLock>>;
  try {
    // The lock lives in a directory the host provides (/run/lock); isolate does not create one.
    attempt = await acquireLock(path, { command: commandLine(), waitMs, pollMs: 50, createDir: false });
  } catch (err) {
    if (err instanceof LockPathError) throw lockError(path, err.reason);
    throw lockError(
      path,
      `cannot create it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    );
  }
  if (!attempt.acquired) return { heldBy: attempt.description };
  return () => attempt.lock.release();
}

function lockError(path: string, why: string): UserError {
  return new UserError(
    `RAID lock ${path}: ${why}; point ISOLATE_RAID_LOCK at a file in an existing directory only root can write (default ${DEFAULT_RAID_LOCK})`,
  );
}

function commandLine(): string {
  const args = process.argv.slice(2).filter((a) => !a.startsWith('/'));
  return ['isolate', ...args.slice(0, 3)].join(' ');
}
