// Child process of the lock contention harness (lock-harness.ts). Roles:
// - `worker`: on each {trial} message, take the lock, record enter/leave (CLOCK_MONOTONIC, shared by
//   every process on the host), hold it briefly, release, report.
// - `holder`: take the lock, say so, and wait to be SIGKILLed — leaving a stale lock behind.
import { appendFileSync, closeSync, openSync, rmSync } from 'node:fs';
import { acquireLock } from '../../src/sys/lock.js';
import { acquireNaive } from './naive-lock.js';

const [role, impl, lockPath, logPath, holdMs] = process.argv.slice(2) as [
  'worker' | 'holder',
  'sys' | 'naive',
  string,
  string,
  string,
];
const send = (m: unknown) => process.send?.(m);

async function take(): Promise<() => Promise<void>> {
  if (impl === 'naive') {
    const release = await acquireNaive(lockPath, 120_000);
    if (!release) throw new Error('naive lock: timed out');
    return release;
  }
  const a = await acquireLock(lockPath, { command: `lock-${role}`, waitMs: 120_000, pollMs: 4 });
  if (!a.acquired) throw new Error(a.description);
  return () => a.lock.release();
}

function busy(ms: number): void {
  const end = process.hrtime.bigint() + BigInt(Math.round(ms * 1e6));
  while (process.hrtime.bigint() < end) {}
}

if (role === 'holder') {
  await take();
  send({ held: process.pid });
  setInterval(() => {}, 1 << 30);
} else {
  const inside = `${lockPath}.inside`;
  process.on('message', async (msg: { trial?: number; exit?: boolean }) => {
    if (msg.exit) process.exit(0);
    const trial = msg.trial as number;
    const release = await take();
    const enter = process.hrtime.bigint();
    // A second process inside at the same moment finds the marker: an overlap, whatever the clocks say.
    let clash = 0;
    try {
      closeSync(openSync(inside, 'wx'));
    } catch {
      clash = 1;
    }
    busy(Number(holdMs));
    if (!clash) rmSync(inside, { force: true });
    const leave = process.hrtime.bigint();
    await release();
    appendFileSync(logPath, `${process.pid} ${trial} ${enter} ${leave} ${clash}\n`);
    send({ done: trial });
  });
  send({ ready: process.pid });
}
