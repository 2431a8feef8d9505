// Real-kernel scenario for cgroup v1: one boot of the two-socket SMT2 guest runs two layouts in turn.
// legacy: v1 cpuset, cpu,cpuacct and memory mounted by hand on a tmpfs (no cgroup2);
// hybrid: cgroup2 at /sys/fs/cgroup/unified plus v1 cpuset and cpu,cpuacct.
// Each has a YARN-like hierarchy in cpu,cpuacct (a NodeManager that forks containers, a container
// started before apply and one after), a Kafka stand-in and a root process. Every assertion reads
// /proc/<pid>/task/*/status and the cgroup files as the guest dumps them, never isolate's report.
import { describe, expect, it } from 'vitest';
import { CpuSet } from '../../src/model/cpuset.js';
import { numaMapsAnonBytes } from '../../src/audit/numa.js';
import { LAYOUTS } from './harness/index.js';
import { isKernelThread, parsePairs, parseThreads, pidsMatching, snapDiff } from './support/guest.js';
import { standinPolicy } from './support/policy.js';
import { vmScenario } from './support/scenario.js';

const policy = (strict: boolean, memory: boolean) =>
  standinPolicy({
    strict,
    kafka: 'cmdline',
    batch: [
      {
        name: 'yarn',
        match: 'yarn-v1',
        memory: memory ? { high: '256M', max: '512M' } : undefined,
        weight: 50,
      },
    ],
  });

const V1LIB = String.raw`
V1FILES="cpuset.cpus cpuset.mems cpuset.cpu_exclusive cpuset.mem_exclusive memory.limit_in_bytes memory.soft_limit_in_bytes memory.memsw.limit_in_bytes cpu.shares"
# The PIDs of a cgroup.procs file, without the NodeManager loop's own short-lived "sleep 0.2".
procs() {
  for p in $(sort -n $1); do
    c=$(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null)
    case "$c" in ''|'sleep 0.2 ') ;; *) printf '%s ' $p ;; esac
  done
}
# Every v1 setting isolate may write, in every cgroup of every hierarchy (the roots' task lists churn).
snap1() {
  for h in cpuset cpu,cpuacct memory; do
    [ -d $CG/$h ] || continue
    ( cd $CG/$h && find . -type d | sort | while read d; do
        for f in $V1FILES; do [ -f "$d/$f" ] && echo "$h:$d/$f=$(cat $d/$f)"; done
        [ "$d" != "." ] && echo "$h:$d/cgroup.procs=$(procs $d/cgroup.procs)"
      done )
  done
}
# pid, then the cpuset and cpu hierarchy paths, for every process.
v1cgroups() {
  for p in /proc/[0-9]*; do
    c=$(awk -F: '$2=="cpuset"{print $3}' $p/cgroup 2>/dev/null); u=$(awk -F: '$2=="cpu,cpuacct"{print $3}' $p/cgroup 2>/dev/null)
    [ -n "$c" ] && echo "$(basename $p) $c $u"
  done
}
state1() {
  sec "$1-snap"; snap1; endsec "$1-snap"
  sec "$1-threads"; threads; endsec "$1-threads"
  sec "$1-cgroups"; v1cgroups; endsec "$1-cgroups"
  sec "$1-cmdlines"; cmdlines; endsec "$1-cmdlines"
}
mount_layout() {
  umount $CG 2>/dev/null
  mount -t tmpfs cgroup_root $CG
  if [ "$1" = hybrid ]; then mkdir $CG/unified; mount -t cgroup2 cgroup2 $CG/unified; fi
  for h in $2; do mkdir -p $CG/$h; mount -t cgroup -o $h cgroup $CG/$h; done
}
# A YARN-like hierarchy: a NodeManager (a shell that forks a container whenever /tmp/spawn-<n> appears)
# and a container started before apply, both in cpu,cpuacct:/hadoop-yarn.
yarn() {
  for h in $*; do mkdir -p "$CG/$h/hadoop-yarn/container_01" "$CG/$h/hadoop-yarn/container_02"; done
  sh -c "for h in $*; do echo \$\$ > $CG/\$h/hadoop-yarn/cgroup.procs; done
         while :; do for f in /tmp/spawn-*; do if [ -f \$f ]; then rm \$f; standin late.container 2 busy & fi; done; sleep 0.2; done" &
  sh -c "for h in $*; do echo \$\$ > $CG/\$h/hadoop-yarn/container_01/cgroup.procs; done; exec standin flink.TaskManager 3 busy" &
}
scenario() {
  L=$1; P=/etc/isolate/$L.yaml
  # A broker with 90 MiB of heap on node 1, as one running before isolate would have: allocated while
  # a scratch cpuset held it to node 1, then back in the root cpuset (v1 leaves its pages there).
  standin kafka.Kafka 4 busy 90 &
  KPID=$!
  mkdir $CG/cpuset/scratch; echo 6-7 > $CG/cpuset/scratch/cpuset.cpus; echo 1 > $CG/cpuset/scratch/cpuset.mems
  echo $KPID > $CG/cpuset/scratch/cgroup.procs; sleep 0.3; kill -USR1 $KPID
  # Until the heap is touched (RssAnon >= 88 MiB), at most 120 s: a fixed 2 s was too short for a
  # guest that shares its host core (the heap was 59 of 90 MiB when node 1's share was read). Not 90:
  # this kernel folds a thread's RSS into RssAnon every 64 page faults, so the last up to 256 KiB of a
  # heap touched and then left alone never show, and a wait for all 90 MiB ran to its cap (360 s of
  # scenario against 100, issue 59). The assertion below wants more than 85 MiB on node 1.
  i=0; while [ "$(awk '/^RssAnon:/ {print $2}' /proc/$KPID/status)" -lt 90112 ] && [ $i -lt 600 ]; do sleep 0.2; i=$((i + 1)); done
  sec $L-heap-wait; echo "tries=$i"; endsec $L-heap-wait
  echo $KPID > $CG/cpuset/cgroup.procs; rmdir $CG/cpuset/scratch
  sec $L-numa-before; cat /proc/$KPID/numa_maps; endsec $L-numa-before
  sleep 100000 &
  sleep 1
  state1 $L-before
  sec $L-mountinfo; grep cgroup /proc/self/mountinfo; endsec $L-mountinfo
  isolate plan --dry-run --json --policy $P > /tmp/plan.json 2>&1
  sec $L-plan; cat /tmp/plan.json; endsec $L-plan
  M=$(( ($(grep -c '"backend"' /tmp/plan.json) + 1) / 2 ))
  sec $L-m; echo $M; endsec $L-m
  env ISOLATE_TEST_CRASH_AFTER_STEP=$M node /opt/isolate/dist/cli.js apply --yes --policy $P > /tmp/o 2>&1
  rc=$?
  sec $L-crash-rc; echo $rc; endsec $L-crash-rc
  sec $L-crash-snap; snap1; endsec $L-crash-snap
  run $L-recover isolate rollback
  state1 $L-recovered
  # An apply and its exact rollback.
  run $L-apply0 isolate apply --yes --json --policy $P
  run $L-rollback isolate rollback
  state1 $L-rolled
  # Applied for good: a container the NodeManager forks after apply inherits its cpuset; one started
  # into cpu,cpuacct:/hadoop-yarn/container_02 by someone else is placed by the agent within one round.
  run $L-apply isolate apply --yes --json --policy $P
  touch /tmp/spawn-1
  sh -c "echo \$\$ > $CG/cpu,cpuacct/hadoop-yarn/container_02/cgroup.procs; exec standin late.outsider 2 busy" &
  sleep 2
  state1 $L-late
  run $L-agent isolate agent --once --policy $P
  state1 $L-after
  K=$(cat $CG/cpuset/isolate-kafka/cpuset.cpus)
  # cpu_exclusive: the kernel itself refuses a sibling cpuset overlapping Kafka's CPUs.
  mkdir $CG/cpuset/intruder; echo 0 > $CG/cpuset/intruder/cpuset.mems
  sec $L-overlap; echo $K > $CG/cpuset/intruder/cpuset.cpus; echo "rc=$?"; endsec $L-overlap
  sec $L-overlap-batch; echo $K > $CG/cpuset/isolate-yarn/cpuset.cpus; echo "rc=$?"; endsec $L-overlap-batch
  rmdir $CG/cpuset/intruder
  run $L-check isolate check --json --policy $P
  sec $L-numa-after; cat /proc/$KPID/numa_maps; endsec $L-numa-after
}
# kill -9 every user-space process whose command line matches (busybox has no pkill -f).
killmatch() {
  for p in /proc/[0-9]*; do
    tr '\0' ' ' < $p/cmdline 2>/dev/null | grep -qE "$1" && kill -9 $(basename $p) 2>/dev/null
  done
  sleep 0.5
}
# Back to a bare guest: every process out of the test's cgroups, the cgroups and mounts gone.
cleanup() {
  killmatch 'standin|sleep 100000|for h in'
  for h in cpuset cpu,cpuacct memory; do
    [ -d $CG/$h ] || continue
    for d in $(cd $CG/$h && find . -mindepth 1 -type d | sort -r); do
      for p in $(cat $CG/$h/$d/cgroup.procs); do echo $p > $CG/$h/cgroup.procs 2>/dev/null; done
      rmdir $CG/$h/$d
    done
    umount $CG/$h
  done
  [ -d $CG/unified ] && umount $CG/unified
  umount $CG
  rm -rf /var/lib/isolate
}
`;

const SCRIPT = `
. /harness/lib.sh
. /harness/v1lib.sh
mount_layout legacy "cpuset cpu,cpuacct memory"
yarn cpu,cpuacct memory
scenario legacy
cleanup
mount_layout hybrid "cpuset cpu,cpuacct"
yarn cpu,cpuacct
scenario hybrid
`;

describe('cgroup v1 on a real kernel: legacy and hybrid layouts, YARN in cpu,cpuacct, Kafka + batch', () => {
  const { s } = vmScenario('cgroupv1', {
    layout: LAYOUTS.twoSocketSmt2,
    includeProject: true,
    script: SCRIPT,
    standin: true,
    files: {
      '/harness/v1lib.sh': V1LIB,
      '/etc/isolate/legacy.yaml': policy(true, true),
      '/etc/isolate/hybrid.yaml': policy(false, false),
    },
    timeoutMs: 900_000,
  });

  describe.each(['legacy', 'hybrid'] as const)('%s', (L) => {
    const kafkaCpus = () => {
      const line = s(`${L}-after-snap`)
        .split('\n')
        .find((l) => l.startsWith('cpuset:./isolate-kafka/cpuset.cpus='));
      return CpuSet.parse(line?.split('=')[1] ?? '');
    };

    it('judges the layout from the mount table and plans and applies on it', () => {
      expect(s(`${L}-mountinfo`)).toMatch(L === 'hybrid' ? /cgroup2/ : /cpuset/);
      const plan = JSON.parse(s(`${L}-plan`));
      expect(plan.layout).toMatch(new RegExp(`^${L} .*isolate owns the v1 cpuset hierarchy`));
      // Every cgroup change names its v1 hierarchy (quiet cores' IRQ changes have none to name).
      const cgroupChanges = plan.changes.filter((c: { backend: string }) => c.backend !== 'irq');
      expect(cgroupChanges.length).toBeGreaterThan(0);
      expect(cgroupChanges.every((c: { hierarchy?: string }) => c.hierarchy !== undefined)).toBe(true);
      expect(s(`${L}-apply-rc`).trim(), s(`${L}-apply`)).toBe('0');
      expect(JSON.parse(s(`${L}-apply`)).ok).toBe(true);
    });

    it('gives Kafka one whole core of one node, cpu_exclusive, and runs its threads only there', () => {
      const k = kafkaCpus();
      expect(['2-3', '6-7']).toContain(k.toString());
      expect(s(`${L}-after-snap`)).toContain('cpuset:./isolate-kafka/cpuset.cpu_exclusive=1');
      expect(s(`${L}-after-snap`)).toContain(`cpuset:./isolate-kafka/cpuset.mems=${k.first! < 4 ? 0 : 1}`);
      const cmd = parsePairs(s(`${L}-after-cmdlines`));
      const kafka = pidsMatching(cmd, /kafka\.Kafka/);
      expect(kafka).toHaveLength(1);
      const threads = parseThreads(s(`${L}-after-threads`)).filter((t) => t.pid === kafka[0]);
      expect(threads.length).toBeGreaterThanOrEqual(5);
      for (const t of threads) expect(t.cpuList, `kafka thread ${t.tid}`).toBe(k.toString());
    });

    it("keeps every YARN thread (NodeManager, containers before and after apply) off Kafka's cores", () => {
      const k = kafkaCpus();
      const cmd = parsePairs(s(`${L}-after-cmdlines`));
      const yarn = [
        ...pidsMatching(cmd, /flink\.TaskManager/),
        ...pidsMatching(cmd, /late\.container/),
        ...pidsMatching(cmd, /late\.outsider/),
        ...pidsMatching(cmd, /^sh -c for h in/),
      ];
      expect(yarn.length).toBeGreaterThanOrEqual(4);
      const threads = parseThreads(s(`${L}-after-threads`)).filter((t) => yarn.includes(t.pid));
      for (const t of threads)
        expect(t.cpus.intersect(k).isEmpty, `${t.name} ${t.tid} on ${t.cpuList}`).toBe(true);
      // The forked container inherited the NodeManager's cpuset before the agent ran; the outsider
      // (started into cpu,cpuacct:/hadoop-yarn/container_02 directly) was in the root cpuset then.
      const late = parsePairs(s(`${L}-late-cgroups`));
      const lateCmd = parsePairs(s(`${L}-late-cmdlines`));
      const forked = pidsMatching(lateCmd, /late\.container/)[0]!;
      const outsider = pidsMatching(lateCmd, /late\.outsider/)[0]!;
      expect(late.get(forked)).toMatch(/^\/isolate-yarn /);
      // Started by the scenario's shell: in its cpuset (strict moved that shell to housekeeping).
      expect(late.get(outsider)).toBe(
        `${L === 'legacy' ? '/isolate-housekeeping' : '/'} /hadoop-yarn/container_02`,
      );
      expect(parsePairs(s(`${L}-after-cgroups`)).get(outsider)).toMatch(/^\/isolate-yarn /);
      // agent --once exits with check's code (legacy strict: WARNING for kernel threads, see below).
      expect(s(`${L}-agent-rc`).trim(), s(`${L}-agent`)).toBe(L === 'legacy' ? '1' : '0');
    });

    it(
      L === 'legacy'
        ? "strict: every user-space thread but Kafka's is off its cores"
        : 'not strict: root processes may still use them',
      () => {
        const k = kafkaCpus();
        const kafka = pidsMatching(parsePairs(s(`${L}-after-cmdlines`)), /kafka\.Kafka/);
        const others = parseThreads(s(`${L}-after-threads`)).filter(
          (t) =>
            !kafka.includes(t.pid) && !isKernelThread(t) && t.pid !== 1 && !/^(awk|cat|sh)$/.test(t.name),
        );
        const on = others.filter((t) => !t.cpus.intersect(k).isEmpty);
        if (L === 'legacy') expect(on.map((t) => `${t.name}:${t.cpuList}`)).toEqual([]);
        else expect(on.length).toBeGreaterThan(0);
      },
    );

    it("cpu_exclusive: the kernel refuses a sibling cpuset overlapping Kafka's CPUs", () => {
      expect(s(`${L}-overlap`)).toMatch(/rc=1/);
      expect(s(`${L}-overlap`)).toMatch(/Invalid argument/);
      expect(s(`${L}-overlap-batch`)).toMatch(/rc=1/);
    });

    it("moves the broker's memory to its node (memory_migrate), and check measures it there", () => {
      const node = kafkaCpus().first! < 4 ? '0' : '1';
      const before = numaMapsAnonBytes(s(`${L}-numa-before`));
      const after = numaMapsAnonBytes(s(`${L}-numa-after`));
      const total = (m: Record<string, number>) => Object.values(m).reduce((a, b) => a + b, 0);
      // Before isolate: the 90 MiB heap on node 1.
      expect(before['1'] ?? 0, s(`${L}-numa-before`)).toBeGreaterThan(85 * 2 ** 20);
      // After: on Kafka's node, whichever it is.
      expect(after[node] ?? 0, s(`${L}-numa-after`)).toBeGreaterThan(0.9 * total(after));
      const kafka = JSON.parse(s(`${L}-check`)).workloads.find((w: { name: string }) => w.name === 'kafka');
      expect(kafka.memoryByNode[node]).toBeGreaterThan(85 * 2 ** 20);
      expect(kafka.offNodeBytes).toBeLessThan(0.1 * total(kafka.memoryByNode));
    });

    it('check judges the v1 layout and finds every promise kept', () => {
      const out = JSON.parse(s(`${L}-check`));
      expect(JSON.stringify(out.findings)).toMatch(new RegExp(`cgroup layout: ${L}`));
      expect(out.violations, s(`${L}-check`)).toEqual([]);
      expect(out.workloads[0].outside).toEqual([]);
      expect(out.workloads[0].effectiveCpus).toBe(kafkaCpus().toString());
      expect(out.pendingChanges).toBe(0);
      // v1 has no partition to take the exclusive CPUs from kernel threads: strict reports them.
      const notOk = out.findings.filter((f: { severity: string }) => f.severity !== 'info');
      if (L === 'legacy') {
        expect(out.status).toBe('WARNING');
        expect(notOk.map((f: { message: string }) => f.message).join('\n')).toMatch(
          /^\d+ unbound kernel thread\(s\)/,
        );
        expect(notOk).toHaveLength(1);
      } else expect(out.status, s(`${L}-check`)).toBe('OK');
    });

    it('rollback restores every v1 file and membership exactly', () => {
      expect(s(`${L}-apply0-rc`).trim(), s(`${L}-apply0`)).toBe('0');
      expect(JSON.parse(s(`${L}-apply0`)).changed).toBeGreaterThan(8);
      expect(s(`${L}-rollback-rc`).trim(), s(`${L}-rollback`)).toBe('0');
      expect(snapDiff(s(`${L}-before-snap`), s(`${L}-rolled-snap`))).toEqual([]);
    });

    it('kill -9 mid-apply, then rollback restores the host exactly', () => {
      expect(s(`${L}-crash-rc`).trim()).toBe('137');
      expect(snapDiff(s(`${L}-before-snap`), s(`${L}-crash-snap`)).length).toBeGreaterThan(0);
      expect(s(`${L}-recover-rc`).trim(), s(`${L}-recover`)).toBe('0');
      expect(snapDiff(s(`${L}-before-snap`), s(`${L}-recovered-snap`))).toEqual([]);
    });
  });
});
