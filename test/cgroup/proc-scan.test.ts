// The agent's process-scan memory: quiet PIDs are not re-read every round, but a new PID, a PID that
// matched, and every PID once per full-scan period are — over a fixture /proc.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { matchProcesses } from '../../src/cgroup/observe.js';
import { ProcessScanMemo } from '../../src/cgroup/proc-scan.js';

let root: string;
const proc = (pid: number, cmdline: string[]) => {
  mkdirSync(join(root, 'proc', String(pid)), { recursive: true });
  writeFileSync(join(root, 'proc', String(pid), 'cmdline'), `${cmdline.join('\0')}\0`);
  writeFileSync(join(root, 'proc', String(pid), 'cgroup'), '0::/system.slice/kafka.service\n');
};
const kafka = { kafka: { cmdline: 'kafka\\.Kafka' } };

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'isolate-procscan-'));
  proc(10, ['/usr/sbin/sshd', '-D']);
  proc(20, ['java', 'kafka.Kafka', 'server.properties']);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('process scan memory', () => {
  it('stops re-reading a PID that matched nothing for youngScans rounds, until the next full scan', async () => {
    let now = 0;
    const memo = new ProcessScanMemo({ fullScanMs: 30_000, youngScans: 2 }, () => now);
    const scan = async () => (await matchProcesses(root, kafka, memo)).matched.kafka;
    expect(await scan()).toEqual([20]);
    now += 1000;
    expect(await scan()).toEqual([20]);
    // PID 10 is now trusted not to match: a later exec into Kafka is seen at the next full scan.
    proc(10, ['java', 'kafka.Kafka', 'other.properties']);
    now += 1000;
    expect(await scan()).toEqual([20]);
    now = 30_000;
    expect(await scan()).toEqual([10, 20]);
  });

  it('reads a new PID in its first rounds: a start script that execs Kafka right after fork is found', async () => {
    let now = 0;
    const memo = new ProcessScanMemo({ fullScanMs: 30_000, youngScans: 3 }, () => now);
    const scan = async () => (await matchProcesses(root, kafka, memo)).matched.kafka;
    expect(await scan()).toEqual([20]);
    proc(30, ['/bin/bash', 'kafka-server-start.sh', 'server.properties']);
    now += 1000;
    expect(await scan()).toEqual([20]);
    proc(30, ['java', 'kafka.Kafka', 'server.properties']); // exec
    now += 1000;
    expect(await scan()).toEqual([20, 30]);
  });

  it('re-reads matched PIDs every round, so a process that stops matching (or exits) drops out', async () => {
    let now = 0;
    const memo = new ProcessScanMemo({ fullScanMs: 30_000, youngScans: 1 }, () => now);
    const scan = async () => (await matchProcesses(root, kafka, memo)).matched.kafka;
    for (let i = 0; i < 3; i++, now += 1000) expect(await scan()).toEqual([20]);
    rmSync(join(root, 'proc/20'), { recursive: true });
    proc(20, ['/usr/bin/sleep', '100']); // the PID reused by something else
    expect(await scan()).toEqual([]);
  });

  it('forgets everything when the matchers change', async () => {
    let now = 0;
    const memo = new ProcessScanMemo({ fullScanMs: 30_000, youngScans: 1 }, () => now);
    for (let i = 0; i < 3; i++, now += 1000) await matchProcesses(root, kafka, memo);
    const r = await matchProcesses(root, { ssh: { cmdline: 'sshd' } }, memo);
    expect(r.matched.ssh).toEqual([10]);
  });
});
