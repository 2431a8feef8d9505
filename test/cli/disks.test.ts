// `isolate topology` and `isolate plan` show each workload's disks, as a process on a host root made
// of a real-shaped CPU tree (intel-2s-ht-split, a Dell R630) and the r630-kafka block devices: the
// text an SRE reads, the --json contract, and a finding when a directory has no disk.
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { isolate } from './run.js';

const FIXTURES = join(import.meta.dirname, '../fixtures');
let root: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'isolate-cli-disks-'));
  cpSync(join(FIXTURES, 'sysfs/intel-2s-ht-split/sys/devices/system'), join(root, 'sys/devices/system'), {
    recursive: true,
  });
  cpSync(join(FIXTURES, 'disks/r630-kafka'), root, { recursive: true, verbatimSymlinks: true });
});

function policy(disks: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'isolate-disks-policy-'));
  const file = join(dir, 'policy.yaml');
  writeFileSync(
    file,
    `apiVersion: isolate/v1
kind: HostPolicy
workloads:
  - { name: kafka, class: exclusive, cores: 2, match: { cgroup: /kafka.slice }, disks: ${disks} }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
`,
  );
  return file;
}

const FROM_CONFIG = policy('{ kafkaConfig: /etc/kafka/server.properties }');

describe('isolate plan shows the disks', () => {
  it('text: each directory, its device stack, one row per disk', () => {
    const r = isolate(['plan', '--dry-run', '--root', root, '--policy', FROM_CONFIG]);
    expect(r.code, r.stderr).toBe(0);
    const section = r.stdout.slice(r.stdout.indexOf('\nDisks:\n'), r.stdout.indexOf('\nChanges ('));
    expect(section.split('\n')).toEqual([
      '',
      'Disks:',
      '  kafka (kafkaConfig /etc/kafka/server.properties)',
      '    /data1/kafka-logs  on /data1 (xfs /dev/sda1) → sda1 (partition) → sda',
      '    /data2/kafka-logs  on /data2 (xfs /dev/mapper/vg0-kafka) → dm-0 (lvm vg0-kafka) → md0 (md raid1) → sdb1, sdc1 (partitions) → sdb, sdc',
      '    /var/kafka/logs → /data 3/kafka-logs  on /data 3 (ext4 /dev/nvme0n1) → nvme0n1',
      '    disk     dev    node  scheduler    rotational',
      '    nvme0n1  259:0  1     none         no (SSD)',
      '    sda      8:0    0     mq-deadline  yes (HDD)   RAID virtual drive DELL PERC H730 Mini (megaraid_sas)',
      '    sdb      8:16   0     bfq          yes (HDD)',
      '    sdc      8:32   0     bfq          yes (HDD)',
      '',
    ]);
    expect(r.stdout).not.toMatch(/^ {2}- kafka:/m);
  });

  it('--json: by workload, outside the fingerprint', () => {
    const r = isolate(['plan', '--dry-run', '--json', '--root', root, '--policy', FROM_CONFIG]);
    expect(r.code, r.stderr).toBe(0);
    const plan = JSON.parse(r.stdout);
    expect(Object.keys(plan.disks)).toEqual(['kafka']);
    expect(plan.disks.kafka.source).toBe('kafkaConfig /etc/kafka/server.properties');
    expect(plan.disks.kafka.disks).toContainEqual({
      name: 'sda',
      dev: '8:0',
      node: 0,
      scheduler: 'mq-deadline',
      schedulers: ['mq-deadline', 'kyber', 'bfq', 'none'],
      rotational: true,
      raid: { vendor: 'DELL', model: 'PERC H730 Mini', driver: 'megaraid_sas' },
      alsoHolds: ['/'],
    });
    expect(plan.disks.kafka.dirs[1].layers.map((l: { name: string }) => l.name)).toEqual([
      'dm-0',
      'md0',
      'sdb1',
      'sdc1',
    ]);
    const without = isolate([
      'plan',
      '--dry-run',
      '--json',
      '--root',
      root,
      '--policy',
      policy('{ paths: [/data1/kafka-logs] }'),
    ]);
    expect(JSON.parse(without.stdout).fingerprint).toBe(plan.fingerprint);
  });

  it('a saved plan leaves the disks out: facts of the moment, not something apply carries out', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'isolate-disks-out-')), 'plan.json');
    const r = isolate(['plan', '--root', root, '--policy', FROM_CONFIG, '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Disks:');
    const saved = JSON.parse(readFileSync(out, 'utf8'));
    expect(saved.allocation.kafka).toBeDefined();
    expect(saved).not.toHaveProperty('disks');
  });

  it('a directory on tmpfs and one that does not exist are warnings', () => {
    const r = isolate([
      'plan',
      '--dry-run',
      '--json',
      '--root',
      root,
      '--policy',
      policy('{ paths: [/scratch/kafka, /data7/kafka-logs] }'),
    ]);
    expect(r.code, r.stderr).toBe(0);
    const plan = JSON.parse(r.stdout);
    expect(plan.disks.kafka.disks).toEqual([]);
    expect(plan.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^kafka: \/scratch\/kafka is on tmpfs \(tmpfs, mounted at \/scratch\): no block device/,
        ),
        expect.stringMatching(/^kafka: \/data7\/kafka-logs does not exist \(\/data7 is missing\)/),
      ]),
    );
  });

  it('a policy without disks: no disks in the plan', () => {
    const file = policy('{ paths: [/data1/kafka-logs] }').replace(/policy\.yaml$/, 'plain.yaml');
    writeFileSync(
      file,
      'apiVersion: isolate/v1\nkind: HostPolicy\nworkloads:\n  - { name: kafka, class: exclusive, cores: 2, match: { cgroup: /kafka.slice } }\n',
    );
    const r = isolate(['plan', '--dry-run', '--json', '--root', root, '--policy', file]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).disks).toBeUndefined();
    expect(isolate(['plan', '--dry-run', '--root', root, '--policy', file]).stdout).not.toContain('Disks:');
  });
});

describe('plan names the io mechanism each disk allows', () => {
  /** The same host with a cgroup2 root: its controllers and, when given, io.cost.qos. */
  /**
   * How the host shows io.latency: a top-level cgroup with io enabled that has it (`cgroup`) or not
   * (`cgroup-without`), the kernel's config (`config-y`, `config-unset`), or nothing (unknown).
   */
  type Latency = 'cgroup' | 'cgroup-without' | 'config-y' | 'config-unset' | 'none';
  function withCgroup(controllers: string, qos?: string, latency: Latency = 'cgroup'): string {
    const host = mkdtempSync(join(tmpdir(), 'isolate-cli-io-'));
    cpSync(root, host, { recursive: true, verbatimSymlinks: true });
    const cg = join(host, 'sys/fs/cgroup');
    mkdirSync(join(cg, 'kafka.slice'), { recursive: true });
    if (latency.startsWith('cgroup')) {
      mkdirSync(join(cg, 'system.slice'));
      writeFileSync(join(cg, 'system.slice/io.stat'), '');
      if (latency === 'cgroup') writeFileSync(join(cg, 'system.slice/io.latency'), '');
    }
    if (latency.startsWith('config')) {
      mkdirSync(join(host, 'proc/sys/kernel'), { recursive: true });
      writeFileSync(join(host, 'proc/sys/kernel/osrelease'), '6.1.0-50-cloud-amd64\n');
      mkdirSync(join(host, 'boot'));
      writeFileSync(
        join(host, 'boot/config-6.1.0-50-cloud-amd64'),
        `CONFIG_BLK_CGROUP=y\n${latency === 'config-y' ? 'CONFIG_BLK_CGROUP_IOLATENCY=y' : '# CONFIG_BLK_CGROUP_IOLATENCY is not set'}\nCONFIG_BLK_CGROUP_IOCOST=y\n`,
      );
    }
    writeFileSync(join(cg, 'cgroup.controllers'), `${controllers}\n`);
    writeFileSync(join(cg, 'cgroup.subtree_control'), 'cpuset cpu memory\n');
    if (qos !== undefined) writeFileSync(join(cg, 'io.cost.qos'), qos);
    // The fixture's mount table has no cgroup mount; Debian 12 mounts cgroup2 so.
    appendFileSync(
      join(host, 'proc/self/mountinfo'),
      '27 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n',
    );
    return host;
  }
  const planOf = (host: string, policyFile = FROM_CONFIG) => {
    const r = isolate(['plan', '--dry-run', '--json', '--root', host, '--policy', policyFile]);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as { notes: string[]; changes: { setting: string }[] };
  };
  const notesOf = (host: string) => planOf(host).notes.filter((n) => n.startsWith('io '));
  const latencyChanges = (host: string) => planOf(host).changes.filter((c) => c.setting === 'io.latency');

  it('BFQ disks get weights, iocost-enabled ones too, the others io.latency only', () => {
    const notes = notesOf(
      withCgroup(
        'cpuset cpu io memory pids',
        '259:0 enable=1 ctrl=auto rpct=95.00 rlat=5000 wpct=95.00 wlat=5000 min=50.00 max=150.00\n',
      ),
    );
    expect(notes).toEqual([
      expect.stringMatching(/^io kafka: nvme0n1 \(259:0\): io\.weight and io\.latency: iocost is enabled/),
      expect.stringMatching(
        /^io kafka: sda \(8:0\): io\.latency only .*the scheduler is mq-deadline and iocost is not enabled for 8:0/,
      ),
      expect.stringMatching(
        /^io kafka: sdb \(8:16\): io\.weight and io\.latency: BFQ is the active scheduler/,
      ),
      expect.stringMatching(
        /^io kafka: sdc \(8:32\): io\.weight and io\.latency: BFQ is the active scheduler/,
      ),
    ]);
  });

  it('a kernel without io.latency (a cgroup with io has none, or its config says so): no target, and why', () => {
    const qos = '259:0 enable=1 ctrl=auto rpct=95.00 rlat=5000 wpct=95.00 wlat=5000 min=50.00 max=150.00\n';
    for (const [how, evidence] of [
      ['cgroup-without', '/sys/fs/cgroup/system.slice has io.stat but no io.latency'],
      ['config-unset', 'CONFIG_BLK_CGROUP_IOLATENCY is not set in /boot/config-6.1.0-50-cloud-amd64'],
    ] as const) {
      const host = withCgroup('cpuset cpu io memory pids', qos, how);
      expect(latencyChanges(host)).toEqual([]);
      const notes = notesOf(host);
      expect(notes).toEqual([
        'io kafka: nvme0n1 (259:0): io.weight: iocost is enabled for 259:0 (enable=1 in /sys/fs/cgroup/io.cost.qos); this kernel has no io.latency',
        "io kafka: sda (8:0): io.max caps only (this kernel has no io.latency): io.weight would do nothing, since the scheduler is mq-deadline and iocost is not enabled for 8:0 in /sys/fs/cgroup/io.cost.qos; select bfq in queue/scheduler or enable iocost for weights; sda also holds /: the io settings on it act on every write there, the OS's and the batch jobs' own (logs, /tmp) included, not only on Kafka's directories",
        'io kafka: sdb (8:16): io.weight: BFQ is the active scheduler (weights act through io.bfq.weight); this kernel has no io.latency',
        'io kafka: sdc (8:32): io.weight: BFQ is the active scheduler (weights act through io.bfq.weight); this kernel has no io.latency',
        `io kafka: no latency target is planned (latency: auto): this kernel has no io.latency (${evidence}; CONFIG_BLK_CGROUP_IOLATENCY); its weight acts instead where BFQ or iocost runs, and the batch workloads' caps (io.max) anywhere; latency: off says so in the policy`,
      ]);
      expect(notes.join('\n')).not.toMatch(/io\.latency acts|io\.bfq\.weight \(io\.bfq\.weight/);
    }
    // The kernel's own config saying =y, or a cgroup with io.latency: the target is planned.
    expect(latencyChanges(withCgroup('cpuset cpu io memory pids', qos, 'config-y'))).toHaveLength(4);
    expect(latencyChanges(withCgroup('cpuset cpu io memory pids', qos, 'cgroup'))).toHaveLength(4);
  });

  it('an explicit target on a kernel without io.latency is refused in one line naming the option and the fix', () => {
    const file = policy('{ kafkaConfig: /etc/kafka/server.properties }, io: { latency: 10ms }');
    const host = withCgroup('cpuset cpu io memory pids', undefined, 'config-unset');
    const r = isolate(['plan', '--dry-run', '--root', host, '--policy', file]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr.trim()).toMatch(
      /^isolate: .*policy\.yaml:4:\d+: workloads\[0\]\.io\.latency: this kernel has no io\.latency \(CONFIG_BLK_CGROUP_IOLATENCY is not set in \/boot\/config-6\.1\.0-50-cloud-amd64\), so no latency target can be set; set latency: off \(the weights and caps still act\), or run a kernel built with CONFIG_BLK_CGROUP_IOLATENCY=y$/,
    );
    // Where the kernel cannot be told, an explicit target is the operator's word: planned.
    expect(
      planOf(withCgroup('cpuset cpu io memory pids', undefined, 'none'), file).changes.filter(
        (c) => c.setting === 'io.latency',
      ),
    ).toHaveLength(4);
  });

  it('a kernel that cannot be told: latency auto plans no target and says to set one explicitly', () => {
    const host = withCgroup('cpuset cpu io memory pids', undefined, 'none');
    expect(latencyChanges(host)).toEqual([]);
    const notes = notesOf(host);
    expect(notes[1]).toBe(
      "io kafka: sda (8:0): io.latency only if this kernel has it (unknown): io.weight would do nothing, since the scheduler is mq-deadline and this kernel has no iocost (no /sys/fs/cgroup/io.cost.qos); select bfq in queue/scheduler for weights; sda also holds /: the io settings on it act on every write there, the OS's and the batch jobs' own (logs, /tmp) included, not only on Kafka's directories",
    );
    expect(notes.at(-1)).toBe(
      'io kafka: no latency target is planned (latency: auto): whether this kernel has io.latency cannot be told (no cgroup has io enabled and the kernel release is unknown); set latency: 25ms explicitly if you know it is built with CONFIG_BLK_CGROUP_IOLATENCY=y',
    );
  });

  it('without the io controller: one note saying nothing can act', () => {
    expect(notesOf(withCgroup('cpuset cpu memory pids'))).toEqual([
      'io kafka: the io controller is not in /sys/fs/cgroup/cgroup.controllers, so no io setting can protect nvme0n1, sda, sdb, sdc (a kernel without CONFIG_BLK_CGROUP, or io bound to a cgroup v1 hierarchy)',
    ]);
  });
});

describe('isolate topology shows the disks', () => {
  it('with --policy, in text and --json; with the host policy by default; without, none', () => {
    const r = isolate([
      'topology',
      '--root',
      root,
      '--policy',
      policy('{ paths: [/srv/kafka, /scratch/kafka] }'),
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      [
        'workload disks:',
        '  kafka (paths)',
        '    /srv/kafka  on /srv/kafka (xfs /dev/sda1, bind of /kafka-logs) → sda1 (partition) → sda',
        '    /scratch/kafka  on /scratch (tmpfs tmpfs) → no disk',
        '    disk  dev  node  scheduler    rotational',
        '    sda   8:0  0     mq-deadline  yes (HDD)   RAID virtual drive DELL PERC H730 Mini (megaraid_sas)',
        "    warning: /scratch/kafka is on tmpfs (tmpfs, mounted at /scratch): no block device, so there is no disk whose I/O can be protected; put the directory on a local disk's filesystem",
        '',
      ].join('\n'),
    );

    expect(isolate(['topology', '--root', root]).stdout).not.toContain('workload disks:');
    mkdirSync(join(root, 'etc/isolate'), { recursive: true });
    cpSync(FROM_CONFIG, join(root, 'etc/isolate/policy.yaml'));
    const j = isolate(['topology', '--json', '--root', root]);
    expect(j.code, j.stderr).toBe(0);
    const t = JSON.parse(j.stdout);
    expect(
      t.workloadDisks.kafka.disks.map((d: { name: string; node: number }) => `${d.name}@${d.node}`),
    ).toEqual(['nvme0n1@1', 'sda@0', 'sdb@0', 'sdc@0']);
    expect(t.cpus.length).toBe(16);
  });
});
