// Where the background guest preparation (prepare.ts) says it is running, and how a guest waits for it.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { VM_CACHE } from './paths.js';

/** The preparation's lanes, each its own process (prepare.ts). */
export const PREPARE_LANES = ['guests', 'kernel'] as const;

/** Holds a lane's PID while it runs; removed when it ends. */
export function preparePidFile(lane: PrepareLane): string {
  return join(VM_CACHE, `prepare-${lane}.pid`);
}
/** Its log: one line a step, with the step's time (kept after the run, for the record). */
export const PREPARE_LOG = join(VM_CACHE, 'prepare.log');

/** The PID of a lane that is running now, or null (no file, or its process is gone). */
function runningLane(lane: PrepareLane): number | null {
  const file = preparePidFile(lane);
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, 'utf8').trim());
  // The lane itself asks too (its step calls what a guest calls): it does not wait for itself.
  if (pid === process.pid) return null;
  if (!Number.isInteger(pid) || pid <= 0 || !isPreparation(pid)) {
    // A lane killed before its cleanup: nothing to wait for.
    rmSync(file, { force: true });
    return null;
  }
  return pid;
}

export type PrepareLane = (typeof PREPARE_LANES)[number];

/** Whether any of these lanes of the preparation is running now. */
export function runningPreparation(lanes: readonly PrepareLane[] = PREPARE_LANES): boolean {
  return lanes.some((lane) => runningLane(lane) !== null);
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
export async function waitForPreparation(lanes: readonly PrepareLane[] = PREPARE_LANES): Promise<number> {
  const t0 = Date.now();
  while (runningPreparation(lanes)) await sleep(1000);
  return Date.now() - t0;
}
