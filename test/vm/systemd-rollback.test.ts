// strict: true under real systemd 252 (Debian bookworm, kernel 6.1), the way a new user meets it: no
// Delegate=yes unit anywhere, so nothing but isolate's own units makes systemd enable cpuset in
// system.slice. One boot, two rounds, each compared against the host before isolate:
//
// A. The window between apply and Kafka's restart. apply writes the Slice= drop-in, which makes
//    kafka.service kafka.slice's member while it still runs in /system.slice/kafka.service: systemd 252
//    then enables cpuset in system.slice for none of its members and fails to write kafka.service's
//    cpuset.cpus (ENOENT), so Kafka ran on every CPU and node. isolate starts an empty anchor slice in
//    system.slice (system-isolate.slice, AllowedCPUs=) that keeps cpuset enabled there: Kafka's threads
//    are on its cores and node right after apply and after a daemon-reload. Then one rollback (no agent
//    ran) and every cgroup file and unit property is compared with the host before isolate.
// B. The agent (1 s interval) through the faults that broke rollback before: a daemon-reload, Kafka's
//    restart into kafka.slice (partition root), Kafka stopped (systemd drops cpuset at the root, the
//    agent puts it back) and started, hand-made writes into /hadoop-yarn and a set-property mistake,
//    kill -9 of the agent. Then the agent is stopped and ONE rollback must complete (it failed with
//    EBUSY on the root's subtree_control in 4 runs of 4), and the host is compared again.
// Every difference from the host before isolate must be named by the rollback's own output.
import { describe, expect, it } from 'vitest';
import { LAYOUTS } from './harness/index.js';
import { parseShow } from '../../src/systemd/systemctl.js';
import { LIB, held, waitforShell } from './support/guest.js';
import { standinPolicy } from './support/policy.js';
import { vmScenario } from './support/scenario.js';
import { KAFKA_UP } from './support/systemd-guest.js';

const POLICY = standinPolicy({ strict: true, kafka: 'unit', batch: [{ name: 'flink', match: 'yarn' }] });

const PROPS = [
  'Id',
  'LoadState',
  'ActiveState',
  'Slice',
  'ControlGroup',
  'AllowedCPUs',
  'AllowedMemoryNodes',
  'MemoryMin',
  'MemoryLow',
  'MemoryHigh',
  'MemoryMax',
  'CPUWeight',
];

const SCRIPT = `
${LIB}
${waitforShell()}
${KAFKA_UP}
settle() { sleep 1; systemctl show -P Version >/dev/null; }
# Every setting file of every cgroup (process lists left out: they churn), every loaded unit's
# resource properties, and every drop-in file.
full() {
  sec "$1-cg"; snap | grep -v '/cgroup.procs='; endsec "$1-cg"
  sec "$1-units"
  systemctl show ${PROPS.map((p) => `-p ${p}`).join(' ')} -- $(systemctl list-units --all --plain --no-legend --type=slice,scope,service,mount | awk '{print $1}')
  endsec "$1-units"
  sec "$1-dropins"; find /etc/systemd/system /run/systemd/system.control -name '*.conf' 2>/dev/null | sort; endsec "$1-dropins"
}
kafka() {
  sec "$1"
  P=$(systemctl show -P MainPID kafka.service)
  echo "cgroup=$(sed -n 's/^0:://p' /proc/$P/cgroup)"
  for t in /proc/$P/task/*; do echo "task $(basename $t) $(awk '/^Cpus_allowed_list:/{c=$2} /^Mems_allowed_list:/{m=$2} END{print c, m}' $t/status)"; done
  endsec "$1"
}

sec boot; echo "kafka=$(systemctl is-active kafka.service)"; endsec boot
mkdir -p $CG/hadoop-yarn
yarn-container 1 2 >/dev/null
kafka_up 4
settle
full s0

# --- A: the window between apply and the restart, then one rollback --------------------------
run apply-a isolate apply --yes
settle
kafka a-kafka
sec a-sc; echo "system.slice=$(cat $CG/system.slice/cgroup.subtree_control)"; systemctl show -p ActiveState -p AllowedCPUs system-isolate.slice; endsec a-sc
systemctl daemon-reload; settle
kafka a-reload-kafka
run a-plan isolate plan
run preview-a isolate rollback --dry-run
run rollback-a isolate rollback
settle
full a-rb
kafka a-rb-kafka

# --- B: the agent through faults, then one rollback -------------------------------------------
run apply-b isolate apply --yes
systemctl start isolate.service
settle
systemctl daemon-reload; settle
kafka b-reload-kafka
# Someone stops the anchor: systemd drops cpuset in system.slice at once and Kafka may run anywhere.
# The agent sees the slice inactive and kafka.service's AllowedCPUs= not in force, and repairs both.
K=$(systemctl show -P AllowedCPUs kafka.service | tr ' ' ',')
kcpus() { awk '/^Cpus_allowed_list/{print $2}' /proc/$(systemctl show -P MainPID kafka.service)/status; }
CURSOR=$(journalctl -n 1 --show-cursor --no-pager -q | sed -n 's/^-- cursor: //p')
systemctl stop system-isolate.slice
sec b-unrealised
echo "right-after=$(kcpus)"
waitfor '[ "$(kcpus)" = "$K" ]'
echo "after=$(kcpus) want=$K"
sleep 2
journalctl -u isolate.service --after-cursor="$CURSOR" -o cat --no-pager | grep '"msg":"corrected"'
endsec b-unrealised
systemctl restart kafka.service; kafka_up 4
sec b-restart; waitfor '[ "$(cat $CG/kafka.slice/cpuset.cpus.partition 2>/dev/null)" = root ]'; endsec b-restart
kafka b-restart-kafka
systemctl stop kafka.service; settle
sec b-stopped; echo "root=$(cat $CG/cgroup.subtree_control)"; endsec b-stopped
systemctl start kafka.service; kafka_up 4
echo 0-7 > $CG/hadoop-yarn/cpuset.cpus
systemctl set-property --runtime user.slice AllowedCPUs=0-7
sec b-fixed; waitfor '[ "$(cat $CG/hadoop-yarn/cpuset.cpus)" != 0-7 ] && [ "$(systemctl show -P AllowedCPUs user.slice)" != 0-7 ] && [ "$(cat $CG/kafka.slice/cpuset.cpus.partition 2>/dev/null)" = root ]'; endsec b-fixed
kill -9 $(systemctl show -P MainPID isolate.service); sleep 7
sec b-agent; echo "active=$(systemctl is-active isolate.service)"; journalctl -u isolate.service -o cat --no-pager | grep -c '"msg":"corrected"'; endsec b-agent
kafka b-kafka
systemctl stop isolate.service
run rollback-b isolate rollback
settle
full b-rb
kafka b-rb-kafka
systemctl restart kafka.service; kafka_up 4; settle
full b-restart-rb
kafka b-restart-rb-kafka
exit 0
`;

describe('strict: true under systemd 252 without a delegated unit: the window before the restart, and one rollback after the agent', () => {
  const vm = vmScenario('systemd-rollback', {
    systemd: true,
    layout: LAYOUTS.twoSocketSmt2,
    script: SCRIPT,
    standins: { kafkaThreads: 3 },
    policy: POLICY,
    agentInterval: '1s',
    timeoutMs: 900_000,
  });
  const s = vm.need;
  const rc = (n: string) => Number(s(`${n}-rc`).trim());
  /** `path/file=value` for every setting file of every cgroup. */
  const files = (phase: string) =>
    new Map(
      s(`${phase}-cg`)
        .split('\n')
        .filter((l) => l.includes('='))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const),
    );
  const units = (phase: string) => new Map(parseShow(s(`${phase}-units`)).map((b) => [b.Id!, b] as const));
  /** Every file and unit property that differs from the host before isolate (units both have). */
  const differences = (phase: string): string[] => {
    const out: string[] = [];
    const a = files('s0');
    const b = files(phase);
    for (const k of new Set([...a.keys(), ...b.keys()])) {
      if (a.get(k) !== b.get(k)) out.push(`${k}: ${a.get(k) ?? '(absent)'} → ${b.get(k) ?? '(absent)'}`);
    }
    const ua = units('s0');
    const ub = units(phase);
    for (const [id, before] of ua) {
      const after = ub.get(id);
      if (!after) continue;
      for (const p of PROPS) {
        if ((before[p] ?? '') !== (after[p] ?? '')) out.push(`${id} ${p}: ${before[p]} → ${after[p]}`);
      }
    }
    for (const id of ub.keys())
      if (!ua.has(id) && ub.get(id)!.LoadState === 'loaded')
        out.push(`${id}: new unit (${ub.get(id)!.ActiveState})`);
    return out.sort();
  };
  const kafka = (phase: string) =>
    s(phase)
      .split('\n')
      .filter((l) => l.startsWith('task '))
      .map((l) => l.split(' '));
  /** Notes the rollback printed (`  note: ...`). */
  const notes = (n: string) =>
    s(n)
      .split('\n')
      .filter((l) => l.startsWith('  note: '))
      .join('\n');
  /**
   * A difference is named when the rollback's notes name its cgroup or that cgroup's top level (a
   * file), or the unit (a unit property, a unit that is new).
   */
  const unnamed = (diffs: string[], said: string) =>
    diffs.filter((d) => {
      const file = /^\.(\/\S+)\/[^/\s]+: /.exec(d);
      if (file) {
        const cg = file[1]!;
        const top = `/${cg.split('/')[1]}`;
        return ![cg, top].some((p) => new RegExp(`${p.replace(/[.]/g, '\\.')}(?![\\w.-])`).test(said));
      }
      const unit = /^([^\s:]+)/.exec(d)?.[1];
      return !(unit && said.includes(unit));
    });
  const cpus = (phase: string) => new Set(kafka(phase).map((t) => t[2]));
  const mems = (phase: string) => new Set(kafka(phase).map((t) => t[3]));
  let fenced = '';

  it('boots with kafka.service in system.slice, no delegated unit', () => {
    expect(s('boot')).toMatch(/kafka=active/);
    expect(files('s0').get('./system.slice/cgroup.subtree_control')).not.toMatch(/cpuset/);
  });

  it('between apply and the restart Kafka is fenced as a unit: its threads on its cores and node, through a daemon-reload', () => {
    expect(rc('apply-a'), s('apply-a')).toBe(0);
    expect(s('apply-a')).toMatch(/systemctl start system-isolate\.slice/);
    expect(s('a-kafka')).toMatch(/^cgroup=\/system\.slice\/kafka\.service$/m);
    expect(kafka('a-kafka').length).toBeGreaterThanOrEqual(4);
    expect([...cpus('a-kafka')]).toHaveLength(1);
    fenced = [...cpus('a-kafka')][0]!;
    expect(['2-3', '6-7']).toContain(fenced);
    expect([...mems('a-kafka')]).toEqual([fenced === '2-3' ? '0' : '1']);
    // The anchor keeps cpuset enabled in system.slice, through a reload too.
    expect(s('a-sc')).toMatch(/^system\.slice=cpuset memory pids$/m);
    expect(s('a-sc')).toMatch(/^ActiveState=active$/m);
    expect([...cpus('a-reload-kafka')]).toEqual([fenced]);
    expect([...mems('a-reload-kafka')]).toEqual([...mems('a-kafka')]);
    // Nothing is left to do: what systemd holds is in force.
    expect(rc('a-plan'), s('a-plan')).toBe(0);
    expect(s('a-plan')).not.toMatch(/not in force/);
    expect(s('a-plan')).toMatch(/Changes: none|No changes/);
  });

  it('one rollback after a plain apply: every cgroup file and unit property as before isolate, or named', () => {
    // The preview (what `isolate_state: absent` shows in check mode) names systemd's properties.
    expect(rc('preview-a'), s('preview-a')).toBe(0);
    expect(s('preview-a')).toMatch(/kafka\.service AllowedCPUs/);
    expect(rc('rollback-a'), s('rollback-a')).toBe(0);
    const diffs = differences('a-rb');
    console.log(`after rollback A:\n  ${diffs.join('\n  ')}\n${s('rollback-a')}`);
    expect(unnamed(diffs, notes('rollback-a'))).toEqual([]);
    // The controller systemd enabled at the root for isolate's AllowedCPUs= is disabled again, so no
    // cgroup keeps cpuset files (the populated /hadoop-yarn could not be emptied otherwise).
    expect(files('a-rb').get('./cgroup.subtree_control')).toBe(files('s0').get('./cgroup.subtree_control'));
    expect(files('a-rb').get('./hadoop-yarn/cpuset.cpus')).toBeUndefined();
    expect([...cpus('a-rb-kafka')]).toEqual(['0-7']);
    expect([...mems('a-rb-kafka')]).toEqual(['0-1']);
  });

  it('the agent keeps Kafka fenced through a reload, its restart into kafka.slice, and a stop and start', () => {
    expect(rc('apply-b'), s('apply-b')).toBe(0);
    expect([...cpus('b-reload-kafka')]).toEqual([fenced]);
    // The anchor stopped by hand: Kafka on every CPU at once, then fenced again by the agent.
    expect(s('b-unrealised')).toMatch(/^right-after=0-7$/m);
    expect(held(s('b-unrealised')), s('b-unrealised')).toBe(true);
    expect(s('b-unrealised')).toMatch(new RegExp(`^after=${fenced} want=${fenced}$`, 'm'));
    // The agent started the anchor again, and set what systemd held but had not in force again
    // (systemd rewrote the CPUs itself once the anchor ran; the memory nodes it left empty).
    const fixes = s('b-unrealised')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, string>);
    expect(fixes.find((f) => f.target === 'system-isolate.slice')).toMatchObject({
      setting: 'ActiveState',
      to: 'active',
    });
    expect(
      fixes.find((f) => f.target === 'kafka.service' && /not in force/.test(f.note ?? '')),
      s('b-unrealised'),
    ).toBeDefined();
    expect(held(s('b-restart')), s('b-restart')).toBe(true);
    expect(s('b-restart-kafka')).toMatch(/^cgroup=\/kafka\.slice\/kafka\.service$/m);
    expect([...cpus('b-restart-kafka')]).toEqual([fenced]);
    expect(held(s('b-fixed')), s('b-fixed')).toBe(true);
    expect([...cpus('b-kafka')]).toEqual([fenced]);
    const corrected = Number(s('b-agent').trim().split('\n').at(-1));
    expect(corrected).toBeGreaterThanOrEqual(3);
  });

  it('after the agent corrected drift several times ONE rollback completes, and the host is as before isolate or the difference is named', () => {
    expect(rc('rollback-b'), s('rollback-b')).toBe(0);
    const diffs = differences('b-rb');
    console.log(`after rollback B:\n  ${diffs.join('\n  ')}\n${s('rollback-b')}`);
    expect(unnamed(diffs, notes('rollback-b'))).toEqual([]);
    expect(files('b-rb').get('./cgroup.subtree_control')).toBe(files('s0').get('./cgroup.subtree_control'));
    expect([...cpus('b-rb-kafka')]).toEqual(['0-7']);
    expect([...mems('b-rb-kafka')]).toEqual(['0-1']);
    // After Kafka's restart it runs in system.slice again; what is left is what the rollback named.
    expect(s('b-restart-rb-kafka')).toMatch(/^cgroup=\/system\.slice\/kafka\.service$/m);
    const later = differences('b-restart-rb');
    console.log(`after Kafka's restart:\n  ${later.join('\n  ')}`);
    expect(unnamed(later, notes('rollback-b'))).toEqual([]);
  });
});
