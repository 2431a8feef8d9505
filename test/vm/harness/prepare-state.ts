// Where the background guest preparation (prepare.ts) says it is running, and how a guest waits for it.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { VM_CACHE } from './paths.js';

/** Holds the preparing process's PID while it runs; removed when it ends. */
export const PREPARE_PID_FILE = join(VM_CACHE, 'prepare.pid');
/** Its log: one line a step, with the step's time (kept after the run, for the record). */
export const PREPARE_LOG = join(VM_CACHE, 'prepare.log');

/** The PID of a preparation that is running now, or null (no file, or its process is gone). */
export function runningPreparation(): number | null {
  if (!existsSync(PREPARE_PID_FILE)) return null;
  const pid = Number(readFileSync(PREPARE_PID_FILE, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0 || !isPreparation(pid)) {
    // A preparation killed before its cleanup: nothing to wait for.
    rmSync(PREPARE_PID_FILE, { force: true });
    return null;
  }
  return pid;
}

/** Whether PID is the preparation (a PID reused by another process is not). */
function isPreparation(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('prepare.ts');
  } catch {
    return false;
  }
}

/**
 * Resolves once no preparation runs: the guests then find its caches filled (or build what it could
 * not). Returns how long it waited, in ms.
 */
export async function waitForPreparation(): Promise<number> {
  const t0 = Date.now();
  while (runningPreparation() !== null) await sleep(1000);
  return Date.now() - t0;
}
