// I/O on Kafka's disks in `isolate check`: each workload's io.stat (v1: blkio throttle counters) per
// disk of Kafka's data directories and its io.pressure, differenced over the window, on a host root
// made of a Dell R630's CPU tree, the r630-kafka block devices and a cgroup2 stand-in. The findings:
// a warning only when Kafka stalls on I/O while a batch workload does I/O on Kafka's own disks.
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatCheck } from '../../src/audit/format.js';
import {
  BATCH_IO_OPS_PER_SEC,
  type IoCounts,
  type IoDiskRef,
  type IoTarget,
  ioFindings,
  ioOver,
  KAFKA_IO_PRESSURE_HIGH,
  MIN_JUDGED_WINDOW_MS,
  readIoCounts,
} from '../../src/audit/io.js';
import { parseBlkioThrottle, parseIoStat, readBlkioStat } from '../../src/cgroup/iostat.js';
import { check } from '../../src/ops/check.js';
import { makeFakeHost, overlayFixture } from '../support/fake-host.js';
import { makeFakeV1Host, mountinfoFor } from '../support/fake-v1-host.js';
import { KAFKA_DATA2_POLICY, writePolicy } from '../support/policies.js';

const FIXTURES = path.join(import.meta.dirname, '../fixtures');
const CG = 'sys/fs/cgroup';

function psi(someUs: number, fullUs: number, avg10 = 0): string {
  return `some avg10=${avg10.toFixed(2)} avg60=0.00 avg300=0.00 total=${someUs}\nfull avg10=${(avg10 / 2).toFixed(2)} avg60=0.00 avg300=0.00 total=${fullUs}\n`;
}

/** A Dell R630 root whose kafka.slice keeps its logs on /data2 (LVM over md over sdb1, sdc1). */
function host(): { root: string; policy: string } {
  const root = makeFakeHost('intel-2s-ht-split', [
    'init.scope',
    'system.slice',
    'kafka.slice',
    'hadoop-yarn',
  ]);
  overlayFixture(root, 'disks/r630-kafka');
  // The disks fixture's mountinfo has no cgroup2 mount; the host's does.
  appendFileSync(
    path.join(root, 'proc/self/mountinfo'),
    '90 1 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n',
  );
  for (const g of ['kafka.slice', 'hadoop-yarn']) {
    // sdb (8:16) and sdc (8:32) are Kafka's; sda (8:0) holds the root file system.
    writeFileSync(
      path.join(root, CG, g, 'io.stat'),
      '8:0 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n8:16 rbytes=1000 wbytes=2000 rios=3 wios=4 dbytes=0 dios=0\n',
    );
    writeFileSync(path.join(root, CG, g, 'io.pressure'), psi(1_000, 500));
  }
  return { root, policy: writePolicy(KAFKA_DATA2_POLICY, 'isolate-io-policy-') };
}

const TARGETS = (root: string): IoTarget[] => [
  {
    workload: 'kafka',
    class: 'exclusive',
    target: '/kafka.slice',
    dir: path.join(root, CG, 'kafka.slice'),
    v1: false,
  },
  {
    workload: 'flink',
    class: 'batch',
    target: '/hadoop-yarn',
    dir: path.join(root, CG, 'hadoop-yarn'),
    v1: false,
  },
];
const DISKS: IoDiskRef[] = [
  { name: 'sdb', dev: '8:16', of: ['kafka'] },
  { name: 'sdc', dev: '8:32', of: ['kafka'] },
];

/** A read taken `ms` earlier than now: a window of that length without sleeping. */
function earlier<T extends { at: number }>(c: T, ms: number): T {
  return { ...c, at: c.at - ms };
}

describe('io.stat and blkio counters', () => {
  it('reads the four counters per device; other keys (io.latency, iocost) are allowed', () => {
    const s = parseIoStat(
      '8:16 rbytes=10 wbytes=20 rios=1 wios=2 dbytes=0 dios=0 use_delay=0 delay_nsec=0 avg_lat=512 win=100\n259:0 rbytes=0 wbytes=5 rios=0 wios=1 dbytes=0 dios=0\n',
    );
    expect(s).toEqual(
      new Map([
        ['8:16', { rbytes: 10, wbytes: 20, rios: 1, wios: 2 }],
        ['259:0', { rbytes: 0, wbytes: 5, rios: 0, wios: 1 }],
      ]),
    );
  });

  it.each([
    ['no device', 'rbytes=1 wbytes=2 rios=1 wios=1', /expected MAJ:MIN first/],
    ['a missing counter', '8:16 rbytes=1 wbytes=2 rios=1', /wios is missing/],
    ['a negative count', '8:16 rbytes=-1 wbytes=2 rios=1 wios=1', /rbytes is not a count/],
    [
      'a count beyond 2^53',
      '8:16 rbytes=18446744073709551615 wbytes=2 rios=1 wios=1',
      /rbytes is not a count/,
    ],
    ['a field without =', '8:16 rbytes 1', /key=value/],
    [
      'a device twice',
      '8:16 rbytes=1 wbytes=2 rios=1 wios=1\n8:16 rbytes=1 wbytes=2 rios=1 wios=1',
      /listed twice/,
    ],
  ])('refuses io.stat with %s (unknown, never zeros)', (_, text, why) => {
    expect(parseIoStat(text)).toMatch(why);
  });

  it('v1: Read and Write rows per device; Sync/Async/Total are other cuts of the same I/O', () => {
    expect(
      parseBlkioThrottle(
        '8:16 Read 4096\n8:16 Write 8192\n8:16 Sync 8192\n8:16 Async 4096\n8:16 Discard 0\n8:16 Total 12288\nTotal 12288\n',
      ),
    ).toEqual(new Map([['8:16', { read: 4096, write: 8192 }]]));
    expect(parseBlkioThrottle('8:16 Frobnicate 1\n')).toMatch(/unknown operation/);
    expect(parseBlkioThrottle('8:16 Read\n')).toMatch(/expected "MAJ:MIN Operation count"/);
  });

  it('v1: the _recursive counters (children such as YARN containers count), else the own ones, said', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'isolate-blkio-'));
    writeFileSync(path.join(dir, 'blkio.throttle.io_service_bytes'), '8:16 Read 1\n8:16 Write 2\nTotal 3\n');
    writeFileSync(path.join(dir, 'blkio.throttle.io_serviced'), '8:16 Read 1\n8:16 Write 1\nTotal 2\n');
    const own = readBlkioStat(dir, 'blkio:/hadoop-yarn');
    expect(own.stat?.get('8:16')).toEqual({ rbytes: 1, wbytes: 2, rios: 1, wios: 1 });
    expect(own.note).toMatch(
      /no blkio.throttle.\*_recursive files, so only the I\/O of processes in the cgroup itself/,
    );
    writeFileSync(
      path.join(dir, 'blkio.throttle.io_service_bytes_recursive'),
      '8:16 Read 100\n8:16 Write 200\nTotal 300\n',
    );
    writeFileSync(
      path.join(dir, 'blkio.throttle.io_serviced_recursive'),
      '8:16 Read 10\n8:16 Write 20\nTotal 30\n',
    );
    const rec = readBlkioStat(dir, 'blkio:/hadoop-yarn');
    expect(rec.stat?.get('8:16')).toEqual({ rbytes: 100, wbytes: 200, rios: 10, wios: 20 });
    expect(rec.note).toBeUndefined();
    rmSync(path.join(dir, 'blkio.throttle.io_serviced_recursive'));
    const half = readBlkioStat(dir, 'blkio:/hadoop-yarn');
    expect(half.stat).toBeNull();
    expect(half.stat === null && half.problem).toMatch(/io_serviced_recursive does not exist/);
  });
});

describe('the window', () => {
  it('differences per workload and disk; a disk the kernel does not list did no I/O', () => {
    const { root } = host();
    const before = readIoCounts(TARGETS(root));
    writeFileSync(
      path.join(root, CG, 'hadoop-yarn/io.stat'),
      '8:0 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n8:16 rbytes=1000 wbytes=8390608 rios=3 wios=404 dbytes=0 dios=0\n8:32 rbytes=0 wbytes=4096 rios=0 wios=1 dbytes=0 dios=0\n',
    );
    writeFileSync(path.join(root, CG, 'kafka.slice/io.pressure'), psi(1_000 + 250_000, 500 + 100_000, 12));
    const r = ioOver(earlier(before, 1000), readIoCounts(TARGETS(root)), TARGETS(root), DISKS);
    expect(r.windowMs).toBeGreaterThanOrEqual(1000);
    expect(r.unknown).toEqual([]);
    const flink = r.workloads.find((w) => w.name === 'flink')!;
    expect(flink.disks).toEqual({
      sdb: { rbytes: 0, wbytes: 8388608, rios: 0, wios: 400 },
      sdc: { rbytes: 0, wbytes: 4096, rios: 0, wios: 1 },
    });
    const kafka = r.workloads.find((w) => w.name === 'kafka')!;
    expect(kafka.disks).toEqual({
      sdb: { rbytes: 0, wbytes: 0, rios: 0, wios: 0 },
      sdc: { rbytes: 0, wbytes: 0, rios: 0, wios: 0 },
    });
    expect(kafka.pressure).toMatchObject({ someStalledUs: 250_000, fullStalledUs: 100_000, someAvg10: 0.12 });
    expect(kafka.pressure!.some).toBeCloseTo(250_000 / (r.windowMs * 1000), 3);
    const f = ioFindings(r);
    expect(f).toHaveLength(1);
    expect(f[0]!.severity).toBe('warning');
    expect(f[0]!.message).toMatch(
      /^kafka's tasks waited on I\/O 2\d\.\d% of 1\.0 s \(all of them at once \d+\.\d%\) while batch workloads did I\/O on its disks sdb, sdc: flink \(sdb 0 KiB read in 0, 8\.0 MiB written in 400; sdc 0 KiB read in 0, 4 KiB written in 1\)/,
    );
  });

  it('a failed or malformed read is unknown, not zero, and is said', () => {
    const { root } = host();
    const before = readIoCounts(TARGETS(root));
    writeFileSync(path.join(root, CG, 'hadoop-yarn/io.stat'), '8:16 rbytes=garbage\n');
    rmSync(path.join(root, CG, 'kafka.slice/io.pressure'));
    const r = ioOver(earlier(before, 1000), readIoCounts(TARGETS(root)), TARGETS(root), DISKS);
    const flink = r.workloads.find((w) => w.name === 'flink')!;
    expect(flink.disks).toEqual({ sdb: null, sdc: null });
    expect(r.workloads.find((w) => w.name === 'kafka')!.pressure).toBeNull();
    expect(r.unknown).toEqual([
      '/kafka.slice/io.pressure does not exist (PSI is off: boot without psi=0, or CONFIG_PSI)',
      '/hadoop-yarn/io.stat: line 1 (8:16): rbytes is not a count ("garbage")',
    ]);
    expect(ioFindings(r)).toEqual([
      {
        severity: 'info',
        message: expect.stringMatching(
          /^io on Kafka's disks partly unknown: \/kafka.slice\/io.pressure does not exist/,
        ),
      },
    ]);
  });

  it('counters that went down (the cgroup was made again) are unknown for the window', () => {
    const { root } = host();
    const before = readIoCounts(TARGETS(root));
    writeFileSync(
      path.join(root, CG, 'hadoop-yarn/io.stat'),
      '8:16 rbytes=0 wbytes=0 rios=0 wios=0 dbytes=0 dios=0\n',
    );
    const r = ioOver(earlier(before, 1000), readIoCounts(TARGETS(root)), TARGETS(root), DISKS);
    expect(r.workloads.find((w) => w.name === 'flink')!.disks.sdb).toBeNull();
    expect(r.unknown[0]).toMatch(/flink: sdb \(8:16\) counters went down/);
  });

  it.each([
    ['pressure below the threshold', KAFKA_IO_PRESSURE_HIGH - 0.02, 400, []],
    ['batch I/O below both rates', 0.3, BATCH_IO_OPS_PER_SEC - 1, ['info']],
    ['both', 0.3, 400, ['warning']],
  ])('judges only contention: %s', (_, share, ios, severities) => {
    const { root } = host();
    const before = readIoCounts(TARGETS(root));
    writeFileSync(
      path.join(root, CG, 'hadoop-yarn/io.stat'),
      `8:16 rbytes=1000 wbytes=${2000 + ios * 512} rios=3 wios=${4 + ios} dbytes=0 dios=0\n`,
    );
    writeFileSync(path.join(root, CG, 'kafka.slice/io.pressure'), psi(1_000 + share * 1e6, 500));
    const after = readIoCounts(TARGETS(root));
    // Exactly one second, so the shares are the ones written.
    const r = ioOver({ ...before, at: after.at - 1000 }, after, TARGETS(root), DISKS);
    expect(ioFindings(r).map((f) => f.severity)).toEqual(severities);
  });

  it("batch I/O on a disk that is not Kafka's is reported under no disk and never judged", () => {
    const { root } = host();
    const before = readIoCounts(TARGETS(root));
    writeFileSync(
      path.join(root, CG, 'hadoop-yarn/io.stat'),
      '8:0 rbytes=4096 wbytes=99999999 rios=1 wios=9999 dbytes=0 dios=0\n8:16 rbytes=1000 wbytes=2000 rios=3 wios=4 dbytes=0 dios=0\n',
    );
    writeFileSync(path.join(root, CG, 'kafka.slice/io.pressure'), psi(1_000 + 500_000, 500));
    const after = readIoCounts(TARGETS(root));
    const r = ioOver({ ...before, at: after.at - 1000 }, after, TARGETS(root), DISKS);
    expect(Object.keys(r.workloads[1]!.disks)).toEqual(['sdb', 'sdc']);
    expect(ioFindings(r).map((f) => f.severity)).toEqual(['info']);
  });

  it("a window too short to judge (the agent's first audit) is reported, not judged", () => {
    const { root } = host();
    const before = readIoCounts(TARGETS(root));
    writeFileSync(path.join(root, CG, 'kafka.slice/io.pressure'), psi(1_000 + 50_000, 500, 90));
    // The window is set, not timed: two reads a slow machine spaced further apart must not decide it.
    const after = readIoCounts(TARGETS(root));
    const r = ioOver({ ...before, at: after.at - (MIN_JUDGED_WINDOW_MS - 1) }, after, TARGETS(root), DISKS);
    expect(r.windowMs).toBe(MIN_JUDGED_WINDOW_MS - 1);
    expect(ioFindings(r)).toEqual([]);
  });
});

describe('isolate check', () => {
  it("measures over its window after planning, on the disks the policy's directories resolve to", async () => {
    const { root, policy } = host();
    const r = await check({ root, policyPath: policy, interrupts: { windowMs: 300 } });
    // The window the counts were read over (a timer cannot fire early, so this is no budget).
    expect(r.io?.windowMs).toBeGreaterThanOrEqual(300);
    expect(r.io?.disks).toEqual(DISKS);
    expect(r.io?.workloads.map((w) => [w.name, w.class, w.target, w.disks.sdb])).toEqual([
      ['kafka', 'exclusive', '/kafka.slice', { rbytes: 0, wbytes: 0, rios: 0, wios: 0 }],
      ['flink', 'batch', '/hadoop-yarn', { rbytes: 0, wbytes: 0, rios: 0, wios: 0 }],
    ]);
    const text = formatCheck(r);
    expect(text).toContain('  io on sdb (8:16, kafka), sdc (8:32, kafka) in 0.');
    expect(text).toMatch(
      / {4}flink \(batch\): sdb none, sdc none; io pressure some 0\.0% full 0\.0% of the window/,
    );
  });

  it("from the agent's previous read: no wait, and the window is judged", async () => {
    const { root, policy } = host();
    const since = readIoCounts(TARGETS(root));
    writeFileSync(
      path.join(root, CG, 'hadoop-yarn/io.stat'),
      '8:16 rbytes=1000 wbytes=209717200 rios=3 wios=2004 dbytes=0 dios=0\n',
    );
    writeFileSync(
      path.join(root, CG, 'kafka.slice/io.pressure'),
      psi(1_000 + 5_000_000, 500 + 2_000_000, 40),
    );
    let closing: unknown = null;
    const r = await check({
      root,
      policyPath: policy,
      interrupts: { windowMs: 0 },
      io: {
        since: earlier(since, 10_000),
        read: (c) => {
          closing = c;
        },
      },
    });
    expect(closing).not.toBeNull();
    expect(r.io?.workloads[1]?.disks.sdb).toEqual({ rbytes: 0, wbytes: 209715200, rios: 0, wios: 2000 });
    expect(r.status).toBe('WARNING');
    const io = r.findings.find((f) => f.severity === 'warning' && f.target === '/kafka.slice');
    expect(io?.message).toMatch(
      /^kafka's tasks waited on I\/O [45]\d\.\d% of 1\d\.\d s .* while batch workloads did I\/O on its disks sdb, sdc: flink \(sdb 0 KiB read in 0, 200\.0 MiB written in 2000\); "isolate plan" shows the io settings/,
    );
  });

  it('no disks in the policy: no io section', async () => {
    const { root, policy } = host();
    writeFileSync(
      policy,
      readFileSync(policy, 'utf8').replace(', disks: { paths: [/data2/kafka-logs] }', ''),
    );
    const r = await check({ root, policyPath: policy, interrupts: { windowMs: 0 } });
    expect(r.io).toBeUndefined();
  });

  it('cgroup v1 hosts read blkio, where no per-cgroup pressure exists', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'isolate-blkio-'));
    mkdirSync(path.join(dir, 'hadoop-yarn'));
    const t: IoTarget[] = [
      {
        workload: 'flink',
        class: 'batch',
        target: 'blkio:/hadoop-yarn',
        dir: path.join(dir, 'hadoop-yarn'),
        v1: true,
      },
      {
        workload: 'kafka',
        class: 'exclusive',
        target: '/kafka',
        dir: null,
        v1: true,
        why: 'a process match has no blkio cgroup of its own',
      },
    ];
    const write = (bytes: number, ios: number) => {
      writeFileSync(
        path.join(dir, 'hadoop-yarn/blkio.throttle.io_service_bytes_recursive'),
        `8:16 Read 0\n8:16 Write ${bytes}\nTotal ${bytes}\n`,
      );
      writeFileSync(
        path.join(dir, 'hadoop-yarn/blkio.throttle.io_serviced_recursive'),
        `8:16 Read 0\n8:16 Write ${ios}\nTotal ${ios}\n`,
      );
    };
    write(100, 1);
    const before = readIoCounts(t);
    write(100 + 4096 * 10, 11);
    const r = ioOver(earlier(before, 1000), readIoCounts(t), t, DISKS);
    expect(r.workloads[0]!.disks.sdb).toEqual({ rbytes: 0, wbytes: 40960, rios: 0, wios: 10 });
    expect(r.workloads[0]!.pressure).toBeNull();
    expect(r.workloads[1]!.disks.sdb).toBeNull();
    expect(r.unknown).toEqual(['kafka: a process match has no blkio cgroup of its own']);
  });

  it("cgroup v1 end to end: each workload's cgroup in the blkio hierarchy, by its match", async () => {
    const root = makeFakeV1Host('intel-2s-ht-split', {
      layout: 'legacy',
      cpus: '0-31',
      mems: '0-1',
      cpuGroups: ['hadoop-yarn', 'kafka'],
      memoryGroups: ['hadoop-yarn', 'kafka'],
      mountinfo: null,
    });
    overlayFixture(root, 'disks/r630-kafka');
    writeFileSync(
      path.join(root, 'proc/self/mountinfo'),
      `${readFileSync(path.join(FIXTURES, 'disks/r630-kafka/proc/self/mountinfo'), 'utf8')}${mountinfoFor(
        'legacy',
      )
        .split('\n')
        .filter((l) => l.includes('/sys/fs/cgroup'))
        .join(
          '\n',
        )}\n33 25 0:32 / /sys/fs/cgroup/blkio rw,nosuid,nodev,noexec,relatime shared:17 - cgroup cgroup rw,blkio\n`,
    );
    const blkio = path.join(root, CG, 'blkio');
    const counters = (g: string, bytes: number, ios: number) => {
      mkdirSync(path.join(blkio, g), { recursive: true });
      writeFileSync(path.join(blkio, g, 'tasks'), '');
      writeFileSync(
        path.join(blkio, g, 'blkio.throttle.io_service_bytes_recursive'),
        `8:16 Read 0\n8:16 Write ${bytes}\nTotal ${bytes}\n`,
      );
      writeFileSync(
        path.join(blkio, g, 'blkio.throttle.io_serviced_recursive'),
        `8:16 Read 0\n8:16 Write ${ios}\nTotal ${ios}\n`,
      );
    };
    counters('', 0, 0);
    counters('hadoop-yarn', 4096, 1);
    counters('kafka', 0, 0);
    const policy = path.join(mkdtempSync(path.join(tmpdir(), 'isolate-io-v1-')), 'policy.yaml');
    writeFileSync(
      policy,
      `apiVersion: isolate/v1
kind: HostPolicy
workloads:
  - { name: kafka, class: exclusive, cores: 2, match: { cgroup: /kafka }, disks: { paths: [/data2/kafka-logs] } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
`,
    );
    const first = await check({ root, policyPath: policy, interrupts: { windowMs: 0 } });
    expect(first.io?.workloads.map((w) => w.target)).toEqual(['blkio:/kafka', 'blkio:/hadoop-yarn']);
    let since: IoCounts | null = null;
    await check({ root, policyPath: policy, interrupts: { windowMs: 0 }, io: { read: (c) => (since = c) } });
    counters('hadoop-yarn', 4096 + 8192, 3);
    const r = await check({ root, policyPath: policy, interrupts: { windowMs: 0 }, io: { since } });
    expect(r.io?.workloads.find((w) => w.name === 'flink')?.disks.sdb).toEqual({
      rbytes: 0,
      wbytes: 8192,
      rios: 0,
      wios: 2,
    });
    expect(r.io?.workloads.every((w) => w.pressure === null)).toBe(true);
  });
});
