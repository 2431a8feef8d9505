// Buffered writeback in front of Kafka's disks, as plan notes: the host's vm.dirty_* when a batch
// cgroup may dirty more than Kafka's slowest disk writes in a few seconds (bounded by its memory.high
// through cgroup writeback; by the host's memory without one or on cgroup v1), and wbt_lat_usec per
// disk. Pure rules first, then `isolate plan` on the R630 fixture root with the sysctls written.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { WholeDisk, WorkloadDisks } from '../../src/model/disks.js';
import { CpuSet } from '../../src/model/cpuset.js';
import type { WorkloadAllocation } from '../../src/model/plan.js';
import type { VmDirty, WbtState } from '../../src/model/writeback.js';
import { DIRTY_SECONDS, writebackNotes } from '../../src/planner/writeback.js';
import { readVmDirty, readWbt } from '../../src/topology/writeback.js';
import { isolate } from '../cli/run.js';
import { r630DisksRoot } from '../support/fake-host.js';
import { KAFKA_DATA2_POLICY, writePolicy } from '../support/policies.js';

const GiB = 1024 ** 3;
const disk = (name: string, rotational: boolean | null, scheduler = 'mq-deadline'): WholeDisk => ({
  name,
  dev: '8:16',
  node: 0,
  scheduler,
  schedulers: [scheduler],
  rotational,
});
const kafkaDisks = (...d: WholeDisk[]): WorkloadDisks[] => [
  { workload: 'kafka', source: 'paths', dirs: [], disks: d, findings: [] },
];
const batch = (memory: WorkloadAllocation['memory']): WorkloadAllocation => ({
  name: 'flink',
  class: 'batch',
  target: '/hadoop-yarn',
  cpus: CpuSet.parse('0-1'),
  cores: [],
  nodes: [0],
  mems: [0],
  memory,
  reason: '',
});
const DEFAULTS: VmDirty = { ratio: 20, bytes: 0, backgroundRatio: 10, backgroundBytes: 0, problems: [] };
const facts = (over: Partial<Parameters<typeof writebackNotes>[2]> = {}) => ({
  dirty: DEFAULTS,
  hostMemoryBytes: 256 * GiB,
  v1: false,
  wbt: new Map<string, WbtState>(),
  ...over,
});

describe('dirty pages', () => {
  it("memory.high bounds a batch cgroup's dirty page cache: 20% of 64G is ~69 s of an HDD", () => {
    const notes = writebackNotes(kafkaDisks(disk('sdb', true)), [batch({ high: 64 * GiB })], facts());
    expect(notes).toEqual([
      "dirty pages flink: vm.dirty_ratio=20, dirty_bytes=0, dirty_background_ratio=10, dirty_background_bytes=0 let flink dirty up to 12.8G (vm.dirty_ratio 20% of its memory.high 64G: cgroup writeback bounds a cgroup's dirty page cache by its memory.high / memory.max); sdb (HDD, ~200 MB/s assumed) needs ~69 s to write that, more than 5 s, and its writeback queues ahead of kafka's appends and fsyncs: lower flink's memory.high, or set vm.dirty_bytes and vm.dirty_background_bytes",
    ]);
  });

  it('no memory limit: the host-wide limit, and says that memory.high would bound it', () => {
    const [n] = writebackNotes(kafkaDisks(disk('sdb', true)), [batch({})], facts());
    expect(n).toMatch(
      /up to 51\.2G \(vm\.dirty_ratio 20% of the host's 256G: flink has no memory\.high or memory\.max/,
    );
  });

  it('cgroup v1: no cgroup writeback, whatever the limit', () => {
    const [n] = writebackNotes(
      kafkaDisks(disk('sdb', true)),
      [batch({ high: 8 * GiB })],
      facts({ v1: true }),
    );
    expect(n).toMatch(
      /up to 51\.2G \(vm\.dirty_ratio 20% of the host's 256G: cgroup v1 has no cgroup writeback/,
    );
  });

  it('dirty_bytes replaces the ratio; a small one (or a small memory.high) is quiet', () => {
    const small: VmDirty = { ...DEFAULTS, ratio: 0, bytes: 512 * 1024 * 1024 };
    expect(writebackNotes(kafkaDisks(disk('sdb', true)), [batch({})], facts({ dirty: small }))).toEqual([]);
    // 5 s of an HDD is 1 GB: 20% of 4G is 0.8G.
    expect(writebackNotes(kafkaDisks(disk('sdb', true)), [batch({ high: 4 * GiB })], facts())).toEqual([]);
    const big: VmDirty = { ...DEFAULTS, ratio: 0, bytes: 8 * GiB };
    expect(writebackNotes(kafkaDisks(disk('sdb', true)), [batch({})], facts({ dirty: big }))[0]).toMatch(
      /up to 8G \(vm\.dirty_bytes 8G of the host's 256G/,
    );
  });

  it(`judged against the slowest of Kafka's disks; solid state writes ~1 GB/s (${DIRTY_SECONDS} s: 5 GB)`, () => {
    const high = { high: 16 * GiB }; // 3.2G dirty
    expect(writebackNotes(kafkaDisks(disk('nvme0n1', false)), [batch(high)], facts())).toEqual([]);
    const [n] = writebackNotes(kafkaDisks(disk('nvme0n1', false), disk('sdb', null)), [batch(high)], facts());
    expect(n).toMatch(/sdb \(of unknown kind, taken for an HDD, ~200 MB\/s assumed\) needs ~17 s/);
  });

  it('unreadable sysctls are said, never taken for defaults', () => {
    const d: VmDirty = {
      ...DEFAULTS,
      ratio: null,
      problems: ['/proc/sys/vm/dirty_ratio: not a whole number ("x")'],
    };
    expect(writebackNotes(kafkaDisks(disk('sdb', true)), [batch({})], facts({ dirty: d }))).toEqual([
      'dirty pages: /proc/sys/vm/dirty_ratio: not a whole number ("x")',
    ]);
    expect(writebackNotes(kafkaDisks(disk('sdb', true)), [batch({})], facts({ dirty: null }))[0]).toMatch(
      /has no dirty_\* files, so how much a batch cgroup may dirty ahead of kafka's disks is unknown/,
    );
  });
});

describe('writeback throttling', () => {
  it('per Kafka disk: on with its target, off, absent, unknown', () => {
    const wbt = new Map<string, WbtState>([
      ['sda', { state: 'set', file: '/sys/block/sda/queue/wbt_lat_usec', usec: 75000 }],
      ['sdb', { state: 'set', file: '/sys/block/sdb/queue/wbt_lat_usec', usec: 0 }],
      ['sde', { state: 'set', file: '/sys/block/sde/queue/wbt_lat_usec', usec: 75000 }],
      ['sdc', { state: 'absent', file: '/sys/block/sdc/queue/wbt_lat_usec' }],
      [
        'sdd',
        {
          state: 'unknown',
          file: '/sys/block/sdd/queue/wbt_lat_usec',
          problem: 'EACCES (permission denied)',
        },
      ],
    ]);
    const d = kafkaDisks(
      disk('sda', true),
      disk('sdb', true, 'bfq'),
      disk('sdc', true),
      disk('sdd', true),
      disk('sde', true, 'bfq'),
    );
    const notes = writebackNotes(d, [], facts({ wbt }));
    expect(notes).toEqual([
      "wbt sda: /sys/block/sda/queue/wbt_lat_usec is 75000 (75 ms): writeback throttling cuts back every cgroup's buffered writeback alike, kafka's log flushes included, whenever reads or syncs on sda take longer; it acts before io.latency and io.weight see the I/O (BFQ and iocost turn it off on their disks; writing 0 turns it off by hand)",
      "wbt sdb: /sys/block/sdb/queue/wbt_lat_usec is 0: writeback throttling is off (BFQ turns it off), so only the io settings (io.latency, io.weight) pace buffered writeback against kafka's I/O",
      'wbt sdc: no /sys/block/sdc/queue/wbt_lat_usec (this kernel has no writeback throttling)',
      'wbt sdd: /sys/block/sdd/queue/wbt_lat_usec could not be read (EACCES (permission denied)): whether writeback throttling acts is unknown',
      // 6.1 under BFQ: the file keeps the default though BFQ switched throttling off.
      "wbt sde: /sys/block/sde/queue/wbt_lat_usec reads 75000, but BFQ turns writeback throttling off on its disks (6.1's sysfs still prints the default there), so only the io settings (io.latency, io.weight) pace buffered writeback against kafka's I/O, unless someone wrote /sys/block/sde/queue/wbt_lat_usec since BFQ was chosen",
    ]);
  });

  it('reads wbt_lat_usec and vm.dirty_* under --root, refusing what is not a whole number', () => {
    const root = mkdtempSync(join(tmpdir(), 'isolate-wb-'));
    mkdirSync(join(root, 'sys/block/sdb/queue'), { recursive: true });
    writeFileSync(join(root, 'sys/block/sdb/queue/wbt_lat_usec'), '75000\n');
    expect(readWbt(root, 'sdb')).toEqual({
      state: 'set',
      file: '/sys/block/sdb/queue/wbt_lat_usec',
      usec: 75000,
    });
    writeFileSync(join(root, 'sys/block/sdb/queue/wbt_lat_usec'), '-1\n');
    expect(readWbt(root, 'sdb')).toMatchObject({ state: 'unknown', problem: 'not a whole number ("-1")' });
    expect(readWbt(root, 'sdc').state).toBe('absent');
    expect(readVmDirty(root)).toBeNull();
    mkdirSync(join(root, 'proc/sys/vm'), { recursive: true });
    for (const [f, v] of [
      ['dirty_ratio', '20'],
      ['dirty_bytes', '0'],
      ['dirty_background_ratio', 'ten'],
    ])
      writeFileSync(join(root, 'proc/sys/vm', f!), `${v}\n`);
    expect(readVmDirty(root)).toEqual({
      ratio: 20,
      bytes: 0,
      backgroundRatio: null,
      backgroundBytes: null,
      problems: [
        '/proc/sys/vm/dirty_background_ratio: not a whole number ("ten")',
        '/proc/sys/vm/dirty_background_bytes does not exist',
      ],
    });
  });
});

describe('isolate plan', () => {
  it("shows the notes for the R630's Kafka disks", () => {
    const root = r630DisksRoot();
    mkdirSync(join(root, 'proc/sys/vm'), { recursive: true });
    for (const [f, v] of [
      ['dirty_ratio', '20'],
      ['dirty_bytes', '0'],
      ['dirty_background_ratio', '10'],
      ['dirty_background_bytes', '0'],
    ])
      writeFileSync(join(root, 'proc/sys/vm', f!), `${v}\n`);
    const policy = writePolicy(KAFKA_DATA2_POLICY, 'isolate-wb-policy-');
    const r = isolate(['plan', '--dry-run', '--root', root, '--policy', policy]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /dirty pages flink: vm\.dirty_ratio=20, dirty_bytes=0, dirty_background_ratio=10, dirty_background_bytes=0 let flink dirty up to [\d.]+G \(vm\.dirty_ratio 20% of the host's [\d.]+G: flink has no memory\.high or memory\.max.*sdb \(HDD, ~200 MB\/s assumed\) needs ~\d+ s/,
    );
    // The R630's sdb runs BFQ, which switched writeback throttling off though the file keeps 75000.
    expect(r.stdout).toContain('wbt sdb: /sys/block/sdb/queue/wbt_lat_usec reads 75000, but BFQ turns');
    expect(r.stdout).toContain('wbt sdc: /sys/block/sdc/queue/wbt_lat_usec reads 75000, but BFQ turns');
    const json = JSON.parse(
      isolate(['plan', '--dry-run', '--json', '--root', root, '--policy', policy]).stdout,
    );
    expect(json.notes.filter((n: string) => n.startsWith('wbt '))).toHaveLength(2);
  });
});
