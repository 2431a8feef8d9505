// Real-kernel scenario: kill -9 at several points of an apply, injected failures (a target cgroup
// removed mid-apply, an impossible cpuset, a vanished PID) and the lock. Every case must end with
// every cgroup file exactly as before, checked from the guest's own snapshot of the files.
import { describe, expect, it } from 'vitest';
import { LAYOUTS } from './harness/index.js';
import { snapDiff } from './support/guest.js';
import { standinPolicy } from './support/policy.js';
import { vmScenario } from './support/scenario.js';

const POLICY = standinPolicy({
  strict: true,
  kafka: 'cmdline',
  kafkaMemory: { low: '32M', mems: 'local' },
  batch: [
    { name: 'flink', match: 'cmdline', memory: { high: '256M' }, weight: 10 },
    { name: 'yarn', match: 'yarn', memory: { high: '512M' } },
  ],
});

// An impossible cpuset: CPU 100 does not exist on an 8-CPU guest (EINVAL), after four good writes.
const BAD_PLAN = JSON.stringify({
  changes: [
    { backend: 'cgroupfs', target: '/', setting: 'cgroup.subtree_control', from: '', to: 'cpuset' },
    { backend: 'cgroupfs', target: '/isolate-x', setting: 'mkdir', from: null, to: 'present' },
    { backend: 'cgroupfs', target: '/isolate-x', setting: 'cpuset.mems', from: null, to: '0' },
    { backend: 'cgroupfs', target: '/hadoop-yarn', setting: 'cpuset.cpus', from: null, to: '0-3' },
    { backend: 'cgroupfs', target: '/isolate-x', setting: 'cpuset.cpus', from: null, to: '100' },
  ],
});

const SCRIPT = `
. /harness/lib.sh
P=/etc/isolate/policy.yaml
fake_host
standin kafka.Kafka 4 busy &
standin flink.TaskManager 2 busy &
sleep 1
sec before-snap; snap; endsec before-snap
isolate plan --dry-run --json --policy $P > /tmp/plan.json
eval "$(node -e '
const c = require("/tmp/plan.json").changes;
const k = c.findIndex((x) => x.target === "/isolate-flink" && x.setting !== "mkdir") + 1;
console.log("N=" + c.length + " M=" + Math.ceil(c.length / 2) + " K=" + k);
')"
sec idx; echo "$N $M $K"; endsec idx
sec plan; cat /tmp/plan.json; endsec plan

crash() {
  name=$1; var=$2; rec=$3
  env $var node /opt/isolate/dist/cli.js apply --yes --policy $P > /tmp/o 2>&1
  rc=$?
  sec $name-crash-rc; echo $rc; endsec $name-crash-rc
  sec $name-journal; grep '"state"' /var/lib/isolate/journal.json; endsec $name-journal
  [ "$rec" = apply ] && run $name-recover isolate apply --yes --policy $P
  run $name-rollback isolate rollback
  sec $name-snap; snap; endsec $name-snap
}
crash at1 ISOLATE_TEST_CRASH_AT_STEP=1 rollback
crash after2 ISOLATE_TEST_CRASH_AFTER_STEP=2 rollback
crash atM ISOLATE_TEST_CRASH_AT_STEP=$M apply
crash afterM ISOLATE_TEST_CRASH_AFTER_STEP=$M rollback
crash afterN ISOLATE_TEST_CRASH_AFTER_STEP=$N rollback

# Lock: a second apply while the first is paused fails at once naming the holder.
rm -f /run/isolate.paused
( env ISOLATE_TEST_PAUSE_AT_STEP=1 node /opt/isolate/dist/cli.js apply --yes --policy $P > /tmp/first 2>&1; echo $? > /tmp/first-rc ) &
FIRST=$!
for i in $(seq 600); do [ -f /run/isolate.paused ] && break; sleep 0.2; done
sec holder; cat /run/isolate.lock; endsec holder
run second isolate apply --yes --policy $P
rm -f /run/isolate.paused
wait $FIRST
sec first-rc; cat /tmp/first-rc; endsec first-rc
run lock-rollback isolate rollback
sec lock-snap; snap; endsec lock-snap

# A target cgroup removed mid-apply.
( env ISOLATE_TEST_PAUSE_AT_STEP=$K node /opt/isolate/dist/cli.js apply --yes --policy $P > /tmp/o 2>/tmp/e; echo $? > /tmp/rc ) &
BG=$!
for i in $(seq 600); do [ -f /run/isolate.paused ] && break; sleep 0.2; done
rmdir $CG/isolate-flink
rm -f /run/isolate.paused
wait $BG
sec removed-rc; cat /tmp/rc; endsec removed-rc
sec removed; cat /tmp/e; endsec removed
sec removed-snap; snap; endsec removed-snap

# An impossible cpuset, from a saved plan.
ISOLATE_TEST_BARE_PLAN=1 isolate apply --yes --plan /etc/isolate/bad-plan.json > /tmp/o 2>/tmp/e
rc=$?
sec badcpus-rc; echo $rc; endsec badcpus-rc
sec badcpus; cat /tmp/e; endsec badcpus
sec badcpus-snap; snap; endsec badcpus-snap

# A PID that exits between plan and apply: benign, recorded, not an error.
sleep 100000 &
GONE=$!
printf '{"changes":[{"backend":"cgroupfs","target":"/isolate-y","setting":"mkdir","from":null,"to":"present"},{"backend":"cgroupfs","target":"/isolate-y","setting":"cgroup.procs","from":"/","to":"%s"}]}' $GONE > /tmp/gone.json
kill $GONE; wait $GONE 2>/dev/null
run gone env ISOLATE_TEST_BARE_PLAN=1 isolate apply --yes --plan /tmp/gone.json
run gone-rollback isolate rollback
sec gone-snap; snap; endsec gone-snap
`;

describe('kill -9, injected failures and the lock on a real kernel', () => {
  const { s } = vmScenario('crash', {
    layout: LAYOUTS.twoSocketSmt2,
    includeProject: true,
    script: SCRIPT,
    standin: true,
    policy: POLICY,
    files: { '/etc/isolate/bad-plan.json': BAD_PLAN },
    timeoutMs: 800_000,
  });

  it('has a plan long enough to crash in the middle of', () => {
    const [n, m, k] = s('idx').trim().split(' ').map(Number);
    expect(n, s('plan')).toBeGreaterThan(8);
    expect(m).toBeGreaterThan(2);
    expect(k).toBeGreaterThan(1);
  });

  it.each([
    ['killed before the first write', 'at1'],
    ['killed right after the second write', 'after2'],
    ['killed mid-apply, then the next apply finishes the undo first', 'atM'],
    ['killed right after a mid-apply write', 'afterM'],
    ['killed after the last write, before the journal says applied', 'afterN'],
  ])('%s: rollback restores every file exactly', (_how, name) => {
    expect(s(`${name}-crash-rc`).trim()).toBe('137');
    expect(s(`${name}-journal`)).toMatch(/"state": "applying"/);
    if (name === 'atM') {
      expect(s('atM-recover-rc').trim(), s('atM-recover')).toBe('0');
      expect(s('atM-recover')).toMatch(/finished undoing an interrupted apply/);
    }
    expect(s(`${name}-rollback-rc`).trim(), s(`${name}-rollback`)).toBe('0');
    expect(snapDiff(s('before-snap'), s(`${name}-snap`))).toEqual([]);
  });

  it('a second concurrent apply fails at once naming the holder PID', () => {
    expect(s('second-rc').trim()).toBe('1');
    const holder = JSON.parse(s('holder')).pid;
    expect(s('second')).toContain(`another isolate apply is running (PID ${holder},`);
    expect(s('second').trim().split('\n')).toHaveLength(1);
    expect(s('first-rc').trim()).toBe('0');
    expect(snapDiff(s('before-snap'), s('lock-snap'))).toEqual([]);
  });

  it('a target cgroup removed mid-apply ends in a clean rollback and a clear message', () => {
    expect(s('removed-rc').trim(), s('removed')).toBe('2');
    expect(s('removed')).toMatch(
      /apply failed at step \d+\/\d+ \(\/isolate-flink .*ENOENT.*rolled back \d+ changes; the host is as before/,
    );
    expect(s('removed').trim().split('\n')).toHaveLength(1);
    expect(snapDiff(s('before-snap'), s('removed-snap'))).toEqual([]);
  });

  it('an impossible cpuset ends in a clean rollback naming the errno meaning', () => {
    expect(s('badcpus-rc').trim(), s('badcpus')).toBe('2');
    expect(s('badcpus')).toMatch(/step 5\/5 .*\/isolate-x cpuset\.cpus.*(EINVAL|ERANGE) \(/);
    expect(s('badcpus')).toMatch(/rolled back 4 changes; the host is as before/);
    expect(s('badcpus').trim().split('\n')).toHaveLength(1);
    expect(snapDiff(s('before-snap'), s('badcpus-snap'))).toEqual([]);
  });

  it('a PID that exited before its move is skipped, not an error', () => {
    expect(s('gone-rc').trim(), s('gone')).toBe('0');
    expect(s('gone')).toMatch(/skipped: move PID \d+ .*exited/);
    expect(s('gone-rollback-rc').trim(), s('gone-rollback')).toBe('0');
    expect(snapDiff(s('before-snap'), s('gone-snap'))).toEqual([]);
  });
});
