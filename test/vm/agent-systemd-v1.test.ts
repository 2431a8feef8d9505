// The agent as the systemd service it ships as (systemd/isolate.service) on systemd 252 booted with
// `systemd.unified_cgroup_hierarchy=0` (the pure legacy layout: v1 hierarchies, no cgroup2), one boot.
// On v1 systemd does not manage the cpuset hierarchy: isolate owns it (/isolate-<workload>), so
// kafka.service, matched by unit through systemd's name=systemd hierarchy, is placed by the agent, not
// by AllowedCPUs=. Asserted from /proc/<pid>/task/*/status, /proc/<pid>/cgroup and the cgroup files:
// Kafka on one whole core of one node and YARN off it after convergence, after daemon-reload, and
// after a restart of kafka.service (a new process, born in the cpuset root, that the agent moves).
import { describe, expect, it } from 'vitest';
import { CpuSet } from '../../src/model/cpuset.js';
import { LAYOUTS } from './harness/index.js';
import { parseState, SECTIONS, TASKS, held, waitforShell } from './support/guest.js';
import { standinPolicy } from './support/policy.js';
import { vmScenario } from './support/scenario.js';

const POLICY = standinPolicy({ kafka: 'unit', batch: [{ name: 'yarn', match: 'yarn-v1', weight: 50 }] });

/** The agent's interval in this guest (seconds); waits are counted in intervals, with a cap. */
const INTERVAL_S = 1;
/** Cap of every wait for the agent, in intervals: TCG on a loaded CI host makes a round take seconds. */
const CAP_INTERVALS = 60;

// A YARN container as LinuxContainerExecutor makes one on v1: a cgroup in the cpu,cpuacct hierarchy,
// outside any unit; the subshell joins it before exec, so every thread is born there.
const YARN_CONTAINER_V1 = `#!/bin/bash
set -e
cg=/sys/fs/cgroup/cpu,cpuacct/hadoop-yarn/container_$1
mkdir -p "$cg"
(
  echo "$BASHPID" > "$cg/cgroup.procs"
  exec /usr/local/bin/standin "yarn.container_$1" "\${2:-3}" "\${3:-busy}" </dev/null >/dev/null 2>&1
) &
echo $!
`;

const SCRIPT = String.raw`
CG=/sys/fs/cgroup
${SECTIONS}
${waitforShell({ cap: CAP_INTERVALS * INTERVAL_S * 10 })}
${TASKS}
kpid() { systemctl show -P MainPID kafka.service; }
ypids() { cat $CG/cpu,cpuacct/hadoop-yarn/*/cgroup.procs 2>/dev/null; }
cpusetof() { awk -F: '$2=="cpuset"{print $3}' /proc/$1/cgroup 2>/dev/null; }
# Kafka in /isolate-kafka and every YARN container in /isolate-yarn (the agent's placement).
placed() {
  local k=$(kpid) p
  [ -n "$k" ] && [ "$k" != 0 ] && [ "$(cpusetof $k)" = /isolate-kafka ] || return 1
  for p in $(ypids); do [ "$(cpusetof $p)" = /isolate-yarn ] || return 1; done
  [ -n "$(ypids)" ]
}
# who pid tid Cpus_allowed_list for Kafka's and YARN's threads, and each process's cpuset.
threads() {
  local k=$(kpid) p
  sec "$1"
  echo "kafka-pid=$k"
  echo "kafka-cpus=$(cat $CG/cpuset/isolate-kafka/cpuset.cpus 2>/dev/null)"
  echo "kafka-exclusive=$(cat $CG/cpuset/isolate-kafka/cpuset.cpu_exclusive 2>/dev/null)"
  echo "yarn-cpus=$(cat $CG/cpuset/isolate-yarn/cpuset.cpus 2>/dev/null)"
  echo "yarn-shares=$(cat $CG/cpu,cpuacct/hadoop-yarn/cpu.shares 2>/dev/null)"
  echo "kafka-allowed=$(systemctl show -P AllowedCPUs kafka.service)"
  for p in $k $(ypids); do
    who=yarn; [ "$p" = "$k" ] && who=kafka
    echo "cg $who $p $(cpusetof $p)"
    tasks $who $p
  done
  endsec "$1"
}
settle() { sleep 1; systemctl show -P Version >/dev/null; }

sec layout
systemctl --version | head -1
grep -w cgroup /proc/mounts | awk '{print "mount", $2, $3, $4}'
grep -w cgroup2 /proc/mounts | awk '{print "mount", $2, $3, $4}'
echo "self=$(tr '\n' ' ' < /proc/self/cgroup)"
echo "kafka-sd=$(grep name=systemd /proc/$(kpid)/cgroup)"
endsec layout
sec topology
for c in /sys/devices/system/cpu/cpu[0-9]*; do echo "siblings $(basename $c) $(cat $c/topology/thread_siblings_list)"; done
for n in /sys/devices/system/node/node[0-9]*; do echo "node $(basename $n) $(cat $n/cpulist)"; done
endsec topology

yarn-container 1 3 sleep >/dev/null
sec start; systemctl start isolate.service; echo "rc=$?"; echo "active=$(systemctl is-active isolate.service)"; endsec start
sec converge; waitfor placed; endsec converge
settle
threads converged

systemctl daemon-reload
sec reload; placed && echo held=1 || echo held=0; endsec reload
threads reloaded
sleep $((2 * ${INTERVAL_S}))
threads reloaded-later

OLD=$(kpid)
systemctl restart kafka.service
sec restart
echo "old=$OLD new=$(kpid)"
echo "born=$(cpusetof $(kpid))"
waitfor '[ "$(kpid)" != "$OLD" ] && placed'
endsec restart
settle
threads restarted

sec check; isolate check --policy /etc/isolate/policy.yaml; echo "rc=$?"; endsec check
sec journal; journalctl -u isolate.service -o cat --no-pager | cut -c1-400 | tail -n 150; endsec journal
sec status; systemctl status --no-pager -l isolate.service kafka.service 2>&1 | sed -n 1,40p; endsec status
`;

/** parseState, and the `cg WHO PID CPUSET` lines: each process's cpuset. */
function parse(text: string) {
  const cpusetOf = new Map<number, string>();
  for (const line of text.split('\n')) {
    const c = /^cg (\w+) (\d+) (\S*)$/.exec(line.trim());
    if (c) cpusetOf.set(Number(c[2]), c[3]!);
  }
  return { ...parseState(text), cpusetOf };
}

describe('isolate.service (the agent) under systemd 252 on cgroup v1 (legacy)', () => {
  const { s } = vmScenario('agent-systemd-v1', {
    systemd: true,
    layout: LAYOUTS.twoSocketSmt2,
    unifiedCgroupHierarchy: false,
    script: SCRIPT,
    standins: { kafkaAtBoot: true, kafkaThreads: 6, kafkaBusy: false },
    policy: POLICY,
    agentInterval: `${INTERVAL_S}s`,
    files: { '/usr/local/bin/yarn-container': YARN_CONTAINER_V1 },
    timeoutMs: 600_000,
  });
  /** A section, with what the agent logged, for a failure message. */
  const ctx = (n: string) =>
    `--- ${n} ---\n${s(n)}\n--- agent journal ---\n${s('journal')}\n--- status ---\n${s('status')}`;

  /** Whole cores (thread siblings) and nodes of the guest, from its sysfs. */
  const topology = () => {
    const siblings = new Set<string>();
    const nodes: CpuSet[] = [];
    for (const line of s('topology').split('\n')) {
      const sib = /^siblings cpu\d+ (\S+)$/.exec(line.trim());
      const node = /^node node\d+ (\S+)$/.exec(line.trim());
      if (sib) siblings.add(CpuSet.parse(sib[1]!).toString());
      if (node) nodes.push(CpuSet.parse(node[1]!));
    }
    return { siblings, nodes };
  };

  /** Kafka's and YARN's threads in a phase: Kafka on one whole core of one node, YARN off it. */
  const fenced = (phase: string) => {
    const { kv, tasks, cpusetOf } = parse(s(phase));
    const k = tasks.filter((t) => t.who === 'kafka');
    const y = tasks.filter((t) => t.who === 'yarn');
    expect(k.length, ctx(phase)).toBeGreaterThanOrEqual(7);
    expect(y.length, ctx(phase)).toBeGreaterThanOrEqual(4);
    const kafkaCpus = k[0]!.cpus;
    const { siblings, nodes } = topology();
    expect(siblings.size, s('topology')).toBe(4);
    expect([...siblings], `${phase}: Kafka is not on one whole core\n${ctx(phase)}`).toContain(
      kafkaCpus.toString(),
    );
    expect(nodes.filter((n) => kafkaCpus.isSubsetOf(n)).length, ctx(phase)).toBe(1);
    expect(kv.get('kafka-cpus'), ctx(phase)).toBe(kafkaCpus.toString());
    expect(kv.get('kafka-exclusive'), ctx(phase)).toBe('1');
    for (const t of k)
      expect(t.cpus.toString(), `${phase} kafka tid ${t.tid}\n${ctx(phase)}`).toBe(kafkaCpus.toString());
    for (const t of y) {
      expect(t.cpus.overlaps(kafkaCpus), `${phase} yarn tid ${t.tid} ${t.cpus}\n${ctx(phase)}`).toBe(false);
    }
    for (const t of k) expect(cpusetOf.get(t.pid), ctx(phase)).toBe('/isolate-kafka');
    for (const t of y) expect(cpusetOf.get(t.pid), ctx(phase)).toBe('/isolate-yarn');
    return { kv, kafkaCpus };
  };

  it('systemd 252 boots the pure legacy layout: v1 hierarchies incl. cpuset and name=systemd, no cgroup2', () => {
    const layout = s('layout');
    expect(layout, layout).toMatch(/systemd 252/);
    expect(layout).toMatch(/^mount \/sys\/fs\/cgroup\/cpuset cgroup \S*cpuset/m);
    expect(layout).toMatch(/^mount \/sys\/fs\/cgroup\/systemd cgroup \S*name=systemd/m);
    expect(layout).not.toMatch(/ cgroup2 /);
    expect(layout).toMatch(/kafka-sd=\d+:name=systemd:\/system\.slice\/kafka\.service/);
  });

  it('the agent starts as a Type=notify service and converges: Kafka on one whole core, YARN off it', () => {
    expect(s('start'), ctx('start')).toMatch(/rc=0\s+active=active/);
    expect(held(s('converge')), ctx('converge')).toBe(true);
    const { kv } = fenced('converged');
    // On v1 the fence is isolate's cpuset, not systemd's AllowedCPUs= (a cgroup v2 property).
    expect(kv.get('kafka-allowed'), ctx('converged')).toBe('');
    expect(kv.get('yarn-shares'), ctx('converged')).toBe('512');
  });

  it('the fence survives systemctl daemon-reload (at once and after two intervals)', () => {
    expect(s('reload'), ctx('reload')).toMatch(/held=1/);
    const a = fenced('reloaded');
    const b = fenced('reloaded-later');
    expect(b.kafkaCpus.toString()).toBe(a.kafkaCpus.toString());
  });

  it('after systemctl restart kafka.service the agent places the new Kafka process', () => {
    const m = /old=(\d+) new=(\d+)/.exec(s('restart'));
    expect(m, ctx('restart')).not.toBeNull();
    expect(m![2], ctx('restart')).not.toBe(m![1]);
    expect(held(s('restart')), ctx('restart')).toBe(true);
    const { kv } = fenced('restarted');
    expect(kv.get('kafka-pid')).toBe(m![2]);
    expect(fenced('restarted').kafkaCpus.toString()).toBe(fenced('converged').kafkaCpus.toString());
  });

  it('the agent logged the move of the restarted Kafka process out of the cpuset root', () => {
    const pid = /new=(\d+)/.exec(s('restart'))?.[1];
    const events = s('journal')
      .split('\n')
      .filter((l) => l.startsWith('{') && l.endsWith('}'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(
      events.some((e) => e.msg === 'policy loaded'),
      ctx('journal'),
    ).toBe(true);
    expect(
      events.find((e) => e.msg === 'corrected' && e.setting === 'cgroup.procs' && e.to === pid),
      ctx('journal'),
    ).toMatchObject({ workload: 'kafka', target: 'cpuset:/isolate-kafka', from: '/' });
  });

  // v1 has no partition to take Kafka's CPUs from unbound kernel threads; check lists them as INFO
  // (not a WARNING: nothing the policy could fence) and exits 0 with the workloads converged.
  it('isolate check exits 0 (OK) and reports the unbound kernel threads v1 cannot fence as INFO', () => {
    const c = s('check');
    expect(c, ctx('check')).toMatch(/^ISOLATE OK - kafka alone on CPUs \S+;.* violations=0 /m);
    expect(c, ctx('check')).toMatch(/cgroup layout: legacy \(cgroup v1\)/);
    expect(c, ctx('check')).toMatch(
      /INFO: \d+ unbound kernel thread\(s\) may run on the exclusive CPUs .*cgroup v1 has no cpuset partition/,
    );
    expect(c, ctx('check')).toMatch(/^rc=0$/m);
  });
});
