// JVMs from fixture /proc trees: how they are recognised (a `java` launcher, a jlinked runtime, a
// renamed binary that maps libjvm.so, not a Python process), what their flags and pool threads say,
// and the check's findings (the real JVM on a real kernel is the guest's to prove).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cpuChangeOf, foldJournal, type Journal } from '../../src/apply/journal.js';
import { auditJvms, jvmFindings } from '../../src/audit/jvm.js';
import { perfDataFileOf, processesUnder, readJvm } from '../../src/cgroup/jvm.js';
import { CpuSet } from '../../src/model/cpuset.js';
import {
  countPoolThreads,
  ergoCompilerThreads,
  ergoConcGcThreads,
  ergoParallelGcThreads,
  type JvmFacts,
  javaFeatureVersion,
  judgeJvm,
  jvmArgs,
  launcherOptions,
  parseJvmFlags,
  planNote,
  sizingMessage,
} from '../../src/model/jvm.js';
import type { WorkloadAllocation } from '../../src/model/plan.js';
import { fakeProcess, gcThreads, type ProcSpec, putFile } from '../support/jvm-proc.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'isolate-jvm-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const BTIME = 1_700_000_000;

const put = (rel: string, content: string) => putFile(root, rel, content);
const proc = (pid: number, p: ProcSpec) => fakeProcess(root, pid, p);

const BROKER_48 = [
  ...gcThreads(33),
  ...Array.from({ length: 8 }, (_, i) => `G1 Conc#${i}`),
  ...Array(5).fill('C1 CompilerThre'),
  ...Array(10).fill('C2 CompilerThre'),
  'VM Thread',
  'kafka-network-t',
];

const kafka: WorkloadAllocation = {
  name: 'kafka',
  class: 'exclusive',
  reason: 'test',
  target: '/kafka.slice',
  cpus: CpuSet.parse('0-7'),
  cores: [0, 1, 2, 3],
  nodes: [0],
  mems: [0],
  memory: {},
};
const flink: WorkloadAllocation = {
  ...kafka,
  name: 'flink',
  class: 'batch',
  target: '/yarn.slice',
  cores: [],
};

describe('HotSpot ergonomics', () => {
  it('ParallelGCThreads: every CPU up to 8, then 5/8 of the rest', () => {
    expect([1, 2, 4, 8, 9, 16, 48, 64, 128].map(ergoParallelGcThreads)).toEqual([
      1, 2, 4, 8, 8, 13, 33, 43, 83,
    ]);
  });
  it("G1's ConcGCThreads: (ParallelGCThreads + 2) / 4, at least 1", () => {
    expect([1, 2, 8, 13, 33].map(ergoConcGcThreads)).toEqual([1, 1, 2, 3, 8]);
  });
  it('CICompilerCount: log n · log log n · 3/2, a third of it C1', () => {
    expect([1, 2, 4, 8, 16, 48].map(ergoCompilerThreads)).toEqual([
      { c1: 1, c2: 1 },
      { c1: 1, c2: 1 },
      { c1: 1, c2: 2 },
      { c1: 1, c2: 3 },
      { c1: 4, c2: 8 },
      { c1: 5, c2: 10 },
    ]);
  });
});

describe('flags and thread names', () => {
  it('reads the -XX flags, later winning, ActiveProcessorCount=-1 meaning "ask the OS"', () => {
    expect(
      parseJvmFlags([
        '-Xmx6g',
        '-XX:ParallelGCThreads=4',
        '-XX:ParallelGCThreads=8',
        '-XX:+PerfDisableSharedMem',
      ]),
    ).toEqual({ parallelGCThreads: 8, perfDisableSharedMem: true });
    expect(parseJvmFlags(['-XX:ActiveProcessorCount=-1', '-XX:-UsePerfData'])).toEqual({
      usePerfData: false,
    });
    expect(parseJvmFlags(['-XX:ActiveProcessorCount=8'])).toEqual({ activeProcessorCount: 8 });
  });

  it('counts pool threads by name; the highest worker number counts the ones it implies', () => {
    expect(countPoolThreads(BROKER_48)).toEqual({ gc: 33, conc: 8, c1: 5, c2: 10 });
    // A worker that exited (or a comm not read) below the highest: still counted by its number.
    expect(countPoolThreads(['GC Thread#0', 'GC Thread#5', 'G1 Conc#2', 'GC task thread#', 'main'])).toEqual({
      gc: 6,
      conc: 3,
      c1: 0,
      c2: 0,
    });
  });
});

const facts = (over: Partial<JvmFacts> = {}): JvmFacts => ({
  pid: 4242,
  exe: '/usr/bin/java',
  how: 'launcher',
  startedAt: BTIME + 1000,
  cpus: 8,
  flags: {},
  threads: { gc: 1, conc: 1, c1: 1, c2: 1 },
  perfDataFile: null,
  ...over,
});

describe('judgeJvm', () => {
  it('more GC workers than ergonomics give for its CPUs: sized for at least the CPUs they imply', () => {
    const v = judgeJvm(facts({ threads: { gc: 33, conc: 8, c1: 5, c2: 10 } }), null);
    expect(v.sizing).toBe('over');
    expect(v.sizedFor).toBe(48);
    expect(v.atLeast).toBe(true);
    expect(v.evidence[0]).toBe('33 GC worker threads (ergonomics give 8 for 8 CPUs)');
  });

  it('a JVM started after isolate set its CPUs sized its pools for them: ok', () => {
    const v = judgeJvm(facts({ startedAt: BTIME + 2000 }), { at: BTIME + 1500, before: 48 });
    expect(v).toMatchObject({ sizing: 'ok', sizedFor: 8 });
    expect(v.evidence.join()).toContain('after isolate set its CPUs');
  });

  it('lazily started GC workers prove nothing: a start before the change, with the CPUs it had then, does', () => {
    const lazy = facts({ startedAt: BTIME + 1000, threads: { gc: 2, conc: 1, c1: 1, c2: 1 } });
    expect(judgeJvm(lazy, null).sizing).toBe('unknown');
    expect(judgeJvm(lazy, { at: BTIME + 1500, before: null }).sizing).toBe('unknown');
    expect(judgeJvm(lazy, { at: BTIME + 1500, before: 48 })).toMatchObject({
      sizing: 'over',
      sizedFor: 48,
      atLeast: false,
    });
    expect(judgeJvm({ ...lazy, cpus: 16 }, { at: BTIME + 1500, before: 8 }).sizing).toBe('under');
  });

  it('-XX:ActiveProcessorCount decides unless the threads prove more; ParallelGCThreads set by hand above ergonomics is over', () => {
    const few = { gc: 8, conc: 2, c1: 1, c2: 3 };
    expect(judgeJvm(facts({ flags: { activeProcessorCount: 8 }, threads: few }), null)).toMatchObject({
      sizing: 'ok',
      pinned: true,
    });
    expect(judgeJvm(facts({ flags: { activeProcessorCount: 48 } }), null)).toMatchObject({
      sizing: 'over',
      sizedFor: 48,
    });
    const byHand = judgeJvm(
      facts({ flags: { parallelGCThreads: 33 }, threads: { gc: 33, conc: 1, c1: 1, c2: 1 } }),
      null,
    );
    expect(byHand.sizing).toBe('over');
    expect(byHand.evidence[0]).toContain('GC worker=33 set by hand');
  });

  it('the plan note names the process, the CPUs it sized for and the ones it gets', () => {
    const j = facts({ cpus: 48, threads: { gc: 13, conc: 3, c1: 4, c2: 8 } });
    const v = judgeJvm(j, { at: BTIME + 500, before: 48 });
    expect(planNote('kafka.service', j, v, 8)).toBe(
      "kafka.service's JVM (pid 4242) sized its GC/JIT pools for 48 CPUs; after this change it may use 8: restart it in your rolling-restart window",
    );
    expect(planNote('kafka.service', j, v, 48)).toBeNull();
  });
});

describe('a claimed -XX:ActiveProcessorCount against the evidence', () => {
  it('a broker with 33 GC threads fenced to 2 CPUs is over, whatever flag it claims', () => {
    const many = { gc: 33, conc: 8, c1: 5, c2: 10 };
    const j = facts({ cpus: 2, flags: { activeProcessorCount: 2 }, threads: many });
    const v = judgeJvm(j, null);
    expect(v).toMatchObject({ sizing: 'over', sizedFor: 48, atLeast: true, pinned: false });
    expect(v.evidence).toContain('33 GC worker threads (ergonomics give 2 for 2 CPUs)');
    // The fix is a restart, not the flag it already claims.
    expect(sizingMessage('kafka', j, v)).toContain('restart it in your rolling-restart window');
  });

  it('the launcher options end at the main class, -jar, -m or --module; -cp and --source take a value', () => {
    const kafka = ['-Xmx1g', '-cp', '/opt/kafka/libs/*', '-XX:ParallelGCThreads=4', 'kafka.Kafka'];
    expect(launcherOptions([...kafka, '-XX:ActiveProcessorCount=2'])).toEqual([
      '-Xmx1g',
      '-cp',
      '/opt/kafka/libs/*',
      '-XX:ParallelGCThreads=4',
    ]);
    expect(launcherOptions(['-Xss1m', '-jar', 'app.jar', '-XX:ActiveProcessorCount=2'])).toEqual(['-Xss1m']);
    expect(launcherOptions(['-m', 'app/app.Main', '-XX:ActiveProcessorCount=2'])).toEqual([]);
    expect(launcherOptions(['--module', 'app', '-XX:ActiveProcessorCount=2'])).toEqual([]);
    expect(launcherOptions(['--module=app/app.Main', '-XX:ActiveProcessorCount=2'])).toEqual([]);
    expect(launcherOptions(['--source', '17', 'Main.java', '-XX:ActiveProcessorCount=2'])).toEqual([
      '--source',
      '17',
    ]);
    expect(launcherOptions(['@/etc/app/jvm.args', '-XX:ConcGCThreads=2', 'Main', '-x'])).toEqual([
      '-XX:ConcGCThreads=2',
    ]);
  });

  it('JDK_JAVA_OPTIONS counts for a launcher of JDK 9 or later only, not JDK 8 nor an unknown one', () => {
    const env = { JDK_JAVA_OPTIONS: '-XX:ActiveProcessorCount=2', JAVA_TOOL_OPTIONS: '-XX:ConcGCThreads=1' };
    const cmd = ['/opt/jdk/bin/java', 'Main'];
    expect(jvmArgs(cmd, env, 17)).toEqual(['-XX:ConcGCThreads=1', '-XX:ActiveProcessorCount=2']);
    expect(jvmArgs(cmd, env, 9)).toContain('-XX:ActiveProcessorCount=2');
    expect(jvmArgs(cmd, env, 8)).toEqual(['-XX:ConcGCThreads=1']);
    expect(jvmArgs(cmd, env, null)).toEqual(['-XX:ConcGCThreads=1']);
    expect(javaFeatureVersion('IMPLEMENTOR="x"\nJAVA_VERSION="1.8.0_362"\n')).toBe(8);
    expect(javaFeatureVersion('JAVA_VERSION="17.0.9"\n')).toBe(17);
    expect(javaFeatureVersion('JAVA_VERSION="21"\n')).toBe(21);
    expect(javaFeatureVersion('OS_NAME="Linux"\n')).toBeNull();
  });

  it('from /proc: a JDK 8 broker whose flag sits in JDK_JAVA_OPTIONS and after its main class is judged by its threads', () => {
    put('proc/stat', `cpu 1 2 3\nbtime ${BTIME}\n`);
    put('usr/lib/jvm/java-8-openjdk-amd64/release', 'JAVA_VERSION="1.8.0_362"\n');
    put('usr/lib/jvm/java-17-openjdk-amd64/release', 'JAVA_VERSION="17.0.9"\n');
    const broker = {
      cmdline: ['java', '-Xmx1g', '-cp', '/opt/kafka/libs/*', 'kafka.Kafka', '-XX:ActiveProcessorCount=2'],
      env: ['JDK_JAVA_OPTIONS=-XX:ActiveProcessorCount=2'],
      cpus: '0-1',
      threads: BROKER_48,
    };
    proc(300, { ...broker, exe: '/usr/lib/jvm/java-8-openjdk-amd64/jre/bin/java' });
    const j8 = readJvm(root, 300, { btime: BTIME })!;
    expect(j8.flags).toEqual({});
    expect(judgeJvm(j8, null)).toMatchObject({ sizing: 'over', sizedFor: 48, atLeast: true });
    // Unknown version (no release file): not honoured either.
    proc(301, { ...broker, exe: '/opt/unknown/bin/java' });
    expect(readJvm(root, 301, { btime: BTIME })!.flags).toEqual({});
    // JDK 17's launcher reads it: the flag is there, and the threads still beat it.
    proc(302, { ...broker, exe: '/usr/lib/jvm/java-17-openjdk-amd64/bin/java' });
    const j17 = readJvm(root, 302, { btime: BTIME })!;
    expect(j17.flags).toEqual({ activeProcessorCount: 2 });
    expect(judgeJvm(j17, null)).toMatchObject({ sizing: 'over', sizedFor: 48 });
  });
});

describe('recognising JVMs in /proc', () => {
  it('a java launcher, a jlinked runtime, a renamed binary that maps libjvm.so; not a Python process', () => {
    put('proc/stat', `cpu 1 2 3\nbtime ${BTIME}\n`);
    proc(100, { exe: '/usr/lib/jvm/java-17-openjdk-amd64/bin/java', threads: gcThreads(2) });
    // jlink's image: bin/<launcher> beside lib/modules and release.
    put('opt/broker/runtime/lib/modules', 'jimage');
    put('opt/broker/runtime/release', 'JAVA_VERSION="17.0.9"\n');
    proc(101, { exe: '/opt/broker/runtime/bin/broker' });
    proc(102, {
      exe: '/usr/local/bin/kafkad',
      maps: '7f1c00000000-7f1c01000000 r-xp 00000000 08:01 1234 /opt/jdk/lib/server/libjvm.so\n',
    });
    proc(103, { exe: '/usr/bin/python3.11', maps: '7f00-7f01 r-xp 0 08:01 1 /usr/lib/libpython3.11.so\n' });
    const found = [100, 101, 102, 103].map((pid) => readJvm(root, pid, { btime: BTIME })?.how ?? null);
    expect(found).toEqual(['launcher', 'runtime-image', 'libjvm', null]);
    expect(processesUnder(path.join(root, 'sys/fs/cgroup/kafka.slice'))).toEqual([100, 101, 102, 103]);
  });

  it('start time from stat field 22, flags from the command line and the launcher variables only', () => {
    put('usr/lib/jvm/java-17-openjdk-amd64/release', 'JAVA_VERSION="17.0.9"\n');
    proc(200, {
      exe: '/usr/lib/jvm/java-17-openjdk-amd64/bin/java',
      startedAfterBoot: 1234.5,
      cmdline: ['/usr/bin/java', '-Xmx1g', '-XX:CICompilerCount=4', 'kafka.Kafka'],
      env: ['JDK_JAVA_OPTIONS=-XX:ActiveProcessorCount=8', 'OTHER=-XX:ParallelGCThreads=99'],
      cpus: '0-3,8-11',
      threads: BROKER_48,
    });
    const j = readJvm(root, 200, { btime: BTIME })!;
    expect(j.startedAt).toBe(BTIME + 1234.5);
    expect(j.cpus).toBe(8);
    expect(j.flags).toEqual({ activeProcessorCount: 8, ciCompilerCount: 4 });
    expect(j.threads).toEqual({ gc: 33, conc: 8, c1: 5, c2: 10 });
  });

  it('the hsperfdata file counts on disk, not on a tmpfs', () => {
    const maps = '7f00-7f01 rw-s 00000000 08:01 99 /tmp/hsperfdata_kafka/4242\n';
    expect(perfDataFileOf(maps, 'sda1 / ext4 rw 0 0\n')).toBe('/tmp/hsperfdata_kafka/4242');
    expect(perfDataFileOf(maps, 'sda1 / ext4 rw 0 0\ntmpfs /tmp tmpfs rw 0 0\n')).toBeNull();
    expect(perfDataFileOf('', 'sda1 / ext4 rw 0 0\n')).toBeNull();
  });
});

describe('check: the workloads JVMs', () => {
  it('an exclusive JVM started on 48 CPUs and fenced to 8 after is a WARNING; a batch one an INFO', () => {
    put('proc/stat', `btime ${BTIME}\n`);
    proc(300, { exe: '/usr/bin/java', startedAfterBoot: 100, threads: BROKER_48 });
    proc(301, { exe: '/usr/bin/java', startedAfterBoot: 100, threads: BROKER_48, cgroup: 'yarn.slice' });
    const out = auditJvms({
      root,
      allocation: [kafka, flink],
      cpuChange: () => ({ at: BTIME + 500, before: 48 }),
    });
    expect(out.oversized).toEqual({ kafka: 1, flink: 1 });
    expect(out.findings.map((f) => [f.severity, f.target])).toEqual([
      ['warning', 'kafka'],
      ['info', 'flink'],
    ]);
    expect(out.findings[0]!.message).toContain(
      "kafka's JVM (pid 300) sized its GC/JIT pools for 48 CPUs and may use 8 now (33 GC worker threads (ergonomics give 8 for 8 CPUs)",
    );
  });

  it('a JVM started after isolate fenced it (kafka.service born with AllowedCPUs set) is judged correct', () => {
    put('proc/stat', `btime ${BTIME}\n`);
    // A G1 broker on 8 CPUs has started 3 GC workers so far; its CPUs were set before it started.
    proc(400, {
      exe: '/usr/bin/java',
      startedAfterBoot: 900,
      threads: [...gcThreads(3), 'G1 Conc#0', 'C2 CompilerThre'],
    });
    const change = cpuChangeOf([journalWith(BTIME + 500, '0-47')], 'kafka', 400);
    expect(change).toEqual({ at: BTIME + 500, before: 48 });
    const out = auditJvms({ root, allocation: [kafka], cpuChange: () => change });
    expect(out.jvms.map((j) => [j.pid, j.sizing, j.sizedFor])).toEqual([[400, 'ok', 8]]);
    expect(out.findings).toEqual([]);
    expect(out.oversized).toEqual({ kafka: 0 });
    // The same JVM, started before that change: the CPUs it had then are what it sized for.
    const before = auditJvms({
      root,
      allocation: [kafka],
      cpuChange: () => ({ ...change!, at: BTIME + 1000 }),
    });
    expect(before.findings.map((f) => f.severity)).toEqual(['warning']);
  });

  it('hygiene for exclusive JVMs: the hsperfdata file on disk, THP always, a cgroup that may swap', () => {
    const jvm = {
      ...facts({ perfDataFile: '/tmp/hsperfdata_kafka/4242' }),
      workload: 'kafka',
      ...judgeJvm(facts(), null),
    };
    const out = jvmFindings([kafka, flink], [jvm, { ...jvm, workload: 'flink' }], {
      thp: 'always',
      swapMax: { kafka: 'max' },
    });
    expect(out.findings.map((f) => [f.severity, f.target ?? '', f.message.slice(0, 40)])).toEqual([
      ['info', 'kafka', 'the JVM (pid 4242) maps its performance-'],
      ['info', '', 'transparent huge pages are "always" (/sy'],
      ['info', 'kafka', "kafka's cgroup may swap (memory.swap.max"],
    ]);
    expect(jvmFindings([kafka], [jvm], { thp: 'madvise', swapMax: { kafka: '0' } }).findings.length).toBe(1);
    expect(jvmFindings([kafka], [], { thp: 'always', swapMax: { kafka: 'max' } }).findings).toEqual([]);
  });
});

function journalWith(at: number, previous: string, to = '0-7'): Journal {
  const iso = new Date(at * 1000).toISOString();
  return {
    version: 1,
    id: 'j1',
    pid: 1,
    startedAt: iso,
    updatedAt: iso,
    state: 'applied',
    entries: [
      {
        seq: 1,
        status: 'done',
        previous,
        at: iso,
        change: {
          backend: 'systemd',
          target: 'kafka.service',
          setting: 'AllowedCPUs',
          from: previous,
          to,
          workload: 'kafka',
        },
      },
    ],
  };
}

describe('dating the changes of a workload CPUs', () => {
  it('the baseline keeps the first old value and takes the latest write time; a move of the PID counts', () => {
    const first = journalWith(BTIME + 100, '0-47');
    const second = journalWith(BTIME + 900, '0-15');
    const base = foldJournal(
      foldJournal(null, first, () => true),
      second,
      () => true,
    );
    expect(base.entries.length).toBe(1);
    expect(cpuChangeOf([base], 'kafka', 1)).toEqual({ at: BTIME + 900, before: 48 });
    expect(cpuChangeOf([base], 'flink', 1)).toBeNull();
    const move = journalWith(BTIME + 2000, '/system.slice');
    move.entries[0]!.change = {
      backend: 'cgroupfs',
      target: '/kafka.slice',
      setting: 'cgroup.procs',
      from: null,
      to: '77',
    };
    expect(cpuChangeOf([base, move], 'kafka', 77)).toEqual({ at: BTIME + 2000, before: 48 });
    expect(cpuChangeOf([base, move], 'kafka', 78)).toEqual({ at: BTIME + 900, before: 48 });
  });

  it('a partition made root, or a list rewritten with as many CPUs, does not date a change of the CPUs', () => {
    // Seen in the systemd-jvm guest: Kafka restarted fenced, then its slice made a partition root.
    const fence = journalWith(BTIME + 100, '', '0-3');
    const partition = journalWith(BTIME + 900, 'member');
    partition.entries[0]!.change = {
      backend: 'cgroupfs',
      target: '/kafka.slice',
      setting: 'cpuset.cpus.partition',
      from: 'member',
      to: 'root',
      workload: 'kafka',
    };
    const same = journalWith(BTIME + 950, '0 1 2 3', '0-3');
    expect(cpuChangeOf([fence, partition, same], 'kafka', 1, 8)).toEqual({ at: BTIME + 100, before: 8 });
  });

  it('an empty old list (AllowedCPUs= unset) is every online CPU, when their count is known; systemd’s spaces are read', () => {
    expect(cpuChangeOf([journalWith(BTIME + 100, '', '0-3')], 'kafka', 1, 8)).toEqual({
      at: BTIME + 100,
      before: 8,
    });
    expect(cpuChangeOf([journalWith(BTIME + 100, '[not set]', '0-3')], 'kafka', 1, 8)).toEqual({
      at: BTIME + 100,
      before: 8,
    });
    expect(cpuChangeOf([journalWith(BTIME + 100, '', '0-3')], 'kafka', 1)).toEqual({
      at: BTIME + 100,
      before: null,
    });
    // Every online CPU before and after: the count did not change.
    expect(cpuChangeOf([journalWith(BTIME + 100, '', '0-7')], 'kafka', 1, 8)).toBeNull();
    expect(cpuChangeOf([journalWith(BTIME + 100, '0-1 4-7')], 'kafka', 1, 8)).toEqual({
      at: BTIME + 100,
      before: 6,
    });
  });
});
