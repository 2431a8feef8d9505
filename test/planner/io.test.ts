// The io mechanism named for each disk, and why: io.weight only where BFQ is the scheduler or iocost
// is enabled for the device; io.latency under any scheduler; nothing where the controller is missing.
import { describe, expect, it } from 'vitest';
import type { WholeDisk, WorkloadDisks } from '../../src/model/disks.js';
import type { IoFacts } from '../../src/model/io.js';
import { unavailableCgroupFs } from '../../src/model/observed.js';
import * as ioModule from '../../src/planner/io.js';
import { ioControllerOf, ioPreconditionNotes } from '../../src/planner/io.js';
import { freshHost } from '../support/observed.js';

const disk = (name: string, dev: string | null, scheduler: string | null): WholeDisk => ({
  name,
  dev,
  node: 0,
  scheduler,
  schedulers: [],
  rotational: true,
});
const kafka = (disks: WholeDisk[]): WorkloadDisks => ({
  workload: 'kafka',
  source: 'paths',
  dirs: [],
  disks,
  findings: [],
});
const facts = (over: Partial<IoFacts> = {}): IoFacts => ({
  controller: 'available',
  controllersFile: '/sys/fs/cgroup/cgroup.controllers',
  iocost: { enabled: [] },
  iocostFile: '/sys/fs/cgroup/io.cost.qos',
  latency: { state: 'present', evidence: '/sys/fs/cgroup/system.slice has io.latency' },
  ...over,
});

describe('io preconditions per disk', () => {
  const disks = [
    disk('sda', '8:0', 'bfq'),
    disk('sdb', '8:16', 'mq-deadline'),
    disk('nvme0n1', '259:0', 'none'),
    disk('sdc', '8:32', null),
    disk('sdd', null, 'bfq'),
  ];

  it('BFQ: weights through io.bfq.weight; mq-deadline or none without iocost: io.latency only', () => {
    const notes = ioPreconditionNotes([kafka(disks)], facts());
    expect(notes).toEqual([
      expect.stringMatching(
        /^io kafka: sda \(8:0\): io\.weight and io\.latency: BFQ is the active scheduler \(weights act through io\.bfq\.weight\); io\.latency acts under any scheduler$/,
      ),
      expect.stringMatching(
        /^io kafka: sdb \(8:16\): io\.latency only \(it acts under any scheduler\): io\.weight would do nothing, since the scheduler is mq-deadline and iocost is not enabled for 8:16 in \/sys\/fs\/cgroup\/io\.cost\.qos; select bfq in queue\/scheduler or enable iocost for weights$/,
      ),
      expect.stringMatching(
        /^io kafka: nvme0n1 \(259:0\): io\.latency only .*the scheduler is none and iocost is not enabled/,
      ),
      expect.stringMatching(
        /^io kafka: sdc \(8:32\): io\.latency \(it acts under any scheduler\); whether io\.weight would act is unknown: the scheduler is unknown/,
      ),
      'io kafka: sdd: its MAJ:MIN is unknown, so no io setting can name it',
    ]);
  });

  it('iocost enabled for a device gives it weights whatever its scheduler', () => {
    const notes = ioPreconditionNotes([kafka(disks.slice(1, 3))], facts({ iocost: { enabled: ['259:0'] } }));
    expect(notes[0]).toMatch(/^io kafka: sdb \(8:16\): io\.latency only/);
    expect(notes[1]).toMatch(
      /^io kafka: nvme0n1 \(259:0\): io\.weight and io\.latency: iocost is enabled for 259:0 \(enable=1 in \/sys\/fs\/cgroup\/io\.cost\.qos\)/,
    );
  });

  it('a kernel without iocost, or an unreadable io.cost.qos, is said as such', () => {
    expect(ioPreconditionNotes([kafka([disks[1]!])], facts({ iocost: 'unsupported' }))[0]).toMatch(
      /since the scheduler is mq-deadline and this kernel has no iocost \(no \/sys\/fs\/cgroup\/io\.cost\.qos\); select bfq in queue\/scheduler for weights$/,
    );
    expect(ioPreconditionNotes([kafka([disks[1]!])], facts({ iocost: 'unknown' }))[0]).toMatch(
      /whether io\.weight would act is unknown: the scheduler is mq-deadline and \/sys\/fs\/cgroup\/io\.cost\.qos could not be read/,
    );
  });

  it('a missing io controller, cgroup v1 or an unreadable root: one note per workload, no mechanism', () => {
    expect(ioPreconditionNotes([kafka(disks.slice(0, 2))], facts({ controller: 'missing' }))).toEqual([
      'io kafka: the io controller is not in /sys/fs/cgroup/cgroup.controllers, so no io setting can protect sda, sdb (a kernel without CONFIG_BLK_CGROUP, or io bound to a cgroup v1 hierarchy)',
    ]);
    expect(ioPreconditionNotes([kafka(disks.slice(0, 1))], facts({ controller: 'v1' }))).toEqual([
      'io kafka: this host runs cgroup v1 controllers, where blkio offers weights (BFQ only) and throttles only: no io.latency or iocost for sda',
    ]);
    expect(ioPreconditionNotes([kafka(disks.slice(0, 1))], facts({ controller: 'unknown' }))[0]).toMatch(
      /could not be read, so whether io settings can act on sda is unknown/,
    );
  });

  it('a workload without disks gets no note', () => {
    expect(ioPreconditionNotes([kafka([])], facts({ controller: 'missing' }))).toEqual([]);
  });
});

describe('a kernel without io.latency, or one that cannot be told', () => {
  const absent = facts({ latency: { state: 'absent', evidence: 'x' } });
  const unknown = facts({ latency: { state: 'unknown', evidence: 'y' } });

  it('names no io.latency per disk where the kernel has none; says it is unknown where it cannot be told', () => {
    const notes = ioPreconditionNotes(
      [kafka([disk('sda', '8:0', 'bfq'), disk('sdb', '8:16', 'none')])],
      absent,
    );
    expect(notes).toEqual([
      'io kafka: sda (8:0): io.weight: BFQ is the active scheduler (weights act through io.bfq.weight); this kernel has no io.latency',
      'io kafka: sdb (8:16): io.max caps only (this kernel has no io.latency): io.weight would do nothing, since the scheduler is none and iocost is not enabled for 8:16 in /sys/fs/cgroup/io.cost.qos; select bfq in queue/scheduler or enable iocost for weights',
    ]);
    expect(ioPreconditionNotes([kafka([disk('sda', '8:0', 'bfq')])], unknown)).toEqual([
      'io kafka: sda (8:0): io.weight: BFQ is the active scheduler (weights act through io.bfq.weight); io.latency acts only if this kernel has it (unknown)',
    ]);
  });

  it('facts observed before io.latency was count as unknown, never as present', () => {
    const { latency: _, ...old } = facts();
    expect(ioModule.latencySupport(old).state).toBe('unknown');
  });
});

describe('the io controller, from the observed cgroup root', () => {
  it('available, missing, v1 layouts, unreadable', () => {
    const host = freshHost();
    expect(ioControllerOf(host)).toBe('available');
    host.cgroup.rootControllers = ['cpuset', 'cpu', 'memory'];
    expect(ioControllerOf(host)).toBe('missing');
    host.cgroup.rootControllers = [];
    expect(ioControllerOf(host)).toBe('unknown');
    expect(ioControllerOf({ ...host, cgroup: unavailableCgroupFs('none', 'no cgroup mount') })).toBe(
      'unknown',
    );
    expect(ioControllerOf({ ...host, cgroup: unavailableCgroupFs('hybrid', 'v1') })).toBe('v1');
    expect(ioControllerOf({ ...host, cgroup: unavailableCgroupFs('legacy', 'v1') })).toBe('v1');
  });
});

describe('io.latency compares siblings only', () => {
  it('warns when Kafka and a batch workload are no siblings, naming where they meet and the fix', () => {
    const { ioSiblingWarnings } = ioModule;
    expect(
      ioSiblingWarnings([
        {
          exclusive: { name: 'kafka', target: '/kafka.slice' },
          batch: { name: 'flink', target: '/hadoop-yarn' },
        },
      ]),
    ).toEqual([]);
    expect(
      ioSiblingWarnings([
        {
          exclusive: { name: 'kafka', target: '/system.slice/kafka.service' },
          batch: { name: 'flink', target: '/hadoop-yarn' },
        },
      ]),
    ).toEqual([
      "io kafka: io.latency holds back only /system.slice/kafka.service's siblings, and flink (/hadoop-yarn) is none (they meet at /): its target does not throttle flink, only the weights and caps do; run kafka in a top-level slice of its own (strict: true) next to /hadoop-yarn",
    ]);
  });
});
