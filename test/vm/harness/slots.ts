/**
 * How many qemu guests run at once across the suite's processes: ISOLATE_VM_GUESTS, one by default.
 *
 * With two, each guest is one host thread (TCG `thread=single`, harness/run.ts says why), so two fill
 * this 2-core machine; a third would only slow the others. Not the default yet: see run.ts. A slot is
 * taken before qemu starts, so every guest's deadlines run on its own clock.
 *
 * A slot is a lock file under .vm-cache/slots/ (src/sys/lock.ts: a holder that died is taken over), so
 * the vitest forks of the vm project share them, whatever runs each guest.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { acquireLock, type HeldLock, LockPathError } from '../../../src/sys/lock.js';
import { VM_CACHE } from './paths.js';

/** Guests allowed at once: ISOLATE_VM_GUESTS, 1 when unset or not a positive integer. */
export function guestSlots(): number {
  const n = Number(process.env.ISOLATE_VM_GUESTS ?? 1);
  return Number.isInteger(n) && n >= 1 ? n : 1;
}

let waitedMs = 0;

/** Milliseconds this process waited for slots since the last call (the guest's line says so). */
export function takeSlotWait(): number {
  const ms = waitedMs;
  waitedMs = 0;
  return ms;
}

async function takeSlot(): Promise<HeldLock | null> {
  const slots = guestSlots();
  for (;;) {
    for (let i = 0; i < slots; i++) {
      const path = join(VM_CACHE, 'slots', `guest-${i}.lock`);
      try {
        const a = await acquireLock(path, { command: `a qemu guest of the tests (${process.pid})` });
        if (a.acquired) return a.lock;
      } catch (e) {
        // A cache directory the lock refuses to trust (another user's checkout): run unlimited, say so.
        if (!(e instanceof LockPathError)) throw e;
        console.warn(`guest slots unusable, guests run without a limit: ${e.message}`);
        return null;
      }
    }
    await sleep(1000);
  }
}

/** Runs RUN (one qemu guest) once a slot is free; frees it when RUN settles. */
export async function withGuestSlot<T>(run: () => Promise<T>): Promise<T> {
  const asked = Date.now();
  const slot = await takeSlot();
  waitedMs += Date.now() - asked;
  try {
    return await run();
  } finally {
    await slot?.release();
  }
}
