// The agent's process-scan memory: quiet PIDs are not re-read every round, but a new PID, a PID that
// matched, and every PID once per full-scan period are — over a fixture /proc.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bornSince, matchProcesses, probeBirths } from '../../src/cgroup/processes.js';
import { PROBE_MAX_BIRTHS, ProcessScanMemo, type ProcessScanner } from '../../src/cgroup/proc-scan.js';

let root: string;
const proc = (pid: number, cmdline: string[]) => {
  mkdirSync(join(root, 'proc', String(pid)), { recursive: true });
  writeFileSync(join(root, 'proc', String(pid), 'cmdline'), `${cmdline.join('\0')}\0`);
  writeFileSync(join(root, 'proc', String(pid), 'cgroup'), '0::/system.slice/kafka.service\n');
  writeFileSync(
    join(root, 'proc', String(pid), 'status'),
    `Name:\tx\nUmask:\t0022\nState:\tS\nTgid:\t${pid}\n`,
  );
};
const kafka = { kafka: { cmdline: 'kafka\\.Kafka' } };
/** One probe tick of the agent's (agent.ts startProbe): the PIDs born since the last, then judged. */
const probe = (memo: ProcessScanMemo) => probeBirths(memo, bornSince(memo));
/** /proc/<pid>/stat with the process's start time (field 22) and ordinary fields before it. */
const startTime = (pid: number, ticks: number) =>
  writeFileSync(
    join(root, 'proc', String(pid), 'stat'),
    `${pid} (x y) S ${Array.from({ length: 18 }, () => '0').join(' ')} ${ticks} 0 0\n`,
  );
/** The kernel's PID counter as /proc/loadavg shows it (its last field). */
const lastPid = (pid: number) => writeFileSync(join(root, 'proc/loadavg'), `0.00 0.01 0.05 1/93 ${pid}\n`);
/** A thread: /proc/<tid> shows its process's command line; status names the process. */
const thread = (tid: number, tgid: number, cmdline: string[]) => {
  proc(tid, cmdline);
  writeFileSync(
    join(root, 'proc', String(tid), 'status'),
    `Name:\tjava\nUmask:\t0022\nState:\tS\nTgid:\t${tgid}\n`,
  );
};

/** The memo, with every PID a scan reads appended to `reads` (matchProcesses asks `saw` of each). */
const recording = (memo: ProcessScanMemo, reads: number[]): ProcessScanner => ({
  begin: (r, m) => memo.begin(r, m),
  list: (d) => memo.list(d),
  skip: (pid) => memo.skip(pid),
  saw: (pid, m) => {
    reads.push(pid);
    memo.saw(pid, m);
  },
  end: (present) => memo.end(present),
});

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'isolate-procscan-'));
  proc(10, ['/usr/sbin/sshd', '-D']);
  proc(20, ['java', 'kafka.Kafka', 'server.properties']);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('process scan memory', () => {
  it('stops re-reading a PID that matched nothing for youngScans rounds, until the next full scan', async () => {
    let now = 0;
    const memo = new ProcessScanMemo({ fullScanMs: 30_000, youngScans: 2, youngMs: 0 }, () => now);
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

  it("a view (the host audit's) reads what a round would read again, and changes nothing the rounds and the probe rely on", async () => {
    let now = 0;
    const memo = new ProcessScanMemo({ fullScanMs: 30_000, youngScans: 1, youngMs: 0 }, () => now);
    expect(memo.view()).toBeNull(); // before a first round: the audit reads every PID
    lastPid(20);
    expect((await matchProcesses(root, kafka, memo)).matched.kafka).toEqual([20]);
    now += 1000;
    expect((await matchProcesses(root, kafka, memo)).matched.kafka).toEqual([20]); // 10 now trusted
    // 10 execs into Kafka (seen at the next full scan, as by the rounds); 30 is born after the round.
    proc(10, ['java', 'kafka.Kafka', 'other.properties']);
    proc(30, ['java', 'kafka.Kafka', 'third.properties']);
    lastPid(30);
    const view = memo.view()!;
    expect((await matchProcesses(root, kafka, view)).matched.kafka).toEqual([20]);
    // The probe still finds the birth the audit did not take.
    expect(await probe(memo)).toBe(30);
    // Other matchers than the rounds': every PID is read.
    expect(
      (await matchProcesses(root, { other: { cmdline: 'sshd|kafka' } }, memo.view()!)).matched.other,
    ).toEqual([10, 20, 30]);
  });

  it('reads a new PID in its first rounds: a start script that execs Kafka right after fork is found', async () => {
    let now = 0;
    const memo = new ProcessScanMemo({ fullScanMs: 30_000, youngScans: 3, youngMs: 0 }, () => now);
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
    const memo = new ProcessScanMemo({ fullScanMs: 30_000, youngScans: 1, youngMs: 0 }, () => now);
    const scan = async () => (await matchProcesses(root, kafka, memo)).matched.kafka;
    for (let i = 0; i < 3; i++, now += 1000) expect(await scan()).toEqual([20]);
    rmSync(join(root, 'proc/20'), { recursive: true });
    proc(20, ['/usr/bin/sleep', '100']); // the PID reused by something else
    expect(await scan()).toEqual([]);
  });

  it('forgets everything when the matchers change', async () => {
    let now = 0;
    const memo = new ProcessScanMemo({ fullScanMs: 30_000, youngScans: 1, youngMs: 0 }, () => now);
    for (let i = 0; i < 3; i++, now += 1000) await matchProcesses(root, kafka, memo);
    const r = await matchProcesses(root, { ssh: { cmdline: 'sshd' } }, memo);
    expect(r.matched.ssh).toEqual([10]);
  });

  it('between full scans looks up only the PIDs born since the last round, not the whole of /proc', async () => {
    let now = 0;
    const memo = new ProcessScanMemo({ fullScanMs: 30_000, youngScans: 3, youngMs: 0 }, () => now);
    const scan = async () => (await matchProcesses(root, kafka, memo)).matched.kafka;
    lastPid(20);
    expect(await scan()).toEqual([20]);
    // A directory the counter does not account for (impossible on a real /proc) proves /proc is not listed.
    proc(30, ['java', 'kafka.Kafka', 'b.properties']);
    now += 1000;
    expect(await scan()).toEqual([20]);
    lastPid(30);
    now += 1000;
    expect(await scan()).toEqual([20, 30]);
    // Born since: a thread of Kafka (not a process), a process not visible yet, a new broker.
    thread(31, 20, ['java', 'kafka.Kafka', 'server.properties']);
    proc(33, ['java', 'kafka.Kafka', 'd.properties']);
    lastPid(33);
    now += 1000;
    expect(await scan()).toEqual([20, 30, 33]);
    proc(32, ['java', 'kafka.Kafka', 'e.properties']); // its task attached after the last look
    now += 1000;
    expect(await scan()).toEqual([20, 30, 32, 33]);
    proc(40, ['java', 'kafka.Kafka', 'c.properties']);
    rmSync(join(root, 'proc/31'), { recursive: true }); // a real /proc does not list threads at all
    now = 30_000;
    expect(await scan()).toEqual([20, 30, 32, 33, 40]);
  });

  it('a PID handed out again after the counter wrapped is a new process, read at once', async () => {
    let now = 0;
    const memo = new ProcessScanMemo({ fullScanMs: 30_000, youngScans: 2, youngMs: 0 }, () => now);
    const scan = async () => (await matchProcesses(root, kafka, memo)).matched.kafka;
    lastPid(20);
    expect(await scan()).toEqual([20]);
    now += 1000;
    expect(await scan()).toEqual([20]); // PID 10 trusted
    // The counter wraps (a full listing) while 10 still runs; then 10 ends and the counter reaches it again.
    lastPid(5);
    now += 1000;
    expect(await scan()).toEqual([20]);
    proc(10, ['java', 'kafka.Kafka', 'reborn.properties']);
    lastPid(10);
    now += 1000;
    expect(await scan()).toEqual([10, 20]);
  });

  it('without /proc/loadavg every round lists /proc', async () => {
    const memo = new ProcessScanMemo({ fullScanMs: 30_000, youngScans: 3, youngMs: 0 }, () => 0);
    expect((await matchProcesses(root, kafka, memo)).matched.kafka).toEqual([20]);
    proc(30, ['java', 'kafka.Kafka', 'b.properties']);
    expect((await matchProcesses(root, kafka, memo)).matched.kafka).toEqual([20, 30]);
    expect(await probe(memo)).toBeNull();
  });

  it('probes the PIDs born since the last look: a new broker, even one that execs after fork', async () => {
    const memo = new ProcessScanMemo({ fullScanMs: 30_000, youngScans: 3, youngMs: 0 }, () => 0);
    expect(await probe(memo)).toBeNull(); // before any round: nothing to probe with
    lastPid(20);
    await matchProcesses(root, kafka, memo);
    expect(await probe(memo)).toBeNull(); // nothing born
    proc(21, ['/bin/sh', 'kafka-server-start.sh']);
    lastPid(21);
    expect(await probe(memo)).toBeNull(); // not Kafka yet
    proc(21, ['java', 'kafka.Kafka', 'server.properties']); // exec, no new PID
    expect(await probe(memo)).toBe(21);
    expect(await probe(memo)).toBeNull(); // reported once
  });

  it('a new thread of a placed broker is not news; a thread of an unknown matching process is', async () => {
    const memo = new ProcessScanMemo({ fullScanMs: 30_000, youngScans: 3, youngMs: 0 }, () => 0);
    lastPid(20);
    await matchProcesses(root, kafka, memo);
    thread(22, 20, ['java', 'kafka.Kafka', 'server.properties']);
    lastPid(22);
    expect(await probe(memo)).toBeNull();
    thread(24, 23, ['java', 'kafka.Kafka', 'other.properties']);
    lastPid(24);
    expect(await probe(memo)).toBe(24);
  });

  it('leaves a burst of births larger than PROBE_MAX_BIRTHS to the next round', async () => {
    let now = 0;
    const memo = new ProcessScanMemo({ fullScanMs: 30_000, youngScans: 3, youngMs: 0 }, () => now);
    lastPid(20);
    await matchProcesses(root, kafka, memo);
    proc(20 + PROBE_MAX_BIRTHS + 1, ['java', 'kafka.Kafka', 'b.properties']);
    lastPid(20 + PROBE_MAX_BIRTHS + 1);
    expect(await probe(memo)).toBeNull();
    now += 1000;
    expect((await matchProcesses(root, kafka, memo)).matched.kafka).toEqual([20, 20 + PROBE_MAX_BIRTHS + 1]);
  });

  it('a PID born while the agent runs stays young for youngMs; one there at the first scan does not', async () => {
    let now = 0;
    const memo = new ProcessScanMemo({ fullScanMs: 120_000, youngScans: 2, youngMs: 10_000 }, () => now);
    const scan = async () => (await matchProcesses(root, kafka, memo)).matched.kafka;
    expect(await scan()).toEqual([20]);
    proc(30, ['/bin/sh', 'wrapper.sh']); // born after the first scan
    for (let i = 0; i < 5; i++) {
      now += 1000;
      expect(await scan()).toEqual([20]);
    }
    // 5 s after its birth: still read every round, so its late exec into Kafka is seen at once...
    proc(30, ['java', 'kafka.Kafka', 'server.properties']);
    // ...while PID 10 (there at the first scan, 2 scans quiet) is trusted and not read again.
    proc(10, ['java', 'kafka.Kafka', 'other.properties']);
    now += 1000;
    expect(await scan()).toEqual([20, 30]);
    now = 120_000;
    expect(await scan()).toEqual([10, 20, 30]);
  });

  it('reads every PID again at each full scan and none of the settled ones in between', async () => {
    let now = 0;
    const period = 10_000;
    const memo = new ProcessScanMemo({ fullScanMs: period, youngScans: 2, youngMs: 0 }, () => now);
    for (let pid = 100; pid < 300; pid++) proc(pid, ['/usr/bin/sleep', 'infinity']);
    lastPid(299);
    const reads: number[] = [];
    const counting = recording(memo, reads);
    const perRound: number[] = [];
    for (; now < 3 * period; now += 1000) {
      reads.length = 0;
      expect((await matchProcesses(root, kafka, counting)).matched.kafka).toEqual([20]);
      perRound.push(reads.length);
    }
    // The first two rounds read every PID (none trusted yet); then only the broker, every round, and
    // everything again at each full scan (rounds 10 and 20).
    expect(perRound).toEqual(perRound.map((_, i) => (i < 2 || i % 10 === 0 ? 202 : 1)));
  });

  it('a PID the counter wrapped around to within one interval is read at once: its start time differs', async () => {
    let now = 0;
    const memo = new ProcessScanMemo({ fullScanMs: 120_000, youngScans: 1, youngMs: 0 }, () => now);
    const scan = async () => (await matchProcesses(root, kafka, memo)).matched.kafka;
    startTime(10, 1000);
    startTime(20, 1000);
    lastPid(20);
    expect(await scan()).toEqual([20]);
    now += 1000;
    expect(await scan()).toEqual([20]); // PID 10 trusted not to match
    // Within one interval the counter ran to pid_max and wrapped: 10 ended and a new broker got it.
    proc(10, ['java', 'kafka.Kafka', 'reborn.properties']);
    startTime(10, 5000);
    lastPid(12);
    now += 1000;
    expect(await scan()).toEqual([10, 20]);
  });

  it('without the PID counter, a remembered PID is the process with its start time', async () => {
    let now = 0;
    const memo = new ProcessScanMemo({ fullScanMs: 120_000, youngScans: 1, youngMs: 0 }, () => now);
    const scan = async () => (await matchProcesses(root, kafka, memo)).matched.kafka;
    startTime(10, 1000);
    expect(await scan()).toEqual([20]);
    now += 1000;
    expect(await scan()).toEqual([20]); // PID 10 trusted
    proc(10, ['java', 'kafka.Kafka', 'exec.properties']); // an exec: the same process
    now += 1000;
    expect(await scan()).toEqual([20]);
    startTime(10, 9000); // a new process under the same PID
    now += 1000;
    expect(await scan()).toEqual([10, 20]);
  });

  it('after a burst of births, only the PIDs handed out since the last round are new', async () => {
    let now = 0;
    const memo = new ProcessScanMemo({ fullScanMs: 120_000, youngScans: 1, youngMs: 0 }, () => now);
    const scan = async () => (await matchProcesses(root, kafka, memo)).matched.kafka;
    // PID 30000: born before the counter last wrapped, above it now.
    proc(30000, ['/usr/bin/sleep', 'infinity']);
    lastPid(20);
    expect(await scan()).toEqual([20]);
    now += 1000;
    expect(await scan()).toEqual([20]); // PIDs 10 and 30000 trusted
    // More births than a round looks up one by one: /proc is listed in full. PIDs 10 and 30000 are
    // the processes remembered (not handed out since the last round; their execs show at the next
    // full scan, no start time read), PID 80 is new.
    proc(10, ['java', 'kafka.Kafka', 'exec.properties']);
    proc(30000, ['java', 'kafka.Kafka', 'exec2.properties']);
    proc(80, ['java', 'kafka.Kafka', 'new.properties']);
    lastPid(20 + PROBE_MAX_BIRTHS + 5);
    now += 1000;
    expect(await scan()).toEqual([20, 80]);
    now = 120_000;
    expect(await scan()).toEqual([10, 20, 80, 30000]);
  });
});
