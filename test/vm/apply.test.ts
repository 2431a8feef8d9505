// Real-kernel scenario: apply / check / rollback on a two-socket SMT2 guest with a fake systemd
// layout, a Kafka stand-in and a Flink stand-in. Every assertion reads /proc/<pid>/task/*/status
// and the cgroup files as dumped by the guest, never isolate's own report.
import { describe, expect, it } from 'vitest';
import { CpuSet } from '../../src/model/cpuset.js';
import { LAYOUTS } from './harness/index.js';
import {
  isKernelThread,
  parsePairs,
  parseThreads,
  pidsMatching,
  snapDiff,
  snapLines,
} from './support/guest.js';
import { standinPolicy } from './support/policy.js';
import { vmScenario } from './support/scenario.js';

const POLICY = standinPolicy({
  strict: true,
  kafka: 'cmdline',
  kafkaMemory: { low: '64M', mems: 'local' },
  batch: [{ name: 'flink', match: 'cmdline', memory: { high: '512M' }, weight: 10 }],
});

const SCRIPT = `
. /harness/lib.sh
P=/etc/isolate/policy.yaml
fake_host
standin kafka.Kafka 6 busy 48 &
KAFKA=$!
standin flink.TaskManager 3 busy &
sleep 1
state before
run plan isolate plan --verbose --dry-run --policy $P
run apply isolate apply --yes --json --policy $P
state after
# Started after apply: inherit the fence from their cgroup.
sh -c "echo \\$\\$ > $CG/isolate-flink/cgroup.procs; exec standin late.batch 2 busy" &
LATE1=$!
sh -c "echo \\$\\$ > $CG/system.slice/sshd.service/cgroup.procs; exec standin late.sshd 2 sleep" &
LATE2=$!
sleep 1
kill -USR1 $KAFKA
for i in $(seq 60); do [ $(cat $CG/isolate-kafka/memory.current) -gt 45000000 ] && break; sleep 0.5; done
state late
sec numa; cat $CG/isolate-kafka/memory.numa_stat; endsec numa
run apply2 isolate apply --yes --json --policy $P
run check-ok isolate check --json --policy $P
kill $LATE1 $LATE2
sleep 1
run rollback isolate rollback
state rolled
run rollback2 isolate rollback
# Apply again, break the host (drop the partition, widen init.scope), check, fix, roll everything back.
run apply3 isolate apply --yes --json --policy $P
echo member > $CG/isolate-kafka/cpuset.cpus.partition
echo 0-7 > $CG/init.scope/cpuset.cpus
state broken
run check-broken isolate check --json --policy $P
run apply-fix isolate apply --yes --json --policy $P
run check-fixed isolate check --policy $P
run rollback-fix isolate rollback
state unfixed
`;

describe('apply on a real kernel: two sockets SMT2, strict, Kafka + Flink stand-ins', () => {
  const { s } = vmScenario('apply-two-socket', {
    layout: LAYOUTS.twoSocketSmt2,
    includeProject: true,
    script: SCRIPT,
    standin: true,
    policy: POLICY,
    timeoutMs: 600_000,
  });

  /** Kafka's CPUs as the kernel has them, from the cgroup files. */
  const kafkaCpus = (phase: string) =>
    CpuSet.parse(snapLines(s(`${phase}-snap`)).get('./isolate-kafka/cpuset.cpus') ?? '');

  it('plans and applies', () => {
    expect(s('plan-rc').trim(), s('plan')).toBe('0');
    expect(s('apply-rc').trim(), s('apply')).toBe('0');
    const out = JSON.parse(s('apply'));
    expect(out.ok).toBe(true);
    expect(out.changed).toBeGreaterThan(5);
  });

  it('gives Kafka one whole core on one node, as a valid partition root', () => {
    const k = kafkaCpus('after');
    // Whole cores of twoSocketSmt2 are (0,1) (2,3) (4,5) (6,7); one housekeeping core per package.
    expect(['2-3', '6-7']).toContain(k.toString());
    const snap = snapLines(s('after-snap'));
    expect(snap.get('./isolate-kafka/cpuset.cpus.partition')).toBe('root');
    expect(snap.get('./isolate-kafka/cpuset.mems')).toBe(k.first! < 4 ? '0' : '1');
  });

  it.each(['after', 'late'])(
    '%s: every Kafka thread runs only on its cores; no other user thread can run there',
    (phase) => {
      const k = kafkaCpus('after');
      const threads = parseThreads(s(`${phase}-threads`));
      const cmd = parsePairs(s(`${phase}-cmdlines`));
      const kafka = new Set(pidsMatching(cmd, /^standin kafka\.Kafka/));
      expect(kafka.size).toBe(1);
      const kt = threads.filter((t) => kafka.has(t.pid));
      expect(kt.length).toBe(7);
      for (const t of kt) expect(t.cpus.toString(), `kafka tid ${t.tid}`).toBe(k.toString());
      const others = threads.filter((t) => !kafka.has(t.pid) && !isKernelThread(t));
      expect(others.length).toBeGreaterThanOrEqual(8);
      const bad = others.filter((t) => t.cpus.overlaps(k));
      expect(bad.map((t) => `${t.pid}/${t.tid} ${t.name} ${t.cpuList}`)).toEqual([]);
    },
  );

  it('moves the Flink stand-in (all threads, siblings included) off Kafka and into its cgroup', () => {
    const k = kafkaCpus('after');
    const cmd = parsePairs(s('after-cmdlines'));
    const flink = pidsMatching(cmd, /^standin flink\.TaskManager/);
    expect(flink).toHaveLength(1);
    expect(parsePairs(s('before-cgroups')).get(flink[0]!)).toBe('/');
    expect(parsePairs(s('after-cgroups')).get(flink[0]!)).toBe('/isolate-flink');
    const ft = parseThreads(s('after-threads')).filter((t) => t.pid === flink[0]);
    expect(ft).toHaveLength(4);
    const before = parseThreads(s('before-threads')).filter((t) => t.pid === flink[0]);
    expect(before.every((t) => t.cpus.overlaps(k))).toBe(true); // it really was on Kafka's CPUs
    for (const t of ft) {
      expect(t.cpus.overlaps(k)).toBe(false);
      for (const c of k) expect(t.cpus.has(c ^ 1)).toBe(false); // nor on a sibling of Kafka's CPUs
    }
    const snap = snapLines(s('after-snap'));
    expect(snap.get('./isolate-flink/cpu.weight')).toBe('10');
    expect(snap.get('./isolate-flink/memory.high')).toBe(String(512 * 2 ** 20));
  });

  it('batch processes started after apply inherit the fence', () => {
    const k = kafkaCpus('after');
    const cmd = parsePairs(s('late-cmdlines'));
    const cgs = parsePairs(s('late-cgroups'));
    const late = pidsMatching(cmd, /^standin late\./);
    expect(late).toHaveLength(2);
    expect(late.map((p) => cgs.get(p)).sort()).toEqual(['/isolate-flink', '/system.slice/sshd.service']);
    const lt = parseThreads(s('late-threads')).filter((t) => late.includes(t.pid));
    expect(lt).toHaveLength(6);
    for (const t of lt) expect(t.cpus.overlaps(k)).toBe(false);
  });

  it("keeps Kafka's memory on its node", () => {
    const k = kafkaCpus('after');
    const node = k.first! < 4 ? 0 : 1;
    const anon = /^anon (.*)$/m.exec(s('numa'))?.[1] ?? '';
    const per = Object.fromEntries(
      [...anon.matchAll(/N(\d+)=(\d+)/g)].map((m) => [Number(m[1]), Number(m[2])]),
    );
    expect(per[node]).toBeGreaterThan(40 * 2 ** 20);
    expect(per[1 - node] ?? 0).toBeLessThan(2 ** 20);
  });

  it('a second apply on the unchanged host makes zero changes', () => {
    expect(s('apply2-rc').trim(), s('apply2')).toBe('0');
    expect(JSON.parse(s('apply2')).changed).toBe(0);
  });

  it('check passes on the applied host, fails on a broken one, passes once fixed', () => {
    expect(s('check-ok-rc').trim(), s('check-ok')).toBe('0');
    expect(JSON.parse(s('check-ok')).status).toBe('OK');
    expect(s('check-broken-rc').trim(), s('check-broken')).toBe('2');
    const broken = JSON.parse(s('check-broken'));
    expect(broken.status).toBe('CRITICAL');
    expect(broken.violations.length).toBeGreaterThan(0);
    expect(s('apply-fix-rc').trim(), s('apply-fix')).toBe('0');
    expect(s('check-fixed-rc').trim(), s('check-fixed')).toBe('0');
    expect(s('check-fixed')).toMatch(/^ISOLATE OK/);
  });

  it('rollback restores every file exactly; a second rollback has nothing to do', () => {
    expect(s('rollback-rc').trim(), s('rollback')).toBe('0');
    expect(snapDiff(s('before-snap'), s('rolled-snap'))).toEqual([]);
    const cgs = parsePairs(s('rolled-cgroups'));
    for (const p of pidsMatching(parsePairs(s('rolled-cmdlines')), /^standin (kafka|flink)/))
      expect(cgs.get(p)).toBe('/');
    expect(s('rollback2')).toMatch(/Nothing to roll back/);
  });

  it('rollback after apply, hand-made breakage and a fixing apply restores the host from before the first of them', () => {
    expect(s('apply3-rc').trim(), s('apply3')).toBe('0');
    expect(s('rollback-fix-rc').trim(), s('rollback-fix')).toBe('0');
    // Not the broken state: the fix's journal alone would restore that; the baseline keeps what
    // apply3 found, so the hand-made values are gone too.
    expect(snapDiff(s('rolled-snap'), s('unfixed-snap'))).toEqual([]);
    expect(snapDiff(s('broken-snap'), s('unfixed-snap'))).not.toEqual([]);
  });
});
