// The reconcile loop in-process against a host root of plain files: converge, correct drift written
// by someone else, keep the old policy when a new one is invalid, stop cleanly. (The real kernel and
// real systemd are in test/vm.)
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { type AgentOptions, type RoundResult, runAgent } from '../../src/agent/agent.js';
import { createMetrics } from '../../src/agent/metrics.js';
import { CpuSet } from '../../src/model/cpuset.js';
import { putProcesses } from '../docs/host.js';
import { HAVE_FIXTURES } from '../raid/fixtures.js';
import { IBBU08_DETAIL, M5015_BBU, makeHost } from '../raid/host.js';
import { TEST_AGENT_TIMING } from '../support/agent.js';
import { fakeCgroupHost } from '../support/cgroup-tree.js';

const POLICY = (cores: number) => `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
workloads:
  - { name: kafka, class: exclusive, cores: ${cores}, match: { cgroup: /kafka.slice } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
`;

function setup(groups = ['kafka.slice', 'hadoop-yarn']) {
  const h = fakeCgroupHost(groups);
  mkdirSync(join(h.root, 'etc/isolate'), { recursive: true });

  const policyPath = join(h.root, 'etc/isolate/policy.yaml');
  writeFileSync(policyPath, POLICY(1));
  return { ...h, policyPath };
}

/** Run the agent until `until` says so after a round (or 200 rounds), then stop it. */
async function drive(
  o: Omit<AgentOptions, 'stop' | 'log' | 'afterRound'>,
  until: (round: RoundResult, n: number) => boolean | Promise<boolean>,
  logs: { level: string; msg: string; fields?: Record<string, unknown> }[] = [],
  capMs = 60_000,
) {
  const stop = new AbortController();
  // Only against a hang: a test that needs a round that never comes ends here and fails its asserts.
  const cap = setTimeout(() => stop.abort('cap'), capMs);
  const rounds: RoundResult[] = [];
  const code = await runAgent({
    ...o,
    stop: stop.signal,
    log: (level, msg, fields) => logs.push({ level, msg, ...(fields ? { fields } : {}) }),
    afterRound: async (r) => {
      rounds.push(r);
      if ((await until(r, rounds.length)) || rounds.length >= 200) stop.abort('test');
    },
  });
  clearTimeout(cap);
  return { code, rounds, logs };
}

const base = (root: string, policyPath: string) => ({ root, policyPath, ...TEST_AGENT_TIMING });

describe('isolate agent', () => {
  it('converges, then corrects a cpuset someone else wrote, and stops with 0', async () => {
    const { root, cg, policyPath } = setup();
    const yarn = join(cg, 'hadoop-yarn/cpuset.cpus');
    let sabotaged = false;
    const r = await drive(base(root, policyPath), (round, n) => {
      if (n === 1) {
        expect(round.ok, round.error).toBe(true);
        expect(round.changed).toBeGreaterThan(0);
        return false;
      }
      if (!sabotaged) {
        expect(round.changed).toBe(0); // converged: nothing to do
        writeFileSync(yarn, '0-7\n');
        sabotaged = true;
        return false;
      }
      return round.changed > 0;
    });
    expect(r.code).toBe(0);
    const last = r.rounds.at(-1)!;
    expect(last.changed).toBe(1);
    const flink = last.allocation!.workloads.find((w) => w.name === 'flink')!;
    expect(readFileSync(yarn, 'utf8').trim()).toBe(flink.cpus.toString());
    expect(r.logs.some((l) => l.msg === 'corrected' && l.fields?.target === '/hadoop-yarn')).toBe(true);
  });

  it('sees a CPU taken offline at the next round, without waiting for the periodic topology re-read', async () => {
    const { root, policyPath } = setup();
    const cpu = join(root, 'sys/devices/system/cpu');
    const uses7 = (round: RoundResult) =>
      round.allocation!.workloads.some((w) => w.cpus.toArray().includes(7));
    let unplugged = false;
    const r = await drive(base(root, policyPath), (round) => {
      expect(round.ok, round.error).toBe(true);
      if (!unplugged) {
        expect(uses7(round)).toBe(true);
        // What the kernel shows after `echo 0 > cpu7/online`: the lists lose it, its topology goes.
        for (const dir of readdirSync(cpu).filter((d) => /^cpu\d+$/.test(d) && d !== 'cpu7')) {
          const topo = join(cpu, dir, 'topology');
          for (const f of readdirSync(topo).filter((n) => n.endsWith('_list'))) {
            const list = CpuSet.parse(readFileSync(join(topo, f), 'utf8').trim());
            writeFileSync(join(topo, f), `${list.minus(CpuSet.of([7])).toString()}\n`);
          }
        }
        const node1 = join(root, 'sys/devices/system/node/node1/cpulist');
        writeFileSync(node1, `${CpuSet.parse(readFileSync(node1, 'utf8').trim()).minus(CpuSet.of([7]))}\n`);
        rmSync(join(cpu, 'cpu7/topology'), { recursive: true });
        writeFileSync(join(cpu, 'cpu7/online'), '0\n');
        writeFileSync(join(cpu, 'offline'), '7\n');
        writeFileSync(join(cpu, 'online'), '0-6\n');
        unplugged = true;
        return false;
      }
      return !uses7(round);
    });
    expect(r.rounds.length).toBe(2);
  });

  it('runs the full thread audit (at start, then every checkIntervalMs), exports and logs what it found', async () => {
    const { root, policyPath } = setup();
    const metrics = await createMetrics();
    const { logs } = await drive({ ...base(root, policyPath), metrics, checkIntervalMs: 20 }, async () =>
      /isolate_violations\{kind="user"\} \d/.test(
        await metrics.registry.getSingleMetricAsString('isolate_violations'),
      ),
    );
    expect(await metrics.registry.getSingleMetricAsString('isolate_violations')).toMatch(
      /^isolate_violations\{kind="user"\} 0$/m,
    );
    // As `isolate check` reports it: a status of the monitoring-plugin scale and a one-line summary.
    const checks = logs.filter((l) => l.msg === 'check');
    expect(checks.length).toBeGreaterThanOrEqual(1);
    expect(checks[0]!.fields).toMatchObject({
      status: expect.stringMatching(/^(OK|WARNING|CRITICAL|UNKNOWN)$/),
      summary: expect.any(String),
      // The fake host's /proc is empty: an audit of nothing, said so.
      processes: 0,
      threads: 0,
      scanMs: expect.any(Number),
    });
    expect(checks[0]!.level).toBe(checks[0]!.fields!.status === 'OK' ? 'info' : 'warn');
  });

  it('exports how many threads violate the policy, not how many the report lists', async () => {
    const { root, policyPath } = setup();
    // A YARN container's process of 1,005 threads allowed on every CPU: each one a violation of the
    // batch fence (the policy is not strict, so only batch threads count).
    putProcesses(root, [
      {
        pid: 5000,
        name: 'flink',
        cgroup: '/hadoop-yarn/container_1',
        threads: Array.from({ length: 1005 }, (_, i) => 5000 + i),
        cpus: '0-7',
      },
    ]);
    const metrics = await createMetrics();
    await drive({ ...base(root, policyPath), metrics }, (_r, n) => n >= 1);
    expect(await metrics.registry.getSingleMetricAsString('isolate_violations')).toMatch(
      /^isolate_violations\{kind="user"\} 1005$/m,
    );
  });

  it('keeps the old policy when the new one is invalid, and takes a valid one', async () => {
    const { root, cg, policyPath } = setup();
    const metrics = await createMetrics();
    const kafka = join(cg, 'kafka.slice/cpuset.cpus');
    let phase = 0;
    const r = await drive({ ...base(root, policyPath), metrics }, async (round) => {
      expect(round.ok, round.error).toBe(true);
      if (phase === 0) {
        phase = 1;
        writeFileSync(policyPath, `${POLICY(1)}bogus: true\n`);
        return false;
      }
      if (phase === 1) {
        expect(await metrics.registry.getSingleMetricAsString('isolate_policy_valid')).toMatch(
          /isolate_policy_valid 0/,
        );
        expect(readFileSync(kafka, 'utf8').trim()).toBe('2-3');
        phase = 2;
        writeFileSync(policyPath, POLICY(2).replace('cores: 1 }', 'cores: 0 }'));
        return false;
      }
      return round.changed > 0;
    });
    expect(r.logs.some((l) => l.msg === 'new policy refused; the previous one stays in force')).toBe(true);
    const refused = r.logs.find((l) => l.msg === 'new policy refused; the previous one stays in force')!;
    expect(String(refused.fields?.error)).toMatch(/policy\.yaml:\d+:\d+: bogus: unknown field/);
    expect(await metrics.registry.getSingleMetricAsString('isolate_policy_valid')).toMatch(
      /isolate_policy_valid 1/,
    );
    // Two whole cores on one node with no reserved core: node 0's cores 0 and 2.
    expect(readFileSync(kafka, 'utf8').trim()).toBe('0-3');
  });

  it('makes a partition the kernel turned invalid a valid root again, and reports it as drift', async () => {
    const { root, cg, policyPath } = setup();
    const partition = join(cg, 'kafka.slice/cpuset.cpus.partition');
    let broken = false;
    const r = await drive(base(root, policyPath), (round) => {
      expect(round.ok, round.error).toBe(true);
      if (!broken) {
        expect(readFileSync(partition, 'utf8').trim()).toBe('root');
        // What 6.1 shows after a sibling's overlapping cpuset.cpus write succeeded.
        writeFileSync(partition, 'root invalid (Cpu list in cpuset.cpus not exclusive)\n');
        broken = true;
        return false;
      }
      return round.changed > 0;
    });
    expect(readFileSync(partition, 'utf8').trim()).toBe('root');
    expect(
      r.logs.some(
        (l) =>
          l.msg === 'corrected' &&
          l.fields?.target === '/kafka.slice' &&
          l.fields?.setting === 'cpuset.cpus.partition',
      ),
      JSON.stringify(r.logs.filter((l) => l.msg === 'corrected')),
    ).toBe(true);
  });

  it('re-reads the policy on SIGHUP, though the file looks the same (size, inode and mtime)', async () => {
    const { root, cg, policyPath } = setup();
    const kafka = join(cg, 'kafka.slice/cpuset.cpus');
    // A round re-reads the file only when its stamp changes: keep the stamp, so only SIGHUP can.
    utimesSync(policyPath, 1_000_000, 1_000_000);
    let hup: (() => void) | undefined;
    let before = '';
    let phase = 0;
    let unchangedRounds = 0;
    const r = await drive({ ...base(root, policyPath), onReload: (cb) => (hup = cb) }, (round) => {
      expect(round.ok, round.error).toBe(true);
      if (phase === 0) {
        before = readFileSync(kafka, 'utf8').trim();
        // Two cores, none reserved: the same length as POLICY(1), written in place.
        writeFileSync(policyPath, POLICY(2).replace('cores: 1 }', 'cores: 0 }'));
        utimesSync(policyPath, 1_000_000, 1_000_000);
        phase = 1;
        return false;
      }
      if (phase === 1) {
        expect(readFileSync(kafka, 'utf8').trim()).toBe(before);
        if (++unchangedRounds < 3) return false;
        phase = 2;
        hup?.();
        return false;
      }
      return round.changed > 0;
    });
    expect(hup).toBeDefined();
    expect(r.logs.some((l) => l.msg === 'policy reloaded')).toBe(true);
    const kafkaCpus = r.rounds.at(-1)!.allocation!.workloads.find((w) => w.name === 'kafka')!.cpus;
    expect(readFileSync(kafka, 'utf8').trim()).toBe(kafkaCpus.toString());
    expect(kafkaCpus.size).toBe(2 * CpuSet.parse(before).size);
  });

  it.skipIf(!HAVE_FIXTURES)(
    'reads RAID on its own cadence, not every round, and moves it only toward the policy',
    async () => {
      const { root, policyPath } = setup();
      // A storcli controller replaying a real capture with a healthy BBU, its drive in write-through.
      const raid = makeHost({
        drivers: ['megaraid_sas'],
        tools: {
          storcli: { controllers: [{ showAll: M5015_BBU, bbu: IBBU08_DETAIL, cache: { 0: 'RWTD' } }] },
        },
      });
      try {
        // The controller's sysfs entry and the tool, into the cgroup host's root.
        rmSync(join(root, 'sys/class/scsi_host'), { recursive: true, force: true });
        for (const d of ['sys/class/scsi_host', 'opt']) {
          cpSync(join(raid.root, d), join(root, d), { recursive: true, verbatimSymlinks: true });
        }
        writeFileSync(policyPath, `${POLICY(1)}raid: { writeCache: write-back }\n`);
        const shows = () => raid.log().filter((l) => / show( all)?\b/.test(l)).length;
        const perRound: number[] = [];
        // The agent's clock is the test's: 100 ms pass per round, however long a loaded machine makes
        // a round (a real read spawns the tool twice), so the cadence, not the machine, decides.
        let virtualNow = Date.now();
        const clock = vi.spyOn(Date, 'now').mockImplementation(() => virtualNow);
        const r = await drive(
          { ...base(root, policyPath), intervalMs: 20, raidIntervalMs: 1500 },
          (round, n) => {
            expect(round.ok, round.error).toBe(true);
            perRound.push(shows());
            virtualNow += 100;
            return n >= 40;
          },
        ).finally(() => clock.mockRestore());
        // Write-back set once, while the BBU is healthy; nothing set again afterwards.
        const sets = raid.log().filter((l) => / set /.test(l));
        expect(sets, raid.log().join('\n')).toEqual([expect.stringMatching(/\/c0\/v0 set wrcache=WB/)]);
        // The vendor tool is asked in the first round, then once 1.5 s (15 rounds) have passed:
        // rounds 1, 16 and 31 of 40.
        const reads = perRound.filter((v, i) => i === 0 || v !== perRound[i - 1]).length;
        expect(r.rounds.length).toBe(40);
        expect(reads, JSON.stringify(perRound)).toBe(3);
      } finally {
        raid.cleanup();
      }
    },
  );

  it('backs off a change that keeps failing instead of retrying every interval', async () => {
    const { root, cg, policyPath } = setup();
    // A cgroup that vanished: every write to it fails (ENOENT) and is rolled back.
    writeFileSync(join(cg, 'kafka.slice/cpuset.cpus'), '\n');
    const rmdir = await import('node:fs').then((fs) => fs.rmSync);
    rmdir(join(cg, 'kafka.slice/cpuset.cpus.partition'));
    // Five rounds, however slow a loaded machine makes them (each waits ~2 s for the vanished file,
    // cgroupfs.ts's settle()); drive()'s cap and the test's timeout only stop a hang.
    const r = await drive(base(root, policyPath), (_round, n) => n >= 5, [], 110_000);
    expect(r.rounds.every((x) => !x.ok)).toBe(true);
    const waits = r.logs
      .filter((l) => l.msg === 'reconcile failed; retrying with backoff')
      .map((l) => Number(l.fields?.retryInMs));
    expect(waits.length).toBeGreaterThanOrEqual(3);
    // 20 ms, 40 ms, 80 ms, ... capped at 200 ms: each wait at least as long as the one before.
    for (let i = 1; i < waits.length; i++) expect(waits[i]!).toBeGreaterThanOrEqual(waits[i - 1]!);
    expect(waits.at(-1)!).toBeGreaterThan(waits[0]!);
  }, 120_000);

  it('a new broker born between rounds is found by the probe and placed without waiting for the interval', async () => {
    // isolate-kafka: a plain-file tree has no kernel to fill a new cgroup with its files.
    const { root, cg, policyPath } = setup(['isolate-kafka', 'hadoop-yarn']);
    writeFileSync(
      policyPath,
      POLICY(1).replace(
        'match: { cgroup: /kafka.slice }',
        "match: { process: { cmdline: 'kafka\\.Kafka' } }",
      ),
    );
    const proc = (pid: number, cmdline: string) => {
      mkdirSync(join(root, 'proc', String(pid)), { recursive: true });
      writeFileSync(join(root, 'proc', String(pid), 'cmdline'), `${cmdline.replaceAll(' ', '\0')}\0`);
      writeFileSync(join(root, 'proc', String(pid), 'cgroup'), '0::/\n');
      writeFileSync(join(root, 'proc', String(pid), 'status'), `Name:\tx\nTgid:\t${pid}\n`);
    };
    const lastPid = (pid: number) =>
      writeFileSync(join(root, 'proc/loadavg'), `0.00 0.00 0.00 1/80 ${pid}\n`);
    proc(100, '/usr/sbin/sshd -D');
    lastPid(100);
    // A 2 s interval: the probe looks 1 s after the first round; without it the second round would come at 2 s with
    // no probe log line, and the test fails on that line, not on timing.
    const r = await drive({ ...base(root, policyPath), intervalMs: 2000 }, (_round, n) => {
      if (n === 1) {
        proc(101, 'java -Xmx6g kafka.Kafka server.properties');
        lastPid(101);
      }
      return n >= 2;
    });
    expect(r.rounds[0]!.ok, r.rounds[0]!.error).toBe(true);
    const probe = r.logs.find((l) => l.msg === 'new matching process; reconciling now');
    expect(probe?.fields?.process).toBe(101);
    // The nudged round moved it (a plain-file /proc cannot show the kernel's move, so its read-back
    // fails here; the move itself is proven against a real kernel in test/vm/agent.test.ts).
    expect(readFileSync(join(cg, 'isolate-kafka/cgroup.procs'), 'utf8')).toContain('101');
  });

  /**
   * Converge with a 10-minute interval, then write a wrong /hadoop-yarn cpuset.cpus from inside the
   * first round's afterRound and wait `settleMs` there; only an inotify-driven round can correct it
   * within the test's cap.
   */
  async function sabotageYarn(settleMs: number) {
    const { root, cg, policyPath } = setup();
    const yarn = join(cg, 'hadoop-yarn/cpuset.cpus');
    let sabotaged = false;
    const r = await drive(
      { ...base(root, policyPath), intervalMs: 600_000 },
      async (round) => {
        if (!sabotaged) {
          expect(round.ok, round.error).toBe(true);
          writeFileSync(yarn, '0-7\n');
          sabotaged = true;
          if (settleMs > 0) await new Promise((resolve) => setTimeout(resolve, settleMs));
          return false;
        }
        return round.changed > 0;
      },
      [],
      20_000,
    );
    return { r, yarn };
  }

  it('a write to a watched cpuset file wakes the agent: corrected without waiting for the interval', async () => {
    const { r, yarn } = await sabotageYarn(0);
    const last = r.rounds.at(-1)!;
    expect(last.changed).toBe(1);
    const flink = last.allocation!.workloads.find((w) => w.name === 'flink')!;
    expect(readFileSync(yarn, 'utf8').trim()).toBe(flink.cpus.toString());
  });

  it('a write that lands while a round still runs brings the next round forward too', async () => {
    // Still inside the round (afterRound is awaited): the watch fires before the agent sleeps.
    const { r } = await sabotageYarn(300);
    expect(r.rounds.at(-1)!.changed).toBe(1);
  });
});
