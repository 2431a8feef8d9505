// Data directories → mount → block device → whole disks, on the r630-kafka fixture (a PERC virtual
// drive with partitions, LVM over md raid1 over two SATA disks, an NVMe namespace, tmpfs, overlay,
// loop, a bind mount, a symlinked log dir, a mount point with a space) and on damaged copies of it:
// a failed or odd read makes one fact unknown and says so, never a guess and never an exception.
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readWorkloadDisks } from '../../src/topology/disks.js';

const FIXTURE = join(import.meta.dirname, '../fixtures/disks/r630-kafka');

function copy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'isolate-disks-'));
  cpSync(FIXTURE, dir, { recursive: true, verbatimSymlinks: true });
  return dir;
}

const one = (root: string, paths: string[]) =>
  readWorkloadDisks(root, [{ workload: 'kafka', source: { kind: 'paths', paths } }])[0]!;

describe('disks under data directories (r630-kafka)', () => {
  it('a partition resolves to its disk: the PERC virtual drive, with its driver', () => {
    const w = one(FIXTURE, ['/data1/kafka-logs']);
    expect(w.findings).toEqual([]);
    expect(w.dirs).toEqual([
      {
        path: '/data1/kafka-logs',
        mount: { point: '/data1', fstype: 'xfs', source: '/dev/sda1', dev: '8:1' },
        layers: [{ name: 'sda1', kind: 'partition' }],
        disks: ['sda'],
      },
    ]);
    expect(w.disks).toEqual([
      {
        name: 'sda',
        dev: '8:0',
        node: 0,
        scheduler: 'mq-deadline',
        schedulers: ['mq-deadline', 'kyber', 'bfq', 'none'],
        rotational: true,
        raid: { vendor: 'DELL', model: 'PERC H730 Mini', driver: 'megaraid_sas' },
        // sda2 is the root filesystem: io settings on sda act on the OS's writes too.
        alsoHolds: ['/'],
      },
    ]);
  });

  it("names the OS's own filesystems only on the disk that holds them", () => {
    const w = one(FIXTURE, ['/data1/kafka-logs', '/data2/kafka-logs', '/data 3/kafka-logs']);
    expect(w.disks.map((d) => [d.name, d.alsoHolds ?? []])).toEqual([
      ['nvme0n1', []],
      ['sda', ['/']],
      ['sdb', []],
      ['sdc', []],
    ]);
  });

  it('LVM over md raid1 over two partitions resolves to both SATA disks', () => {
    const w = one(FIXTURE, ['/data2/kafka-logs']);
    expect(w.findings).toEqual([]);
    expect(w.dirs[0]!.layers).toEqual([
      { name: 'dm-0', kind: 'lvm', detail: 'vg0-kafka' },
      { name: 'md0', kind: 'md', detail: 'raid1' },
      { name: 'sdb1', kind: 'partition' },
      { name: 'sdc1', kind: 'partition' },
    ]);
    expect(w.disks.map((d) => [d.name, d.dev, d.node, d.scheduler, d.rotational, d.raid])).toEqual([
      ['sdb', '8:16', 0, 'bfq', true, undefined],
      ['sdc', '8:32', 0, 'bfq', true, undefined],
    ]);
  });

  it('follows an absolute symlink inside the root to a mount point written with \\040', () => {
    const w = one(FIXTURE, ['/var/kafka/logs']);
    expect(w.findings).toEqual([]);
    expect(w.dirs[0]).toMatchObject({
      resolved: '/data 3/kafka-logs',
      mount: { point: '/data 3', dev: '259:0' },
      layers: [],
      disks: ['nvme0n1'],
    });
    expect(w.disks).toEqual([
      {
        name: 'nvme0n1',
        dev: '259:0',
        node: 1,
        scheduler: 'none',
        schedulers: ['none', 'mq-deadline'],
        rotational: false,
      },
    ]);
  });

  it('a bind mount resolves through the filesystem it shows', () => {
    const w = one(FIXTURE, ['/srv/kafka']);
    expect(w.dirs[0]!.mount).toEqual({
      point: '/srv/kafka',
      fstype: 'xfs',
      source: '/dev/sda1',
      dev: '8:1',
      bindOf: '/kafka-logs',
    });
    expect(w.disks.map((d) => d.name)).toEqual(['sda']);
  });

  it('says when a directory has no block device or does not exist, and keeps the others', () => {
    const w = one(FIXTURE, [
      '/scratch/kafka',
      '/var/lib/docker/overlay2/3f1c/merged/kafka',
      '/images/kafka',
      '/data9/kafka-logs',
      '/data1/kafka-logs',
    ]);
    expect(w.disks.map((d) => d.name)).toEqual(['sda']);
    expect(w.dirs.map((d) => d.disks)).toEqual([[], [], [], [], ['sda']]);
    expect(w.findings.map((f) => [f.severity, f.target, f.message])).toEqual([
      [
        'warning',
        'kafka',
        "/scratch/kafka is on tmpfs (tmpfs, mounted at /scratch): no block device, so there is no disk whose I/O can be protected; put the directory on a local disk's filesystem",
      ],
      [
        'warning',
        'kafka',
        expect.stringMatching(
          /^\/var\/lib\/docker\/overlay2\/3f1c\/merged\/kafka is on overlay .*: no block device/,
        ),
      ],
      [
        'warning',
        'kafka',
        '/images/kafka is on loop device loop0 (backed by /var/lib/images/kafka.img): the disk under the backing file is not followed; put the directory on a real disk',
      ],
      [
        'warning',
        'kafka',
        '/data9/kafka-logs does not exist (/data9 is missing): a typo, or its disk is not mounted; no disk found for it',
      ],
    ]);
  });

  it("reads a broker's server.properties: log.dirs continued over lines, with spaces", () => {
    const [w] = readWorkloadDisks(FIXTURE, [
      { workload: 'kafka', source: { kind: 'kafkaConfig', file: '/etc/kafka/server.properties' } },
    ]);
    expect(w!.source).toBe('kafkaConfig /etc/kafka/server.properties');
    expect(w!.findings).toEqual([]);
    expect(w!.dirs.map((d) => d.path)).toEqual(['/data1/kafka-logs', '/data2/kafka-logs', '/var/kafka/logs']);
    expect(w!.disks.map((d) => `${d.name}=${d.dev}@${d.node}`)).toEqual([
      'nvme0n1=259:0@1',
      'sda=8:0@0',
      'sdb=8:16@0',
      'sdc=8:32@0',
    ]);
  });
});

describe('filesystems whose st_dev is anonymous (btrfs: 0:N) are found through their source', () => {
  it('/dev/NAME and /dev/mapper/NAME sources; a source naming no device is a warning', () => {
    const root = copy();
    try {
      appendFileSync(
        join(root, 'proc/self/mountinfo'),
        [
          '50 22 0:52 /@kafka /data4 rw,relatime shared:40 - btrfs /dev/sdb1 rw,space_cache=v2,subvolid=257,subvol=/@kafka',
          '51 22 0:53 / /data5 rw,relatime shared:41 - btrfs /dev/mapper/vg0-kafka rw,space_cache=v2,subvolid=5,subvol=/',
          '52 22 0:54 / /data6 rw,relatime shared:42 - btrfs none rw',
          '',
        ].join('\n'),
      );
      for (const d of ['data4/kafka', 'data5/kafka', 'data6/kafka'])
        mkdirSync(join(root, d), { recursive: true });
      const w = one(root, ['/data4/kafka', '/data5/kafka', '/data6/kafka']);
      expect(w.dirs[0]).toMatchObject({
        mount: { point: '/data4', fstype: 'btrfs', dev: '0:52', bindOf: '/@kafka' },
        layers: [{ name: 'sdb1', kind: 'partition' }],
        disks: ['sdb'],
      });
      expect(w.dirs[1]!.layers.map((l) => l.name)).toEqual(['dm-0', 'md0', 'sdb1', 'sdc1']);
      expect(w.dirs[1]!.disks).toEqual(['sdb', 'sdc']);
      expect(w.findings).toEqual([
        {
          severity: 'warning',
          target: 'kafka',
          message:
            '/data6/kafka is on btrfs (none, mounted at /data6): device 0:54 is not a block device and the source names none; there is no disk whose I/O can be protected',
        },
      ]);
    } finally {
      rmSync(root, { recursive: true });
    }
  });
});

describe('untrusted input: a failed or odd read is unknown, said once, never thrown', () => {
  it('an unreadable mountinfo makes every directory unknown', () => {
    const root = copy();
    try {
      unlinkSync(join(root, 'proc/self/mountinfo'));
      const w = one(root, ['/data1/kafka-logs', '/data2/kafka-logs']);
      expect(w.disks).toEqual([]);
      expect(w.findings).toEqual([
        {
          severity: 'unknown',
          target: 'kafka',
          message: `${root}/proc/self/mountinfo does not exist: no directory can be tied to its disk`,
        },
      ]);
    } finally {
      rmSync(root, { recursive: true });
    }
  });

  it('garbage in scheduler, rotational and dev, and numa_node -1, are unknown', () => {
    const root = copy();
    try {
      const nvme = 'sys/devices/pci0000:80/0000:80:02.0/0000:83:00.0';
      writeFileSync(join(root, nvme, 'nvme/nvme0/nvme0n1/queue/scheduler'), '<script>\n');
      writeFileSync(join(root, nvme, 'nvme/nvme0/nvme0n1/queue/rotational'), '2\n');
      writeFileSync(join(root, nvme, 'nvme/nvme0/nvme0n1/dev'), 'x\n');
      writeFileSync(join(root, nvme, 'nvme/nvme0/numa_node'), '-1\n');
      const w = one(root, ['/data 3/kafka-logs']);
      expect(w.disks).toEqual([
        { name: 'nvme0n1', dev: null, node: null, scheduler: null, schedulers: [], rotational: null },
      ]);
      expect(w.findings.map((f) => f.message)).toEqual(
        [
          '/sys/devices/pci0000:80/0000:80:02.0/0000:83:00.0/nvme/nvme0/nvme0n1/dev: unexpected "x"; nvme0n1\'s MAJ:MIN is unknown',
          '/sys/devices/pci0000:80/0000:80:02.0/0000:83:00.0/nvme/nvme0/nvme0n1/queue/scheduler: unexpected "<script>"; nvme0n1\'s I/O scheduler is unknown',
          '/sys/devices/pci0000:80/0000:80:02.0/0000:83:00.0/nvme/nvme0/nvme0n1/queue/rotational: unexpected "2"; nvme0n1\'s rotational flag is unknown',
        ].map((m) => `${root}${m}`),
      );
      expect(w.findings.every((f) => f.severity === 'unknown')).toBe(true);
    } finally {
      rmSync(root, { recursive: true });
    }
  });

  it('a slave link leading out of sys/ is not followed; a slaves/ loop is said once', () => {
    const root = copy();
    try {
      const md0 = join(root, 'sys/devices/virtual/block/md0');
      unlinkSync(join(md0, 'slaves/sdc1'));
      symlinkSync('../../../../../../etc', join(md0, 'slaves/sdc1'));
      symlinkSync('../../dm-0', join(md0, 'slaves/dm-0'));
      const w = one(root, ['/data2/kafka-logs']);
      expect(w.disks.map((d) => d.name)).toEqual(['sdb']);
      expect(w.findings.map((f) => f.message)).toEqual([
        "/data2/kafka-logs: dm-0's slaves/ in sysfs lead back to dm-0; the disks under it are unknown",
        "/data2/kafka-logs: md0's slave sdc1 cannot be followed in sysfs; the disks under it are unknown",
      ]);
    } finally {
      rmSync(root, { recursive: true });
    }
  });

  it('a device missing from /sys/dev/block is unknown', () => {
    const root = copy();
    try {
      unlinkSync(join(root, 'sys/dev/block/8:1'));
      const w = one(root, ['/data1/kafka-logs']);
      expect(w.disks).toEqual([]);
      expect(w.findings).toEqual([
        {
          severity: 'unknown',
          target: 'kafka',
          message: `/data1/kafka-logs is on xfs (/dev/sda1, mounted at /data1): device 8:1 is not in ${root}/sys/dev/block; its disk is unknown`,
        },
      ]);
    } finally {
      rmSync(root, { recursive: true });
    }
  });

  it('a symlink escaping upwards stays inside the root', () => {
    const root = copy();
    try {
      symlinkSync('../../../../../../../../data1/kafka-logs', join(root, 'var/kafka/up'));
      const w = one(root, ['/var/kafka/up']);
      expect(w.dirs[0]!.resolved).toBe('/data1/kafka-logs');
      expect(w.disks.map((d) => d.name)).toEqual(['sda']);
      symlinkSync('/var/kafka/loop', join(root, 'var/kafka/loop'));
      expect(one(root, ['/var/kafka/loop/x']).findings).toEqual([
        {
          severity: 'unknown',
          target: 'kafka',
          message:
            '/var/kafka/loop/x: cannot follow the path (ELOOP at /var/kafka/loop); its disk is unknown',
        },
      ]);
    } finally {
      rmSync(root, { recursive: true });
    }
  });

  it('server.properties: log.dir when log.dirs is absent; the default with a warning; unreadable', () => {
    const root = copy();
    try {
      const file = join(root, 'etc/kafka/server.properties');
      const read = () =>
        readWorkloadDisks(root, [
          { workload: 'kafka', source: { kind: 'kafkaConfig', file: '/etc/kafka/server.properties' } },
        ])[0]!;
      writeFileSync(file, 'log.dir: /data1/kafka-logs\n');
      expect(read().dirs.map((d) => d.path)).toEqual(['/data1/kafka-logs']);
      writeFileSync(file, 'broker.id=1\n');
      const dflt = read();
      expect(dflt.dirs.map((d) => d.path)).toEqual(['/tmp/kafka-logs']);
      expect(dflt.findings[0]!.message).toMatch(
        /sets neither log\.dirs nor log\.dir: .*default \/tmp\/kafka-logs.*; set log\.dirs$/,
      );
      writeFileSync(file, 'log.dirs=kafka-logs,/data1/kafka-logs\n');
      const rel = read();
      expect(rel.dirs.map((d) => d.path)).toEqual(['/data1/kafka-logs']);
      expect(rel.findings.map((f) => f.message)).toEqual([
        `${root}/etc/kafka/server.properties: log.dirs names "kafka-logs", a relative directory (the broker's working directory decides where); write it as an absolute path`,
      ]);
      unlinkSync(file);
      const gone = read();
      expect(gone.dirs).toEqual([]);
      expect(gone.findings).toEqual([
        {
          severity: 'unknown',
          target: 'kafka',
          message: `cannot read ${root}/etc/kafka/server.properties (ENOENT at /etc/kafka/server.properties): Kafka's log directories are unknown; check workloads disks.kafkaConfig`,
        },
      ]);
    } finally {
      rmSync(root, { recursive: true });
    }
  });
});
