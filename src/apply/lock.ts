// One apply/rollback at a time: `<root>/run/isolate.lock`, through the host lock every isolate
// process shares (src/sys/lock.ts: atomic creation and takeover, holder named by PID + start time).
import path from 'node:path';
import { UserError } from '../model/errors.js';
import { acquireLock as acquireHostLock, LockPathError } from '../sys/lock.js';

export function lockPath(root: string): string {
  return path.join(root, 'run/isolate.lock');
}

export interface Lock {
  release(): Promise<void>;
}

/** Take the lock or fail at once naming the holder. Stale locks (dead holder) are taken over. */
export async function acquireLock(root: string, command: string): Promise<Lock> {
  const file = lockPath(root);
  let attempt: Awaited<ReturnType<typeof acquireHostLock>>;
  try {
    attempt = await acquireHostLock(file, { command, waitMs: 0 });
  } catch (err) {
    if (err instanceof LockPathError)
      throw new UserError(`the lock ${file}: ${err.reason}; remove it or check --root`, 1);
    const code = (err as NodeJS.ErrnoException).code;
    throw new UserError(
      `cannot take the lock ${file} (${code ?? (err as Error).message}); is ${path.dirname(file)} writable?`,
      1,
    );
  }
  if (attempt.acquired) return attempt.lock;
  const h = attempt.holder;
  throw new UserError(
    h
      ? `another isolate ${h.command || 'apply'} is running (PID ${h.pid}, since ${h.since}; lock ${file}); wait for it to finish, or if PID ${h.pid} is not isolate, remove the lock file`
      : `the lock ${file} is ${attempt.description}; if no isolate is running, remove it`,
    1,
  );
}
