// A real JVM as Kafka (issue 52), under real systemd 252 (Debian bookworm + openjdk-17-jre-headless, a
// rootfs variant), one boot of twoSocketSmt2 (8 CPUs), strict: true, Kafka on 2 whole cores (4 CPUs).
// kafka.service runs support/java/kafka/Kafka.java through a kafka-server-start script that passes
// $KAFKA_OPTS, as Kafka's own scripts do: busy request handlers, network threads, a 64 MB G1 heap that
// collects all the time, and the GC/JIT threads HotSpot starts for the CPUs it sees. The script turns off
// HotSpot's lazy start of GC and compiler threads (-XX:-UseDynamicNumberOf…Threads): every pool is
// then complete from the first second, so the counts read from /proc are the ergonomics exactly, not
// lower bounds, and the evidence is the same on every run.
//
// 1. Started at boot on all 8 CPUs. `plan` names the JVM sized for 8 CPUs that will get 4.
// 2. apply: the JVM is fenced (still in system.slice), `check` warns with its thread counts.
// 3. systemctl restart kafka.service → born fenced in kafka.slice; apply again (partition root):
//    its pools match HotSpot's ergonomics for 4 CPUs, `check` exits 0; every thread of the JVM (GC, JIT,
//    handlers, network) runs on Kafka's CPUs only and no other user thread may run there.
// 4. jvm: { activeProcessorCount: auto, optionsVariable: KAFKA_OPTS }: plan and apply write isolate's
//    drop-in, JAVA_TOOL_OPTIONS=-XX:ActiveProcessorCount=4, the unit's KAFKA_OPTS untouched; after a
//    restart the JVM's environment carries the flag and its command line the operator's options;
//    check exits 0.
// 5. The operator edits KAFKA_OPTS after that apply, in a drop-in systemd reads before isolate's (as
//    an edit of the unit file itself): the restarted JVM runs with the edit and isolate's flag both, and
//    plan has nothing to do. The edit is then taken away again.
// 6. rollback removes every drop-in of isolate's, the JVM one too, with ONE daemon-reload; a restarted
//    JVM has no flag.
import { beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { CpuSet } from '../../src/model/cpuset.js';
import { ergoCompilerThreads, ergoConcGcThreads, ergoParallelGcThreads } from '../../src/model/jvm.js';
import { assignmentOf } from '../../src/model/jvm-options.js';
import { cgroupCpuList } from '../../src/model/systemd.js';
import { parseShow } from '../../src/systemd/systemctl.js';
import { LAYOUTS } from './harness/index.js';
import { isKernelThread, LIB, parsePairs, parseThreads } from './support/guest.js';
import { JVM_ROOTFS_PACKAGES, kafkaClass } from './support/java.js';
import { vmScenario } from './support/scenario.js';

const UNITS = '/etc/systemd/system';
// A `$` and a space in the operator's value: systemctl show quotes and escapes it; it must come back whole.
const OPERATOR_OPTS = '-Xmx64m -XX:+UseG1GC -Dkafka.logs.dir=/var/log/kafka -Disolate.test=a$b';

const policy = (jvm: boolean) =>
  stringify({
    apiVersion: 'isolate/v1',
    kind: 'HostPolicy',
    // No reserved core: 2 whole cores of one node for Kafka, the other node for everything else.
    reserved: { cores: 0 },
    strict: true,
    workloads: [
      {
        name: 'kafka',
        class: 'exclusive',
        cores: 2,
        match: { systemdUnit: 'kafka.service' },
        ...(jvm ? { jvm: { activeProcessorCount: 'auto', optionsVariable: 'KAFKA_OPTS' } } : {}),
      },
    ],
  });

const SCRIPT = String.raw`
${LIB}
SD=${UNITS}/kafka.service.d
settle() { sleep 1; systemctl show -P Version >/dev/null; }
mainpid() { systemctl show -P MainPID kafka.service; }
# The JVM is up when its last application thread runs (HotSpot's own threads come first). Bounded by
# time, not tries: under TCG on a loaded host one systemctl call can take a second.
jvm_up() {
  local t0=$(date +%s) ok=no
  sec "$1"
  while [ $(( $(date +%s) - t0 )) -lt 240 ]; do
    grep -qs "^kafka-network-1$" /proc/$(mainpid)/task/*/comm && { ok=yes; break; }
    sleep 0.5
  done
  echo "up=$ok after=$(( $(date +%s) - t0 ))s"
  endsec "$1"
}
# tid Cpus_allowed_list comm (whole, with its spaces), for every thread of the JVM.
jvm() {
  local p=$(mainpid)
  sec "$1-jvm"
  echo "pid=$p"
  for t in /proc/$p/task/*; do echo "$(basename $t) $(awk '/^Cpus_allowed_list:/{print $2}' $t/status) $(cat $t/comm)"; done
  endsec "$1-jvm"
  sec "$1-cmdline"; tr '\0' '\n' < /proc/$p/cmdline; endsec "$1-cmdline"
  sec "$1-env"; tr '\0' '\n' < /proc/$p/environ | grep -E '^(JAVA_TOOL_OPTIONS|KAFKA_OPTS)=' || true; endsec "$1-env"
}
dump() {
  jvm "$1"
  sec "$1-units"; systemctl show -p Id -p Slice -p ControlGroup -p AllowedCPUs -p Environment kafka.service kafka.slice system.slice; endsec "$1-units"
  sec "$1-threads"; threads; endsec "$1-threads"
  sec "$1-cgroups"; pcgroups; endsec "$1-cgroups"
}
dropins() { sec "$1"; for f in $SD/* /run/systemd/system.control/*/*; do [ -e "$f" ] && echo "$f"; done; endsec "$1"; }

sec boot
echo "version=$(systemctl --version | head -1)"
echo "java=$(java -version 2>&1 | head -1)"
echo "failed=$(systemctl list-units --failed --plain --no-legend | awk '{print $1}' | paste -sd' ')"
endsec boot
jvm_up up-s0
dump s0
dropins dropins-s0

run plan-0 isolate plan
run apply-a isolate apply --yes
settle
dump a
run check-a isolate check

systemctl restart kafka.service
jvm_up up-b
run apply-b isolate apply --yes
settle
dump b
run check-b isolate check

cp /etc/isolate/policy-jvm.yaml /etc/isolate/policy.yaml
run plan-j isolate plan
run apply-j isolate apply --yes
sec j-dropin; cat $SD/50-isolate-jvm.conf; stat -c 'mode=%a' $SD/50-isolate-jvm.conf; endsec j-dropin
systemctl restart kafka.service
jvm_up up-j
settle
dump j
run check-j isolate check
run plan-j2 isolate plan

# The operator's edit of KAFKA_OPTS after isolate's apply, read before isolate's drop-in (10- < 50-).
printf '[Service]\nEnvironment="KAFKA_OPTS=-Xmx64m -XX:+UseG1GC -Disolate.edit=after-apply"\n' > $SD/10-operator-edit.conf
systemctl daemon-reload
systemctl restart kafka.service
jvm_up up-e
settle
dump e
run plan-e isolate plan
rm -f $SD/10-operator-edit.conf
systemctl daemon-reload

REAL_SYSTEMCTL=$(command -v systemctl)
mkdir -p /tmp/sdwrap
printf '#!/bin/sh\necho "$*" >> /tmp/sdwrap/calls\nexec %s "$@"\n' "$REAL_SYSTEMCTL" > /tmp/sdwrap/systemctl
chmod 755 /tmp/sdwrap/systemctl
run rollback env PATH=/tmp/sdwrap:$PATH node /opt/isolate/dist/cli.js rollback
sec rb-calls; cat /tmp/sdwrap/calls; endsec rb-calls
dropins dropins-rb
systemctl restart kafka.service
jvm_up up-rb
dump rb
exit 0
`;

interface JvmThread {
  tid: number;
  cpuList: string;
  name: string;
}

describe('a real JVM as Kafka under systemd 252: pools sized for 8 CPUs, fenced to 4, restarted, pinned', () => {
  const vm = vmScenario(
    'systemd-jvm',
    () => ({
      systemd: true as const,
      layout: LAYOUTS.twoSocketSmt2,
      rootfsPackages: JVM_ROOTFS_PACKAGES,
      script: SCRIPT,
      policy: policy(false),
      files: {
        '/etc/isolate/policy-jvm.yaml': policy(true),
        '/opt/kafka/kafka/Kafka.class': kafkaClass(),
        '/usr/local/bin/kafka-server-start': `#!/bin/sh
# As Kafka's kafka-run-class.sh: the operator's JVM options come in $KAFKA_OPTS, split at spaces.
exec java -XX:-UseDynamicNumberOfGCThreads -XX:-UseDynamicNumberOfCompilerThreads $KAFKA_OPTS -cp /opt/kafka kafka.Kafka 2
`,
        [`${UNITS}/kafka.service`]: `[Unit]
Description=Kafka broker stand-in (a real JVM)

[Service]
Environment="KAFKA_OPTS=${OPERATOR_OPTS}"
ExecStart=/usr/local/bin/kafka-server-start

[Install]
WantedBy=multi-user.target
`,
      },
      symlinks: { [`${UNITS}/multi-user.target.wants/kafka.service`]: `${UNITS}/kafka.service` },
      timeoutMs: 1_080_000,
    }),
    2_300_000,
  );
  beforeAll(() => {
    const timings = [...vm.r.console.matchAll(/^timing (\S+) (\d+s)$/gm)].map((m) => `${m[1]} ${m[2]}`);
    console.log(`systemd-jvm: qemu ${vm.r.durationMs} ms; ${timings.join(', ')}`);
    for (const phase of ['s0', 'a', 'b', 'j', 'e', 'rb']) {
      const c = counts(jvmThreads(phase));
      console.log(`systemd-jvm ${phase}: ${jvmThreads(phase).length} threads, ${JSON.stringify(c)}`);
    }
  });
  const s = vm.need;
  const rc = (n: string) => Number(s(`${n}-rc`).trim());
  const units = (phase: string) =>
    Object.fromEntries(parseShow(s(`${phase}-units`)).map((b) => [b.Id!, b] as const));
  const jvmPid = (phase: string) => Number(/^pid=(\d+)$/m.exec(s(`${phase}-jvm`))?.[1]);
  const jvmThreads = (phase: string): JvmThread[] =>
    s(`${phase}-jvm`)
      .split('\n')
      .map((l) => /^(\d+) (\S+) (.*)$/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ tid: Number(m[1]), cpuList: m[2]!, name: m[3]! }));
  const counts = (ts: JvmThread[]) => ({
    gc: ts.filter((t) => /^GC Thread#\d+$/.test(t.name)).length,
    conc: ts.filter((t) => /^G1 Conc#\d+$/.test(t.name)).length,
    c1: ts.filter((t) => t.name.startsWith('C1 CompilerThre')).length,
    c2: ts.filter((t) => t.name.startsWith('C2 CompilerThre')).length,
  });
  const ergo = (n: number) => ({
    gc: ergoParallelGcThreads(n),
    conc: ergoConcGcThreads(ergoParallelGcThreads(n)),
    ...ergoCompilerThreads(n),
  });
  const kafkaCpus = () => CpuSet.parse(cgroupCpuList(units('b')['kafka.service']!.AllowedCPUs!));

  it('boots a real JVM as kafka.service on all 8 CPUs, its pools sized for 8', () => {
    expect(s('boot'), vm.r.console.slice(-3000)).toMatch(/failed=\s*$/m);
    expect(s('boot')).toMatch(/java=openjdk version "17/);
    for (const phase of ['up-s0', 'up-b', 'up-j', 'up-rb']) expect(s(phase), phase).toMatch(/up=yes/);
    const ts = jvmThreads('s0');
    for (const t of ts) expect(t.cpuList, t.name).toBe('0-7');
    expect(counts(ts)).toEqual(ergo(8));
    // The application's own threads and HotSpot's, in one process.
    const names = ts.map((t) => t.name);
    for (const n of ['kafka-handler-0', 'kafka-network-1', 'VM Thread', 'G1 Refine#0'])
      expect(names).toContain(n);
    expect(s('s0-cmdline')).toMatch(/^kafka\.Kafka$/m);
  });

  it('plan names the JVM sized for 8 CPUs that will get 4: restart it in the rolling-restart window', () => {
    const pid = jvmPid('s0');
    expect(s('plan-0')).toContain(
      `kafka.service's JVM (pid ${pid}) sized its GC/JIT pools for 8 CPUs; after this change it may use 4: restart it in your rolling-restart window`,
    );
  });

  it('after apply the running JVM is fenced to Kafka’s 4 CPUs, and check warns with its thread counts', () => {
    expect(rc('apply-a'), s('apply-a')).toBe(0);
    const cpus = kafkaCpus();
    expect(cpus.size).toBe(4);
    expect(jvmPid('a')).toBe(jvmPid('s0'));
    const ts = jvmThreads('a');
    for (const t of ts) expect(t.cpuList, t.name).toBe(cpus.toString());
    expect(counts(ts)).toEqual(ergo(8));
    expect(rc('check-a'), s('check-a')).not.toBe(0);
    const line = s('check-a')
      .split('\n')
      .find(
        (l) =>
          l.includes(`kafka.service's JVM (pid ${jvmPid('a')})`) || l.includes(`JVM (pid ${jvmPid('a')})`),
      );
    expect(line, s('check-a')).toBeDefined();
    expect(line).toMatch(/WARNING/);
    expect(line).toMatch(/sized its GC\/JIT pools for 8 CPUs and may use 4 now/);
    expect(line).toMatch(/8 GC worker threads \(ergonomics give 4 for 4 CPUs\)/);
    expect(line).toMatch(/2 G1 concurrent threads \(ergonomics give 1 for 4 CPUs\)/);
    expect(line).toMatch(/3 C2 compiler threads \(ergonomics give 2 for 4 CPUs\)/);
    expect(line).toMatch(/before isolate changed its CPUs .*it had 8 CPUs then/);
    expect(line).toMatch(/restart it in your rolling-restart window/);
  });

  it('restarted, the JVM is born fenced: its pools are the ergonomics for 4 CPUs and check exits 0', () => {
    expect(rc('apply-b'), s('apply-b')).toBe(0);
    expect(jvmPid('b')).not.toBe(jvmPid('a'));
    expect(counts(jvmThreads('b'))).toEqual(ergo(4));
    expect(counts(jvmThreads('b'))).toEqual({ gc: 4, conc: 1, c1: 1, c2: 2 });
    expect(rc('check-b'), s('check-b')).toBe(0);
    expect(s('check-b')).not.toMatch(/sized its GC\/JIT pools/);
  });

  it('every thread of the JVM (GC, JIT, handlers, network) runs on Kafka’s CPUs, and no other user thread may run there', () => {
    const cpus = kafkaCpus();
    expect(units('b')['kafka.service']!.ControlGroup).toBe('/kafka.slice/kafka.service');
    const cg = parsePairs(s('b-cgroups'));
    const pid = jvmPid('b');
    const jts = jvmThreads('b');
    expect(jts.length).toBeGreaterThanOrEqual(20);
    for (const t of jts) expect(t.cpuList, t.name).toBe(cpus.toString());
    const all = parseThreads(s('b-threads'));
    // The JVM's threads in the whole-host dump are the ones read above.
    expect(
      all
        .filter((t) => t.pid === pid)
        .map((t) => t.tid)
        .sort(),
    ).toEqual(jts.map((t) => t.tid).sort());
    const others = all.filter(
      (t) => cg.get(t.pid) !== '/kafka.slice/kafka.service' && !isKernelThread(t) && t.cpus.overlaps(cpus),
    );
    expect(others.map((t) => `${t.pid}/${t.tid} ${t.name} ${cg.get(t.pid)} ${t.cpuList}`)).toEqual([]);
  });

  it('jvm.activeProcessorCount: auto writes isolate’s drop-in with JAVA_TOOL_OPTIONS, the unit’s KAFKA_OPTS untouched; the restarted JVM carries the flag', () => {
    const ours = 'JAVA_TOOL_OPTIONS=-XX:ActiveProcessorCount=4';
    expect(s('plan-j')).toContain(
      `drop-in /etc/systemd/system/kafka.service.d/50-isolate-jvm.conf: Environment="${ours}" (takes effect at kafka.service's next restart)`,
    );
    expect(rc('apply-j'), s('apply-j')).toBe(0);
    expect(s('j-dropin')).toMatch(/^# Written by isolate/);
    expect(s('j-dropin')).toContain(`Environment="${ours}"`);
    expect(s('j-dropin')).not.toContain('KAFKA_OPTS');
    expect(s('j-dropin')).toMatch(/mode=644/);
    // systemd passes both: the unit's own KAFKA_OPTS as written, and isolate's JAVA_TOOL_OPTIONS.
    const env = units('j')['kafka.service']!.Environment;
    expect(assignmentOf(env, 'KAFKA_OPTS')).toBe(`KAFKA_OPTS=${OPERATOR_OPTS}`);
    expect(assignmentOf(env, 'JAVA_TOOL_OPTIONS')).toBe(ours);
    // The JVM reads the flag from its environment; the command line is the operator's.
    expect(s('j-env').split('\n')).toContain(ours);
    const args = s('j-cmdline').split('\n');
    expect(args).not.toContain('-XX:ActiveProcessorCount=4');
    expect(args).toContain('-Disolate.test=a$b');
    expect(args).toContain('-Xmx64m');
    expect(counts(jvmThreads('j'))).toEqual(ergo(4));
    expect(rc('check-j'), s('check-j')).toBe(0);
    // Idempotent: nothing of the JVM option is planned again.
    expect(s('plan-j2')).not.toMatch(/50-isolate-jvm\.conf/);
  });

  it('an edit of KAFKA_OPTS made after isolate’s apply survives the restart, isolate’s flag beside it; plan has nothing to do', () => {
    expect(s('up-e')).toMatch(/up=yes/);
    const edited = 'KAFKA_OPTS=-Xmx64m -XX:+UseG1GC -Disolate.edit=after-apply';
    expect(assignmentOf(units('e')['kafka.service']!.Environment, 'KAFKA_OPTS')).toBe(edited);
    const args = s('e-cmdline').split('\n');
    expect(args).toContain('-Disolate.edit=after-apply');
    expect(args).not.toContain('-Disolate.test=a$b');
    expect(s('e-env').split('\n')).toContain('JAVA_TOOL_OPTIONS=-XX:ActiveProcessorCount=4');
    expect(s('e-env').split('\n')).toContain(edited);
    expect(counts(jvmThreads('e'))).toEqual(ergo(4));
    expect(rc('plan-e'), s('plan-e')).toBe(0);
    expect(s('plan-e')).not.toMatch(/50-isolate-jvm\.conf/);
  });

  it('rollback removes isolate’s drop-ins, the JVM one too, with ONE daemon-reload; the restarted JVM has no flag', () => {
    expect(rc('rollback'), s('rollback')).toBe(0);
    expect(s('dropins-rb').trim().split('\n').filter(Boolean).sort()).toEqual(
      s('dropins-s0').trim().split('\n').filter(Boolean).sort(),
    );
    expect(
      s('rb-calls')
        .split('\n')
        .filter((c) => c.trim() === 'daemon-reload'),
    ).toHaveLength(1);
    const args = s('rb-cmdline').split('\n');
    expect(args).not.toContain('-XX:ActiveProcessorCount=4');
    expect(s('rb-env')).not.toMatch(/JAVA_TOOL_OPTIONS/);
    expect(args).toContain('-Disolate.test=a$b');
    for (const t of jvmThreads('rb')) expect(t.cpuList, t.name).toBe('0-7');
  });
});
