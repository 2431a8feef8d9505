// A vendor tool that hung is tried again, with a backoff, once its call has finished; while a call
// that timed out has not finished (a process stuck in the kernel, or one holding its output), no
// second call is started and the controller stays UNKNOWN. The simulator's log shows every call.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  HANG_BACKOFF_MS,
  resetHungTools,
  runTool,
  ToolCallError,
  vendorWorkDir,
} from '../../src/raid/exec.js';
import { HAVE_FIXTURES } from './fixtures.js';
import { CV_9270, makeHost, type SimHost } from './host.js';

const BIN = '/opt/MegaRAID/storcli/storcli64';
const SHOW = ['/call', 'show', 'all', 'J', 'nolog'];
let host: SimHost | null = null;
afterEach(() => {
  vi.restoreAllMocks();
  resetHungTools();
  host?.cleanup();
  host = null;
});

// Long enough for the simulator (a node script) to have started, logged its call and, for holdOutput,
// spawned its helper before it is killed, however loaded the machine: at 0.5 s a busy 2-core machine
// sometimes killed it first (no call logged, no helper holding the output).
const call = async (h: SimHost, timeoutMs = 4_000) =>
  runTool(join(h.root, BIN), SHOW, { timeoutMs, cwd: await vendorWorkDir(h.root) }).then(
    () => 'ran',
    (e: unknown) => (e instanceof ToolCallError ? e.message : `other: ${String(e)}`),
  );

describe.skipIf(!HAVE_FIXTURES)('a vendor tool that timed out', () => {
  it('is tried again once its call finished, after a backoff that doubles with each timeout', async () => {
    host = makeHost({
      drivers: ['megaraid_sas'],
      tools: { storcli: { hang: 'show', controllers: [{ showAll: CV_9270 }] } },
    });
    const calls = () => host!.log().length;
    expect(await call(host)).toMatch(/timed out after 4s and was killed$/);
    // The timeout is recorded when it fires: the backoff counts from here.
    const t0 = Date.now();
    expect(calls()).toBe(1);
    // At once: held back, and said why and until when.
    expect(await call(host)).toMatch(/not run, storcli64 timed out 1 time in a row .*; tried again after/);
    expect(calls()).toBe(1);
    // One backoff later it runs again (and hangs again): the next wait is twice as long.
    vi.spyOn(Date, 'now').mockReturnValue(t0 + HANG_BACKOFF_MS + 1000);
    expect(await call(host)).toMatch(/timed out after 4s and was killed$/);
    expect(calls()).toBe(2);
    vi.spyOn(Date, 'now').mockReturnValue(t0 + 2 * HANG_BACKOFF_MS + 2000);
    expect(await call(host)).toMatch(/timed out 2 times in a row/);
    expect(calls()).toBe(2);
  }, 180_000);

  it('while its call has not finished though killed, no second call starts and the host lock stays held', async () => {
    host = makeHost({
      drivers: ['megaraid_sas'],
      tools: { storcli: { holdOutput: 'show', holdSeconds: 15, controllers: [{ showAll: CV_9270 }] } },
    });
    const lockFile = process.env.ISOLATE_RAID_LOCK!;
    expect(await call(host)).toMatch(/timed out after 4s and has not finished though killed \(PID \d+/);
    expect(existsSync(lockFile)).toBe(true);
    expect(JSON.parse(readFileSync(lockFile, 'utf8')).pid).toBe(process.pid);
    expect(await call(host)).toMatch(
      /not run, the storcli64 call that timed out at \S+ has not finished \(PID \d+, gone, its output still held by a process it started\); no second one is started/,
    );
    expect(host.log()).toHaveLength(1);
    // The helper goes: the call finishes, the lock is released, and after the backoff it runs again.
    // Polled, not slept for: however long a loaded machine takes, only "never" fails.
    for (let i = 0; i < 400 && existsSync(lockFile); i++) await new Promise((r) => setTimeout(r, 100));
    expect(existsSync(lockFile)).toBe(false);
    vi.spyOn(Date, 'now').mockReturnValue(Date.now() + HANG_BACKOFF_MS + 1000);
    await call(host);
    expect(host.log()).toHaveLength(2);
  }, 180_000);
});
