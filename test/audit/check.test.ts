// check's thread classification over a fixture /proc tree (the real-kernel behaviour is in test/vm).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { audit } from '../../src/audit/audit.js';
import { formatCheck } from '../../src/audit/format.js';
import { numaBytes } from '../../src/audit/numa.js';
import { EXIT_STATUS as EXIT_CHECK } from '../../src/model/finding.js';
import type { WorkloadAllocation } from '../../src/model/plan.js';
import { CpuSet } from '../../src/model/cpuset.js';

let root: string;

async function put(rel: string, content: string): Promise<void> {
  const f = path.join(root, rel);
  await mkdir(path.dirname(f), { recursive: true });
  await writeFile(f, content);
}

async function proc(
  pid: number,
  opts: { ppid: number; name: string; cgroup: string; threads: [number, string][] },
) {
  await put(`proc/${pid}/cgroup`, `0::${opts.cgroup}\n`);
  for (const [tid, cpus] of opts.threads) {
    await put(
      `proc/${pid}/task/${tid}/status`,
      `Name:\t${opts.name}\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t${pid}\nPid:\t${tid}\nPPid:\t${opts.ppid}\nCpus_allowed:\tff\nCpus_allowed_list:\t${cpus}\nMems_allowed_list:\t0-1\n`,
    );
  }
}

const kafka: WorkloadAllocation = {
  name: 'kafka',
  class: 'exclusive',
  reason: 'test fixture',
  target: '/kafka.slice',
  cpus: CpuSet.parse('2-3'),
  cores: [2],
  nodes: [0],
  mems: [0],
  memory: {},
};

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'isolate-check-'));
  await proc(1, { ppid: 0, name: 'systemd', cgroup: '/init.scope', threads: [[1, '0-1,4-7']] });
  await proc(2, { ppid: 0, name: 'kthreadd', cgroup: '/', threads: [[2, '0-1,4-7']] });
  await proc(10, { ppid: 2, name: 'ksoftirqd/2', cgroup: '/', threads: [[10, '2']] });
  await proc(11, { ppid: 2, name: 'kworker/u16:1', cgroup: '/', threads: [[11, '0-7']] });
  await proc(100, {
    ppid: 1,
    name: 'java',
    cgroup: '/kafka.slice/kafka.service',
    threads: [
      [100, '2-3'],
      [101, '2-3'],
    ],
  });
  await proc(200, { ppid: 1, name: 'java', cgroup: '/hadoop-yarn/c1', threads: [[200, '0-1,4-7']] });
  await put('sys/fs/cgroup/kafka.slice/cpuset.cpus.effective', '2-3\n');
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('audit', () => {
  it('passes a fenced host; lists kernel threads apart', () => {
    const r = audit({ root, allocation: [kafka], partitions: false, pendingChanges: 0 });
    expect(r.status).toBe('OK');
    expect(EXIT_CHECK[r.status]).toBe(0);
    expect(r.workloads[0]?.threads).toBe(2);
    expect(r.violations).toEqual([]);
    expect(r.perCpuKernelThreads.count).toBe(1);
    expect(r.unboundWorkqueueWorkers.map((t) => t.comm)).toEqual(['kworker/u16:1']);
    expect(r.stats).toMatchObject({ processes: 6, threads: 7 });
    expect(formatCheck(r)).toMatch(/^ISOLATE OK - kafka alone on CPUs 2-3/);
  });

  it('is CRITICAL when another thread may run on the exclusive CPUs, or a workload thread strays', async () => {
    await proc(300, { ppid: 1, name: 'flink', cgroup: '/', threads: [[300, '0-7']] });
    await put('proc/100/task/102/status', 'Name:\tjava\nPPid:\t1\nCpus_allowed_list:\t0-7\n');
    const r = audit({ root, allocation: [kafka], partitions: false, pendingChanges: 0 });
    expect(r.status).toBe('CRITICAL');
    expect(r.violations.map((t) => t.tid)).toEqual([300]);
    expect(r.workloads[0]?.outside.map((t) => t.tid)).toEqual([102]);
  });

  it('a thread it cannot read, or whose allowed CPUs are no CPU list, is UNKNOWN, not taken for fenced', async () => {
    await proc(300, { ppid: 1, name: 'flink', cgroup: '/', threads: [[300, '0-1,z']] });
    // A status that is a directory reads EISDIR: unreadable, not exited.
    await mkdir(path.join(root, 'proc/400/task/400/status'), { recursive: true });
    await put('proc/400/cgroup', '0::/\n');
    const r = audit({ root, allocation: [kafka], partitions: false, pendingChanges: 0 });
    expect(r.status).toBe('UNKNOWN');
    // The status line starts with it (shortened to keep that line under 200 characters); it is whole below.
    expect(formatCheck(r)).toMatch(/^ISOLATE UNKNOWN - 2 threads could not be read /);
    expect(formatCheck(r)).toMatch(
      /^ {2}UNKNOWN: 2 threads could not be read \(Cpus_allowed_list "0-1,z" is no CPU list; EISDIR\): where they may run is unknown$/m,
    );
  });

  it("on cgroup v1 reports the memory of the cpuset's processes that sits off their node, from numa_maps", async () => {
    // v1 leaves a moved process's pages where they were unless memory_migrate is set: 90 MiB of the
    // broker's heap still on node 1 while its cpuset gives it node 0.
    const v1 = path.join(root, 'sys/fs/cgroup/cpuset');
    await put('sys/fs/cgroup/cpuset/kafka.slice/cgroup.procs', '100\n');
    await put('sys/fs/cgroup/cpuset/kafka.slice/cpuset.effective_cpus', '2-3\n');
    await put('sys/fs/cgroup/cpuset/kafka.slice/tasks', '100\n101\n');
    await put(
      'proc/100/numa_maps',
      [
        '7f0000000000 default anon=23040 dirty=23040 active=0 N1=23040 kernelpagesize_kB=4',
        '7f1000000000 default file=/usr/lib/jvm/lib/server/libjvm.so mapped=4000 N0=3000 N1=1000 kernelpagesize_kB=4',
        '7f2000000000 default heap anon=256 dirty=256 N0=256 kernelpagesize_kB=4',
      ].join('\n'),
    );
    const r = audit({ root, allocation: [kafka], partitions: false, pendingChanges: 0, v1CpusetDir: v1 });
    expect(r.workloads[0]?.memoryByNode).toEqual({ '0': 256 * 4096, '1': 23040 * 4096 });
    expect(r.workloads[0]?.offNodeBytes).toBe(23040 * 4096);
    expect(r.status).toBe('WARNING');
    expect(formatCheck(r)).toMatch(/\d+\.\d% of kafka's memory \(94371840 bytes\) is off its node\(s\) 0/);
  });

  it('counts every violation, though it lists at most 1,000', async () => {
    const threads: [number, string][] = [];
    for (let tid = 5000; tid < 6005; tid++) threads.push([tid, '0-7']);
    await proc(5000, { ppid: 1, name: 'flink', cgroup: '/', threads });
    const r = audit({ root, allocation: [kafka], partitions: false, pendingChanges: 0 });
    expect(r.status).toBe('CRITICAL');
    expect(r.violations).toHaveLength(1000);
    expect(r.counts).toEqual({ violations: 1005, unfenced: 0, kernelViolations: 0, outside: 0 });
    expect(formatCheck(r)).toMatch(/\| .*violations=1005 /);
    expect(formatCheck(r)).toMatch(/^ {4}\.\.\. and 985 more \(use --json\)$/m);
  });

  it('counts every thread of a workload outside its CPUs, though it lists 100', async () => {
    const threads: [number, string][] = [];
    for (let tid = 7000; tid < 7150; tid++) threads.push([tid, '0-7']);
    // Its cgroup not fenced yet (no kernel shows a thread outside its cgroup's effective CPUs).
    await put('sys/fs/cgroup/kafka.slice/cpuset.cpus.effective', '0-7\n');
    await proc(7000, { ppid: 1, name: 'java', cgroup: '/kafka.slice', threads });
    const r = audit({ root, allocation: [kafka], partitions: false, pendingChanges: 0 });
    expect(r.workloads[0]?.outside).toHaveLength(100);
    expect(r.workloads[0]?.outsideCount).toBe(150);
    expect(r.counts.outside).toBe(150);
    expect(r.findings.map((f) => f.message)).toContainEqual(
      expect.stringMatching(/^150 thread\(s\) of kafka may run outside its CPUs 2-3/),
    );
    // For people: the count is every thread (not the 100 kept), ten listed, and how many are not.
    const text = formatCheck(r);
    expect(text).toMatch(/^ {2}kafka \(exclusive\) .*, 150 outside its CPUs/m);
    expect(text.match(/^ {4}outside: /gm)).toHaveLength(10);
    expect(text).toMatch(/^ {4}outside: pid 7000 tid 7009 java .*\n {4}\.\.\. and 140 more \(use --json\)$/m);
  });

  it('keeps the status line under 200 characters: the first of many findings, shortened, and how many more', async () => {
    // Stray processes, and a thread of each of two workloads outside its CPUs: three critical findings.
    for (const pid of [8000, 8100, 8200])
      await proc(pid, { ppid: 1, name: `flink-taskmanager-${pid}`, cgroup: '/', threads: [[pid, '0-7']] });
    await proc(150, { ppid: 1, name: 'java', cgroup: '/kafka.slice/kafka.service', threads: [[150, '0-7']] });
    await proc(160, { ppid: 1, name: 'java', cgroup: '/kafka2.slice', threads: [[160, '0-7']] });
    const kafka2 = {
      ...kafka,
      name: 'kafka-with-a-long-name-for-this-host',
      target: '/kafka2.slice',
      cpus: CpuSet.parse('4-5'),
    };
    const r = audit({ root, allocation: [kafka, kafka2], partitions: false, pendingChanges: 3 });
    const worst = r.findings.filter((f) => f.severity.toUpperCase() === r.status);
    expect(worst.length, r.summary).toBeGreaterThan(1);
    expect(r.summary.length).toBeGreaterThan(200);
    const first = formatCheck(r).split('\n')[0]!;
    expect(first.length, first).toBeLessThanOrEqual(200);
    expect(first).toMatch(
      new RegExp(`^ISOLATE ${r.status} - .+ \\(\\+${worst.length - 1} more below\\) \\| processes=`),
    );
    // Every finding is still printed whole, and --json's summary keeps all of them.
    for (const f of worst) expect(formatCheck(r)).toContain(`${f.severity.toUpperCase()}: ${f.message}`);
  });

  it('prints one line for a NIC whose IRQs all stay off the exclusive CPUs, and a line for each IRQ on them', () => {
    const r = audit({ root, allocation: [kafka], partitions: false, pendingChanges: 0 });
    const q = (irq: number, nic: string, affinity: string, overlapsExclusive: boolean) => ({
      irq,
      nic,
      affinity,
      overlapsExclusive,
    });
    const irqs = [
      ...Array.from({ length: 48 }, (_, i) => q(100 + i, 'ens3f0', i % 2 ? '1' : '0', false)),
      q(200, 'eth1', '0-1', false),
      q(201, 'eth1', '2', true),
    ];
    const lines = formatCheck({ ...r, irqs }).split('\n');
    expect(lines.filter((l) => l.includes('ens3f0'))).toEqual([
      '  NIC ens3f0: 48 IRQs off the exclusive CPUs (→ CPUs 0; 1)',
    ]);
    expect(lines.filter((l) => l.includes('eth1'))).toEqual([
      '  NIC IRQ 201 (eth1) → CPUs 2 (on exclusive CPUs)',
      '  NIC eth1: 1 more IRQ(s) off the exclusive CPUs',
    ]);
  });

  it('strict: false judges only the batch workloads; other threads on the exclusive CPUs are listed, not counted', async () => {
    const flink: WorkloadAllocation = {
      ...kafka,
      name: 'flink',
      class: 'batch',
      target: '/hadoop-yarn',
      cpus: CpuSet.parse('0-1,4-7'),
      cores: [],
    };
    await proc(300, { ppid: 1, name: 'sshd', cgroup: '/system.slice/ssh.service', threads: [[300, '0-7']] });
    const calm = audit({
      root,
      allocation: [kafka, flink],
      partitions: false,
      pendingChanges: 0,
      strict: false,
    });
    expect(calm.status).toBe('OK');
    expect(calm.violations).toEqual([]);
    expect(calm.unfenced.map((t) => t.pid)).toEqual([300]);
    expect(formatCheck(calm)).toMatch(/not fenced by this policy \(strict: false\), listed only: 1 thread/);
    // The same stray thread in a YARN container breaks the policy's promise.
    await proc(400, { ppid: 1, name: 'java', cgroup: '/hadoop-yarn/c2', threads: [[400, '0-7']] });
    const broken = audit({
      root,
      allocation: [kafka, flink],
      partitions: false,
      pendingChanges: 0,
      strict: false,
    });
    expect(broken.status).toBe('CRITICAL');
    expect(broken.violations.map((t) => t.pid)).toEqual([400]);
    // strict: true counts both.
    const strict = audit({
      root,
      allocation: [kafka, flink],
      partitions: false,
      pendingChanges: 0,
      strict: true,
    });
    expect(strict.violations.map((t) => t.pid).sort()).toEqual([300, 400]);
  });

  it('skips the threads of a process whose cgroup is fenced off the exclusive CPUs, and only those', async () => {
    // A YARN container fenced onto 0-1,4-7: its threads are counted without reading each status.
    // The status files here claim 0-7 (no kernel would show that), so a read would report them.
    await put('sys/fs/cgroup/hadoop-yarn/c3/cpuset.cpus.effective', '0-1,4-7\n');
    await proc(500, {
      ppid: 1,
      name: 'java',
      cgroup: '/hadoop-yarn/c3',
      threads: [
        [500, '0-7'],
        [501, '0-7'],
      ],
    });
    // Its neighbour is not fenced (empty effective list: proves nothing), so its thread is read.
    await put('sys/fs/cgroup/hadoop-yarn/c4/cpuset.cpus.effective', '\n');
    await proc(600, { ppid: 1, name: 'java', cgroup: '/hadoop-yarn/c4', threads: [[600, '0-7']] });
    // One that overlaps is read too.
    await put('sys/fs/cgroup/hadoop-yarn/c5/cpuset.cpus.effective', '0-2\n');
    await proc(700, { ppid: 1, name: 'java', cgroup: '/hadoop-yarn/c5', threads: [[700, '0-2']] });
    const r = audit({ root, allocation: [kafka], partitions: false, pendingChanges: 0 });
    expect(r.violations.map((t) => t.tid)).toEqual([600, 700]);
    expect(r.stats).toMatchObject({ processes: 9, threads: 11 });
  });

  it('lets the cgroup decide where it can: a workload fenced onto its CPUs, and with strict: false the unfenced', async () => {
    // Kafka's cgroup allows only its CPUs: its threads are counted without reading each status (the
    // status files here claim 0-7, which no kernel would show, so a read would report them outside).
    await mkdir(path.join(root, 'sys/fs/cgroup/kafka.slice/kafka.service'), { recursive: true });
    await proc(800, { ppid: 1, name: 'java', cgroup: '/kafka.slice/kafka.service', threads: [[800, '0-7']] });
    const fenced = audit({ root, allocation: [kafka], partitions: false, pendingChanges: 0 });
    expect(fenced.workloads[0]).toMatchObject({ threads: 3, outside: [] });
    // With strict: false a service the policy does not fence is listed by what its cgroup allows,
    // whatever a thread narrowed its own affinity to (it can widen it again at any time); its
    // cgroup has no cpuset files (the controller is off there), so its parent's decide.
    await put('sys/fs/cgroup/system.slice/cpuset.cpus.effective', '0-7\n');
    await put('sys/fs/cgroup/system.slice/cgroup.type', 'domain\n');
    await mkdir(path.join(root, 'sys/fs/cgroup/system.slice/nginx.service'), { recursive: true });
    await proc(900, {
      ppid: 1,
      name: 'nginx',
      cgroup: '/system.slice/nginx.service',
      threads: [
        [900, '0-1'],
        [901, '0-1'],
      ],
    });
    await put('proc/900/task/901/comm', 'nginx-worker\n');
    const calm = audit({ root, allocation: [kafka], partitions: false, pendingChanges: 0, strict: false });
    const listed = calm.unfenced.filter((t) => t.pid === 900);
    expect(listed).toEqual([
      { pid: 900, tid: 900, comm: 'nginx', cpus: '0-7', cgroup: '/system.slice/nginx.service' },
      { pid: 900, tid: 901, comm: 'nginx-worker', cpus: '0-7', cgroup: '/system.slice/nginx.service' },
    ]);
    // The text counts every one and gives each process once as an example.
    expect(formatCheck(calm)).toMatch(
      /listed only: 2 thread\(s\), e\.g\. pid 900 nginx in \/system\.slice\/nginx\.service$/m,
    );
    expect(calm.counts.unfenced).toBe(calm.unfenced.length);
    // A threaded cgroup's threads may sit in sub-cgroups with narrower cpusets: read one by one.
    await put('sys/fs/cgroup/system.slice/nginx.service/cgroup.type', 'domain threaded\n');
    const threaded = audit({
      root,
      allocation: [kafka],
      partitions: false,
      pendingChanges: 0,
      strict: false,
    });
    expect(threaded.unfenced.filter((t) => t.pid === 900)).toEqual([]);
    // strict: true judges each thread as before.
    await put('sys/fs/cgroup/system.slice/nginx.service/cgroup.type', 'domain\n');
    const strict = audit({ root, allocation: [kafka], partitions: false, pendingChanges: 0, strict: true });
    expect(strict.violations.filter((t) => t.pid === 900)).toEqual([]);
  });

  it('counts a cgroup decided whole once, from its cgroup.threads, and keeps as many as asked', async () => {
    await put('sys/fs/cgroup/system.slice/cpuset.cpus.effective', '0-7\n');
    await put('sys/fs/cgroup/system.slice/cgroup.type', 'domain\n');
    // Two processes, five threads; the second's task/ is not even read (no such directory here).
    await put('sys/fs/cgroup/system.slice/cgroup.threads', '900\n901\n902\n950\n951\n');
    await proc(900, {
      ppid: 1,
      name: 'nginx',
      cgroup: '/system.slice',
      threads: [
        [900, '0-7'],
        [901, '0-7'],
        [902, '0-7'],
      ],
    });
    await put('proc/950/cgroup', '0::/system.slice\n');
    // Its cgroup.procs, read once a second process of it shows up, places the later ones: 960 has
    // no cgroup file here, so it is counted only if that read placed it (else it looks gone).
    await put('sys/fs/cgroup/system.slice/cgroup.procs', '900\n950\n960\n');
    await mkdir(path.join(root, 'proc/960'));
    const base = audit({ root, allocation: [kafka], partitions: false, pendingChanges: 0, strict: false });
    expect(base.counts.unfenced).toBe(5);
    expect(base.stats).toMatchObject({ processes: 9, threads: 12 });
    expect(base.unfenced.map((t) => t.tid)).toEqual([900, 901, 902]);
    const few = audit({
      root,
      allocation: [kafka],
      partitions: false,
      pendingChanges: 0,
      strict: false,
      listCap: 2,
    });
    expect(few.unfenced.map((t) => t.tid)).toEqual([900, 901]);
    expect(few.counts.unfenced).toBe(5);
  });

  it("reports each workload's pressure stall information", async () => {
    await put(
      'sys/fs/cgroup/kafka.slice/cpu.pressure',
      'some avg10=2.50 avg60=1.00 avg300=0.10 total=99\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n',
    );
    const r = audit({ root, allocation: [kafka], partitions: false, pendingChanges: 0 });
    expect(r.workloads[0]?.pressure.cpu?.some).toEqual({ avg10: 2.5, avg60: 1, avg300: 0.1, total: 99 });
    expect(r.workloads[0]?.pressure.memory).toBeUndefined();
    expect(formatCheck(r)).toMatch(/pressure \(avg10\/avg60 of time stalled\): cpu some 2\.50%\/1\.00%/);
  });

  it('warns about pending changes, a stopped workload and unbound kernel threads', async () => {
    await proc(12, { ppid: 2, name: 'rcu_gp', cgroup: '/', threads: [[12, '0-7']] });
    await rm(path.join(root, 'proc/100'), { recursive: true });
    const r = audit({ root, allocation: [kafka], partitions: false, pendingChanges: 3 });
    expect(r.status).toBe('WARNING');
    expect(r.findings.map((f) => f.message).join('\n')).toMatch(
      /not running[\s\S]*unbound kernel[\s\S]*3 change/,
    );
  });

  it('reports a partition the kernel made invalid as CRITICAL', async () => {
    await put(
      'sys/fs/cgroup/kafka.slice/cpuset.cpus.partition',
      'root invalid (Cpu list in cpuset.cpus not exclusive)\n',
    );
    const r = audit({ root, allocation: [kafka], partitions: true, pendingChanges: 0 });
    expect(r.status).toBe('CRITICAL');
    expect(r.summary).toMatch(/not exclusive/);
  });

  it("warns about memory off the workload's node only when it is more than a few stray pages", async () => {
    const stat = (n0: number, n1: number) =>
      put('sys/fs/cgroup/kafka.slice/memory.numa_stat', `anon N0=${n0} N1=${n1}\nfile N0=0 N1=0\n`);
    await stat(73_728, 4096); // 5.3 % but one page
    const small = audit({ root, allocation: [kafka], partitions: false, pendingChanges: 0 });
    expect(small.findings.map((f) => f.message).join('\n')).not.toMatch(/off its node/);
    await stat(1024 * 1024 * 1024, 64 * 1024 * 1024);
    const big = audit({ root, allocation: [kafka], partitions: false, pendingChanges: 0 });
    expect(big.findings.map((f) => f.message).join('\n')).toMatch(
      /of kafka's memory \(67108864 bytes\) is off its node\(s\) 0/,
    );
  });

  it('reads per-node memory from memory.numa_stat', () => {
    expect(numaBytes('anon N0=100 N1=5\nfile N0=10 N1=0\nkernel_stack N0=7 N1=7\n')).toEqual({
      '0': 110,
      '1': 5,
    });
  });
});
