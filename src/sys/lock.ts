// A host-wide mutual-exclusion lock on a file path, for processes that may be killed at any moment
// (a hung vendor tool, an apply interrupted by SIGKILL). Exactly one live process holds it, also
// while several processes race to take over a lock whose holder died.
//
// How:
// - The lock file appears atomically with its full content: the record is written to a private temp
//   file first and hard-linked to the lock path (link(2) fails with EEXIST if it exists), so nobody
//   ever reads a half-written holder.
// - The holder is its PID plus the process start time (field 22 of /proc/<pid>/stat), so a PID that
//   the kernel reused for another process does not keep a dead holder's lock alive.
// - Only the holder removes a live lock. A stale lock (holder dead) is removed by whoever first
//   creates a "break" file named after a hash of the stale content; that winner re-reads the lock and
//   removes it only if it still holds that same stale content. Nobody else may remove that content,
//   so the re-check cannot be outdated by the time of the unlink. A breaker killed half-way leaves a
//   stale break file, which is broken the same way (one level deeper) — every level is named after
//   content with a random token, so no name is ever reused.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { link, lstat, mkdir, readFile, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { procStatFields } from './read.js';
import { describeUntrusted, trustedOwners, untrustedPath } from './trust.js';
import { writeNewFile } from './write.js';

export interface LockHolder {
  pid: number;
  /** Start time of the process in clock ticks since boot; null when /proc could not be read. */
  start: string | null;
  /** What the holder is doing, for "held by PID N (command)". */
  command: string;
  since: string;
  /** Random per acquisition: two records are never equal, even for the same PID. */
  token: string;
}

export interface HeldLock {
  readonly path: string;
  readonly holder: LockHolder;
  /** Remove the lock if it is still ours. Safe to call twice. */
  release(): Promise<void>;
}

export type LockAttempt =
  | { acquired: true; lock: HeldLock }
  | { acquired: false; holder: LockHolder | null; description: string };

export interface AcquireOptions {
  /** Shown to whoever finds the lock busy, e.g. `isolate apply`. */
  command: string;
  /** How long to wait for a live holder; 0 = one try. */
  waitMs?: number;
  /** Poll interval while waiting (jittered). Default 15 ms. */
  pollMs?: number;
  /** Create the lock's directory when it is missing (default). False: the host provides it (/run/lock). */
  createDir?: boolean;
}

/** The lock path itself is unusable: no directory to create it in, or something other than a file there. */
export class LockPathError extends Error {
  override name = 'LockPathError';
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path}: ${reason}`);
  }
}

/** A lock file whose content cannot be parsed is only treated as stale once it is this old. */
const GARBAGE_GRACE_MS = 10_000;

/** Start time of a process from this machine's /proc, or null. */
export function processStart(pid: number): string | null {
  return procStatFields('/proc', pid)?.[19] ?? null;
}

/** Is the process that wrote `h` still running (and not a different process with its PID)? */
export function holderAlive(h: Pick<LockHolder, 'pid' | 'start'>): boolean {
  if (!Number.isInteger(h.pid) || h.pid <= 0) return false;
  try {
    process.kill(h.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (h.start === null) return true;
  const now = processStart(h.pid);
  // /proc unreadable (hidepid) but the PID exists: cannot tell reuse apart, so assume alive.
  return now === null || now === h.start;
}

export function describeHolder(h: LockHolder | null, path: string): string {
  if (!h) return `held by an unknown process (lock ${path})`;
  return `held by PID ${h.pid} (${h.command}) since ${h.since} (lock ${path})`;
}

/**
 * Take the lock at `path`, waiting up to `waitMs` for a live holder. Stale locks are taken over
 * atomically. The directory is created if needed.
 */
export async function acquireLock(path: string, opts: AcquireOptions): Promise<LockAttempt> {
  if (opts.createDir === false) {
    if (!existsSync(dirname(path))) throw new LockPathError(path, 'cannot create it (ENOENT)');
  } else {
    await mkdir(dirname(path), { recursive: true });
  }
  // A lock another user could create or replace would let them stall or steer a root process.
  const dir = untrustedPath(dirname(path), { sharedDirectory: true });
  if (dir) throw new LockPathError(path, `its directory is not root's alone: ${describeUntrusted(dir)}`);
  // Only a regular file is a lock someone holds: a directory or device there is a mistake.
  const st = await lstat(path).catch(() => null);
  if (st && !st.isFile()) throw new LockPathError(path, 'it exists and is not a regular file');
  if (st && !trustedOwners().includes(st.uid)) {
    throw new LockPathError(
      path,
      `it exists and is owned by uid ${st.uid}, not root: another user made it; remove it`,
    );
  }
  const me: LockHolder = {
    pid: process.pid,
    start: processStart(process.pid),
    command: opts.command,
    since: new Date().toISOString(),
    token: randomBytes(8).toString('hex'),
  };
  const body = `${JSON.stringify(me)}\n`;
  const deadline = Date.now() + (opts.waitMs ?? 0);
  const poll = opts.pollMs ?? 15;
  for (;;) {
    if (await createWith(path, body, me)) return { acquired: true, lock: held(path, me, body) };
    const seen = await readLock(path);
    if (seen === null) continue; // released between our create and our read
    if (await isStale(path, seen)) {
      await breakStale(path, seen.raw, me);
      continue;
    }
    if (Date.now() >= deadline) {
      return { acquired: false, holder: seen.holder, description: describeHolder(seen.holder, path) };
    }
    await sleep(poll / 2 + Math.random() * poll);
  }
}

function held(path: string, me: LockHolder, body: string): HeldLock {
  let released = false;
  return {
    path,
    holder: me,
    async release() {
      if (released) return;
      released = true;
      // Only ever remove our own record: nobody removes a live holder's lock, so this is ours
      // unless the file was deleted by hand.
      if ((await readFile(path, 'utf8').catch(() => null)) === body) await unlink(path).catch(() => {});
    },
  };
}

/** Create `path` holding `body`, atomically and only if it does not exist. */
async function createWith(path: string, body: string, me: LockHolder): Promise<boolean> {
  const tmp = tempName(path, me);
  await writeNewFile(tmp, body, 0o644);
  try {
    await link(tmp, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    await unlink(tmp).catch(() => {});
  }
}

function tempName(path: string, h: Pick<LockHolder, 'pid' | 'token'>): string {
  return `${path}.${h.pid}.${h.token}.tmp`;
}

interface Seen {
  raw: string;
  holder: LockHolder | null;
}

async function readLock(path: string): Promise<Seen | null> {
  try {
    const raw = await readFile(path, 'utf8');
    return { raw, holder: parseHolder(raw) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Our JSON record; also the bare `<pid>` line earlier isolate versions wrote. */
function parseHolder(raw: string): LockHolder | null {
  const text = raw.trim();
  if (/^\d+$/.test(text)) {
    return { pid: Number(text), start: null, command: 'isolate (older version)', since: '?', token: text };
  }
  try {
    const j = JSON.parse(text) as Partial<LockHolder>;
    if (typeof j.pid !== 'number') return null;
    return {
      pid: j.pid,
      start: typeof j.start === 'string' ? j.start : null,
      command: typeof j.command === 'string' ? j.command : 'isolate',
      since: typeof j.since === 'string' ? j.since : '?',
      token: typeof j.token === 'string' ? j.token : '',
    };
  } catch {
    return null;
  }
}

async function isStale(path: string, seen: Seen): Promise<boolean> {
  if (seen.holder) return !holderAlive(seen.holder);
  // Unparseable: a writer from another program, or hand-made. Give a live writer time to finish.
  const st = await stat(path).catch(() => null);
  return st !== null && Date.now() - st.mtimeMs > GARBAGE_GRACE_MS;
}

/**
 * Remove `path` if it still holds `staleRaw`. Only the process that creates the break file for this
 * content may do so, and nobody else ever removes that content, so its re-check stays true until its
 * unlink. Returns when the caller should simply retry.
 */
async function breakStale(path: string, staleRaw: string, me: LockHolder): Promise<void> {
  const guard = `${path}.break-${createHash('sha256').update(staleRaw).digest('hex').slice(0, 16)}`;
  const body = `${JSON.stringify(me)}\n`;
  if (await createWith(guard, body, me)) {
    try {
      if ((await readFile(path, 'utf8').catch(() => null)) === staleRaw) {
        await unlink(path).catch(() => {});
        const dead = parseHolder(staleRaw);
        if (dead) await unlink(tempName(path, dead)).catch(() => {});
      }
    } finally {
      await unlink(guard).catch(() => {});
    }
    return;
  }
  const other = await readLock(guard);
  // A breaker is at work (or just finished): retry the lock itself.
  if (other === null || !(await isStale(guard, other))) {
    await sleep(1 + Math.random() * 4);
    return;
  }
  // The breaker died half-way: break its break file the same way, then retry from the top.
  await breakStale(guard, other.raw, me);
}
