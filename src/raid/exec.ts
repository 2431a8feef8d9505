// Runs vendor tools: argv arrays only (never a shell), a hard timeout per call, and one call at a
// time per host — these tools hang and deadlock each other when run in parallel (raid-cli.md §8.6:
// MegaCli froze a host, arcconf processes deadlocked, hpacucli takes a global kernel lock).
import { mkdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { describeUntrusted, untrustedPath } from '../sys/trust.js';
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
/** Tools that hung in this process: further calls are refused instead of piling up more hung processes. */
const hung = new Set<string>();

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
    const untrusted = untrustedPath(bin);
    if (untrusted) {
      throw new ToolCallError(
        `${call}: not run, refusing to execute as root: ${describeUntrusted(untrusted)}`,
        false,
      );
    }
    if (hung.has(bin)) {
      throw new ToolCallError(`${call}: not run, ${basename(bin)} timed out earlier in this run`, true);
    }
    // Another process's call may run for its whole timeout plus the kill delay.
    const lock = await acquireHostLock(timeoutMs + 5_000);
    if (typeof lock !== 'function') {
      throw new ToolCallError(
        `${call}: not run, the host's RAID tool lock is ${lock.heldBy}, busy for over ${Math.round(timeoutMs / 1000)}s`,
        true,
      );
    }
    try {
      return await execute(bin, args, call, timeoutMs, cwd);
    } finally {
      await lock();
    }
  });
}

async function execute(
  bin: string,
  args: readonly string[],
  call: string,
  timeoutMs: number,
  cwd: string,
): Promise<ToolResult> {
  // execa is heavy; only RAID commands pay for it.
  const { execa } = await import('execa');
  const result = await execa(bin, [...args], {
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
  if (result.timedOut) {
    hung.add(bin);
    throw new ToolCallError(`${call} timed out after ${Math.round(timeoutMs / 1000)}s and was killed`, true);
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
