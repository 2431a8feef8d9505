// Runs vendor tools: argv arrays only (never a shell), a hard timeout per call, and one call at a
// time per host — these tools hang and deadlock each other when run in parallel (raid-cli.md §8.6:
// MegaCli froze a host, arcconf processes deadlocked, hpacucli takes a global kernel lock).
import { mkdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { procStatFields } from '../sys/read.js';
import { describeUntrusted, judgePath, untrustedPath } from '../sys/trust.js';
import { acquireHostLock } from './hostlock.js';

export interface ToolResult {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  timedOut: boolean;
}

export const DEFAULT_TIMEOUT_MS = 60_000;

export interface RunOptions {
  timeoutMs?: number;
  /**
   * Working directory of the tool. Vendor tools drop log files where they run (storcli.log without
   * `nolog`, arcconf's UcliEvt.log on every call, MegaCli's MegaSAS.log), so they never run in the
   * caller's directory: see vendorWorkDir.
   */
  cwd: string;
}

/**
 * `<root>/run/isolate/vendor`, private to root: where vendor tools run and leave their logs. Refused
 * (ToolCallError) when another user could have made or changed it: a tool writing its logs there as
 * root would follow whatever links they left.
 */
export async function vendorWorkDir(root: string): Promise<string> {
  const dir = join(root, 'run/isolate/vendor');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const bad = untrustedPath(dir);
  if (bad) throw new ToolCallError(`vendor tools' directory refused: ${describeUntrusted(bad)}`, false);
  return dir;
}

/** Thrown for a call that timed out or could not start; callers turn it into a finding or UserError. */
export class ToolCallError extends Error {
  constructor(
    message: string,
    readonly timedOut: boolean,
  ) {
    super(message);
    this.name = 'ToolCallError';
  }
}

let queue: Promise<unknown> = Promise.resolve();

/**
 * A tool whose call timed out. Until that call has finished (its process, and any process it started
 * that holds its output, gone) no second one is started: a tool stuck in the kernel (state D) may
 * never go, and these tools deadlock each other. Once it has, the tool is tried again, after a
 * backoff that doubles with each timeout in a row (HANG_BACKOFF_MS, at most HANG_BACKOFF_MAX_MS).
 */
interface Hung {
  pid: number | undefined;
  /** When the last call timed out, and how many timed out in a row. */
  at: number;
  times: number;
  /** The timed-out call has finished (its process exited and its output closed). */
  finished: boolean;
}
const hung = new Map<string, Hung>();
export const HANG_BACKOFF_MS = 60_000;
export const HANG_BACKOFF_MAX_MS = 3_600_000;
/** How long past its kill a timed-out call may take to finish before it counts as stuck. */
const KILL_GRACE_MS = 5_000;

/** Why a call is not started now, because of an earlier one that timed out; null: it may run. */
function heldBack(bin: string, call: string, now: number): ToolCallError | null {
  const h = hung.get(bin);
  if (!h) return null;
  const since = new Date(h.at).toISOString();
  if (!h.finished) {
    const state = h.pid === undefined ? null : processState(h.pid);
    return new ToolCallError(
      `${call}: not run, the ${basename(bin)} call that timed out at ${since} has not finished${h.pid === undefined ? '' : ` (PID ${h.pid}${state ? `, state ${state}` : ', gone, its output still held by a process it started'})`}; no second one is started while it runs`,
      true,
    );
  }
  const retryAt = h.at + Math.min(HANG_BACKOFF_MAX_MS, HANG_BACKOFF_MS * 2 ** (h.times - 1));
  if (now < retryAt) {
    return new ToolCallError(
      `${call}: not run, ${basename(bin)} timed out ${h.times} time${h.times === 1 ? '' : 's'} in a row (last at ${since}); tried again after ${new Date(retryAt).toISOString()}`,
      true,
    );
  }
  return null;
}

/** A process's state letter from /proc (`D`: uninterruptible sleep, in the kernel); null when gone. */
function processState(pid: number): string | null {
  return procStatFields('/proc', pid)?.[0] ?? null;
}

/** Run `fn` after every earlier vendor call of this process finished. */
function serialized<T>(fn: () => Promise<T>): Promise<T> {
  const next = queue.then(fn, fn);
  queue = next.catch(() => undefined);
  return next;
}

export function describeCall(bin: string, args: readonly string[]): string {
  return [basename(bin), ...args].join(' ');
}

/**
 * Run a vendor tool as isolate's user (root). This is the one place isolate executes anything, so it
 * is where a binary that another user could have written, or that lies in a directory they could
 * change, is refused — whichever way its path was chosen (the vendor list, --tool-path, the
 * environment, a journal).
 */
export async function runTool(bin: string, args: readonly string[], opts: RunOptions): Promise<ToolResult> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const cwd = opts.cwd;
  return serialized(async () => {
    const call = describeCall(bin, args);
    const held = heldBack(bin, call, Date.now());
    if (held) throw held;
    // Another process's call may run for its whole timeout plus the kill delay.
    const lock = await acquireHostLock(timeoutMs + 5_000);
    if (typeof lock !== 'function') {
      throw new ToolCallError(
        `${call}: not run, the host's RAID tool lock is ${lock.heldBy}, busy for over ${Math.round(timeoutMs / 1000)}s`,
        true,
      );
    }
    // A call stuck past its kill keeps the host lock until it finishes: no isolate process starts
    // a second one meanwhile.
    let release: (() => Promise<void>) | null = lock;
    try {
      const real = judgedTool(bin, call);
      const result = await execute(bin, real, args, call, timeoutMs, cwd, (pending) => {
        release = null;
        pending.finally(() => lock());
      });
      hung.delete(bin);
      return result;
    } finally {
      await release?.();
    }
  });
}

/**
 * The tool's real path, judged once the host lock is held: the lock may take a whole call's timeout
 * to come, and a path judged before it could be swapped meanwhile. Every component of the real path
 * is then one no other user can change, so what is executed (that path, not the name) is what was
 * judged.
 */
function judgedTool(bin: string, call: string): string {
  const judged = judgePath(bin);
  if (!judged.ok) {
    throw new ToolCallError(
      `${call}: not run, refusing to execute as root: ${describeUntrusted(judged.untrusted)}`,
      false,
    );
  }
  if (!judged.stat.isFile()) {
    throw new ToolCallError(`${call}: not run, ${judged.real} is not a regular file`, false);
  }
  return judged.real;
}

/** Runs `real`, the judged real path of `bin` (which names the call in the hang bookkeeping). */
async function execute(
  bin: string,
  real: string,
  args: readonly string[],
  call: string,
  timeoutMs: number,
  cwd: string,
  stuck: (pending: Promise<unknown>) => void,
): Promise<ToolResult> {
  // execa is heavy; only RAID commands pay for it.
  const { execa } = await import('execa');
  const sub = execa(real, [...args], {
    // The tool sees the name it was called by (some behave by their argv[0]); the kernel runs `real`.
    argv0: bin,
    reject: false,
    timeout: timeoutMs,
    forceKillAfterDelay: 2_000,
    stdin: 'ignore',
    cwd,
    stripFinalNewline: false,
    maxBuffer: 64 * 1024 * 1024,
    // hpacucli ≥9 stalls scanning SAN LUNs without this (raid-cli.md §8.6, [R21]); C locale keeps labels stable.
    env: { LC_ALL: 'C', INFOMGR_BYPASS_NONSA: '1' },
  });
  const seconds = Math.round(timeoutMs / 1000);
  const timedOut = (finished: boolean) => {
    const times = (hung.get(bin)?.times ?? 0) + 1;
    const h: Hung = { pid: sub.pid, at: Date.now(), times, finished };
    hung.set(bin, h);
    return h;
  };
  // Killed at the timeout (SIGKILL 2 s later); a process in the kernel (state D), or one it started
  // that holds its output, may still not let the call finish: then it is not waited for.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const result = await Promise.race([
    sub,
    new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), timeoutMs + 2_000 + KILL_GRACE_MS);
    }),
  ]).finally(() => clearTimeout(timer));
  if (result === null) {
    const h = timedOut(false);
    const settle = sub.then(
      () => undefined,
      () => undefined,
    );
    void settle.then(() => {
      h.finished = true;
    });
    stuck(settle);
    const state = h.pid === undefined ? null : processState(h.pid);
    throw new ToolCallError(
      `${call} timed out after ${seconds}s and has not finished though killed (PID ${h.pid ?? '?'}${state ? `, state ${state}` : ''}); no second call is started until it has`,
      true,
    );
  }
  if (result.timedOut) {
    timedOut(true);
    throw new ToolCallError(`${call} timed out after ${seconds}s and was killed`, true);
  }
  if (result.failed && result.exitCode === undefined) {
    throw new ToolCallError(`${call} could not run: ${result.shortMessage ?? 'unknown error'}`, false);
  }
  return {
    stdout: String(result.stdout ?? ''),
    stderr: String(result.stderr ?? ''),
    exitCode: result.exitCode ?? null,
    timedOut: false,
  };
}

/** Tests only: forget tools that hung in an earlier test. */
export function resetHungTools(): void {
  hung.clear();
}
