/**
 * Guest slots: at most guestSlots() qemu guests at once (harness/guest-order.ts) across the suite's
 * processes. A slot is taken before qemu starts, so every guest's deadlines run on its own clock.
 *
 * A slot is a lock file under .vm-cache/slots/ (src/sys/lock.ts: a holder that died is taken over), so
 * the vitest forks of the vm project share them, whatever runs each guest.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import { acquireLock, type HeldLock, LockPathError } from '../../../src/sys/lock.js';
import { guestRank, guestSlots } from './guest-order.js';
import { REPO_ROOT, VM_CACHE } from './paths.js';

let waitedMs = 0;

/** Milliseconds this process waited for slots since the last call (the guest's line says so). */
export function takeSlotWait(): number {
  const ms = waitedMs;
  waitedMs = 0;
  return ms;
}

/**
 * Guests waiting for a slot, longest first: a file that asked (queueForSlot, when its scenario starts,
 * before it builds what its guest needs) is a `RANK-TIME-PID` file in QUEUE. A guest takes a free slot
 * only while more slots are free than waiters ahead of it, so role-systemd, still building its .deb,
 * keeps a slot from the shorter guests of the vm project's third fork.
 */
const QUEUE = join(VM_CACHE, 'slots', 'queue');
let ticket: string | null = null;

function rankOfThisFile(): number {
  const file = expect.getState().testPath;
  return guestRank(file ? relative(REPO_ROOT, file) : '');
}

const pidOf = (name: string) => Number(name.split('-')[2]);

/**
 * Puts this process in the queue for a guest slot, once, before withGuestSlot asks for it. A ticket this
 * process left before (a file whose scenario failed before its guest, in the same fork) goes first:
 * kept, it would count as a waiter ahead of everyone for as long as the fork runs, and with one slot no
 * guest could ever start.
 */
export function queueForSlot(): void {
  if (ticket) return;
  mkdirSync(QUEUE, { recursive: true });
  for (const name of readdirSync(QUEUE))
    if (pidOf(name) === process.pid) rmSync(join(QUEUE, name), { force: true });
  ticket = `${String(rankOfThisFile()).padStart(3, '0')}-${String(Date.now()).padStart(15, '0')}-${process.pid}`;
  writeFileSync(join(QUEUE, ticket), '');
}

/** Takes this process out of the queue (its guest has a slot, or will not ask for one). */
export function leaveQueue(): void {
  if (ticket) rmSync(join(QUEUE, ticket), { force: true });
  ticket = null;
}

/** Waiters ahead of this process whose process still runs (a dead one's file is removed). */
function waitersAhead(): number {
  let ahead = 0;
  for (const name of readdirSync(QUEUE)) {
    if (ticket === null || name >= ticket) continue;
    const pid = pidOf(name);
    if (Number.isInteger(pid) && pid > 0 && existsSync(`/proc/${pid}`)) ahead++;
    else rmSync(join(QUEUE, name), { force: true });
  }
  return ahead;
}

async function trySlot(path: string): Promise<HeldLock | null> {
  const a = await acquireLock(path, { command: `a qemu guest of the tests (${process.pid})` });
  return a.acquired ? a.lock : null;
}

/** One free slot, when the waiters ahead leave one free for this process; null otherwise. */
async function takeFreeSlot(slots: number): Promise<HeldLock | null> {
  const need = waitersAhead() + 1;
  const held: HeldLock[] = [];
  for (let i = 0; i < slots && held.length < need; i++) {
    const lock = await trySlot(join(VM_CACHE, 'slots', `guest-${i}.lock`));
    if (lock) held.push(lock);
  }
  // Held for a moment only: enough slots are free to leave one to each waiter ahead.
  const mine = held.length === need ? held.pop()! : null;
  for (const lock of held) await lock.release();
  return mine;
}

async function takeSlot(): Promise<HeldLock | null> {
  queueForSlot();
  const slots = guestSlots();
  for (;;) {
    try {
      const lock = await takeFreeSlot(slots);
      if (lock) {
        leaveQueue();
        return lock;
      }
    } catch (e) {
      // A cache directory the lock refuses to trust (another user's checkout): run unlimited, say so.
      if (!(e instanceof LockPathError)) throw e;
      console.warn(`guest slots unusable, guests run without a limit: ${e.message}`);
      leaveQueue();
      return null;
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
