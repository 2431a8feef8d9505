// src/sys/lock.ts: exactly one holder among real processes, also while they race to take over a
// stale lock left by a SIGKILLed holder; PID reuse; the "held by" description. Large runs:
// bench/lock-contention.mjs.
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireLock, holderAlive, processStart } from '../../src/sys/lock.js';
import { bundleLockWorker } from './bundle.js';
import { runContention } from './lock-harness.js';

let worker = '';
let dir = '';
beforeAll(async () => {
  worker = await bundleLockWorker();
  dir = mkdtempSync(join(tmpdir(), 'isolate-lock-unit-'));
}, 180_000);
afterAll(() => {
  rmSync(dirname(worker), { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
});

describe('host lock under contention (real processes)', () => {
  it('8 processes × 8 trials, no stale lock: 0 overlaps', async () => {
    const r = await runContention({ workerScript: worker, n: 8, m: 8, stale: false });
    expect(r).toMatchObject({ sections: 64, overlaps: 0, clashes: 0 });
  }, 120_000);

  it('8 processes × 6 trials, each against a stale lock of a SIGKILLed holder: 0 overlaps', async () => {
    const r = await runContention({ workerScript: worker, n: 8, m: 6, stale: true });
    // The precondition, so the test cannot pass by never meeting a stale lock.
    expect(r.staleTrials).toBe(6);
    expect(r).toMatchObject({ sections: 48, overlaps: 0, clashes: 0 });
  }, 120_000);
});

describe('acquireLock', () => {
  it('says who holds a busy lock, and takes it once released', async () => {
    const path = join(dir, 'a', 'busy.lock');
    const first = await acquireLock(path, { command: 'isolate apply' });
    expect(first.acquired).toBe(true);
    const second = await acquireLock(path, { command: 'isolate raid check', waitMs: 50 });
    expect(second.acquired).toBe(false);
    if (second.acquired) return;
    expect(second.description).toMatch(
      new RegExp(`^held by PID ${process.pid} \\(isolate apply\\) since \\S+ \\(lock ${path}\\)$`),
    );
    if (first.acquired) await first.lock.release();
    const third = await acquireLock(path, { command: 'isolate raid check' });
    expect(third.acquired).toBe(true);
    if (third.acquired) await third.lock.release();
    // No temp or break files left behind.
    expect(readdirSync(dirname(path))).toEqual([]);
  });

  it('a PID that now belongs to another process (start time differs) is a dead holder', async () => {
    const path = join(dir, 'reuse.lock');
    const start = processStart(process.pid);
    expect(start).not.toBeNull();
    expect(holderAlive({ pid: process.pid, start })).toBe(true);
    const reused = { pid: process.pid, start: `${start}1`, command: 'x', since: 'then', token: 't' };
    expect(holderAlive(reused)).toBe(false);
    writeFileSync(path, `${JSON.stringify(reused)}\n`);
    const a = await acquireLock(path, { command: 'isolate apply' });
    expect(a.acquired).toBe(true);
    if (a.acquired) await a.lock.release();
  });

  it('takes over the bare-PID lock file of an older isolate whose process is gone', async () => {
    const path = join(dir, 'legacy.lock');
    const dead = spawnSync(process.execPath, [
      '-e',
      'process.stdout.write(String(process.pid))',
    ]).stdout.toString();
    writeFileSync(path, `${dead}\n`);
    const a = await acquireLock(path, { command: 'isolate apply' });
    expect(a.acquired).toBe(true);
    if (a.acquired) await a.lock.release();
  });

  it('release never removes a lock that is not its own', async () => {
    const path = join(dir, 'own.lock');
    const a = await acquireLock(path, { command: 'one' });
    if (!a.acquired) throw new Error('not acquired');
    const other = {
      pid: process.pid,
      start: processStart(process.pid),
      command: 'two',
      since: 'now',
      token: 'x',
    };
    writeFileSync(path, `${JSON.stringify(other)}\n`);
    await a.lock.release();
    const b = await acquireLock(path, { command: 'three', waitMs: 0 });
    expect(b.acquired).toBe(false);
  });
});

describe('a lock no other user can plant', () => {
  it('refuses a lock whose directory is missing, or that others can write without the sticky bit', async () => {
    await expect(
      acquireLock(join(dir, 'missing', 'x.lock'), { command: 't', createDir: false }),
    ).rejects.toThrow(/cannot create it \(ENOENT\)/);
    const open = join(dir, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    await expect(acquireLock(join(open, 'x.lock'), { command: 't' })).rejects.toThrow(
      `its directory is not root's alone: ${open} is writable by its group and others (owner uid 0, mode 0777)`,
    );
    // Sticky and root's, as /run/lock and /tmp are: nobody can replace the lock they did not make.
    chmodSync(open, 0o1777);
    const ok = await acquireLock(join(open, 'x.lock'), { command: 't' });
    expect(ok.acquired).toBe(true);
    if (ok.acquired) await ok.lock.release();
  });

  it.skipIf(process.getuid?.() !== 0)('refuses a lock file another user created first', async () => {
    const path = join(dir, 'planted.lock');
    writeFileSync(
      path,
      `${JSON.stringify({ pid: process.ppid, start: null, command: 'x', since: '?', token: 't' })}\n`,
    );
    chownSync(path, 65534, 65534);
    await expect(acquireLock(path, { command: 't', waitMs: 0 })).rejects.toThrow(
      'it exists and is owned by uid 65534, not root: another user made it; remove it',
    );
  });
});
