// Kafka as a systemd unit: its io settings are planned as unit properties per device entry (systemd
// owns its cgroup and rewrites io files on every reload; it enables io down to the unit itself), YARN's
// cgroup through cgroupfs with io enabled in the root first; a second plan after the properties are
// held is empty.
import { describe, expect, it } from 'vitest';
import type { WholeDisk } from '../../src/model/disks.js';
import type { ObservedState } from '../../src/model/observed.js';
import type { Change } from '../../src/model/plan.js';
import { planHost } from '../../src/planner/plan.js';
import { parsePolicy } from '../../src/policy/load.js';
import { freshHost } from '../support/observed.js';
import { synthTopology, TWO_NODES_SMT2_SPLIT } from '../support/synthetic.js';

const topology = synthTopology(TWO_NODES_SMT2_SPLIT);
const disk = (name: string, dev: string, scheduler: string, rotational: boolean): WholeDisk => ({
  name,
  dev,
  node: 0,
  scheduler,
  schedulers: [],
  rotational,
});

const policy = parsePolicy(
  `apiVersion: isolate/v1
kind: HostPolicy
strict: true
workloads:
  - { name: kafka, class: exclusive, cores: 2, match: { systemdUnit: kafka.slice }, disks: { paths: [/data1/kafka-logs] } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn }, io: { max: { wbps: 10MiB/s } } }
`,
  'p.yaml',
);

function host(kafkaProps: Record<string, string> = {}): ObservedState {
  const o = freshHost(['kafka.slice', 'hadoop-yarn']);
  o.cgroup.rootSubtreeControl = ['cpuset', 'cpu', 'memory'];
  o.systemd = {
    version: 252,
    units: { 'kafka.slice': { Id: 'kafka.slice', LoadState: 'loaded', AllowedCPUs: '', ...kafkaProps } },
  };
  o.disks = [
    {
      workload: 'kafka',
      source: 'paths',
      dirs: [],
      disks: [disk('sdb', '8:16', 'bfq', true), disk('nvme0n1', '259:0', 'none', false)],
      findings: [],
    },
  ];
  o.io = {
    controller: 'available',
    controllersFile: '/sys/fs/cgroup/cgroup.controllers',
    iocost: { enabled: [] },
    iocostFile: '/sys/fs/cgroup/io.cost.qos',
    latency: { state: 'present', evidence: '/sys/fs/cgroup/system.slice has io.latency' },
  };
  return o;
}

const io = (changes: Change[]) =>
  changes
    .filter((c) => /^IO|^io\.|subtree/.test(c.setting))
    .map((c) => `${c.backend} ${c.target} ${c.setting}: ${c.from} -> ${c.to}`);

describe('io through systemd for a unit, cgroupfs for a plain cgroup', () => {
  it('plans one entry per device and property; the root enables io for the cgroupfs side first', () => {
    const plan = planHost(topology, policy, host());
    expect(io(plan.changes)).toEqual([
      'systemd kafka.slice IODeviceLatencyTargetSec:  -> /dev/block/8:16 25ms',
      'systemd kafka.slice IODeviceWeight:  -> /dev/block/8:16 1000',
      'systemd kafka.slice IODeviceLatencyTargetSec:  -> /dev/block/259:0 2ms',
      'cgroupfs / cgroup.subtree_control: cpuset cpu memory -> cpu cpuset io memory',
      'cgroupfs /hadoop-yarn io.bfq.weight: null -> 8:16 25',
      'cgroupfs /hadoop-yarn io.max: null -> 8:16 wbps=10485760',
      'cgroupfs /hadoop-yarn io.max: null -> 259:0 wbps=10485760',
    ]);
    const note = plan.changes.find((c) => c.setting === 'IODeviceWeight')?.note;
    expect(note).toBe(
      "sdb: systemd writes io.bfq.weight (scaled: BFQ's weights run 1-1000) and enables io from the root down to kafka.slice",
    );
    expect(plan.notes).toContainEqual(
      expect.stringMatching(/^io kafka: nvme0n1 \(259:0\): io\.latency only/),
    );
  });

  it('entries systemd already holds, as systemctl show prints them, are not planned again', () => {
    const plan = planHost(
      topology,
      policy,
      host({
        IODeviceLatencyTargetUSec: '/dev/block/8:16 25ms\n/dev/block/259:0 2ms',
        IODeviceWeight: '/dev/block/8:16 1000',
      }),
    );
    expect(io(plan.changes).filter((c) => c.startsWith('systemd'))).toEqual([]);
  });

  it('an entry systemd holds that the unit’s io.latency lacks (written behind its back) is not in force: set again, with why', () => {
    const o = host({
      IODeviceLatencyTargetUSec: '/dev/block/8:16 25ms\n/dev/block/259:0 2ms',
      IODeviceWeight: '/dev/block/8:16 1000',
    });
    // What the kernel printed after `echo "8:16 target=max" > io.latency` (seen in the kafka-disks guest).
    o.cgroup.groups['/kafka.slice']!.values['io.latency'] = '259:0 target=2000';
    const again = planHost(topology, policy, o).changes.filter(
      (c) => c.backend === 'systemd' && c.setting.startsWith('IO'),
    );
    expect(io(again)).toEqual([
      'systemd kafka.slice IODeviceLatencyTargetSec: /dev/block/8:16 25ms -> /dev/block/8:16 25ms',
    ]);
    expect(again[0]!.note).toBe(
      'sdb: systemd holds IODeviceLatencyTargetSec=/dev/block/8:16 25ms but /kafka.slice/io.latency has no target for 8:16: not in force; set again',
    );
    // In force, as the kernel prints both targets: nothing.
    o.cgroup.groups['/kafka.slice']!.values['io.latency'] = '8:16 target=25000\n259:0 target=2000';
    expect(io(planHost(topology, policy, o).changes).filter((c) => c.startsWith('systemd'))).toEqual([]);
  });
});

describe("the root's controllers on a systemd host", () => {
  // The failure this guards: an apply right after a rollback had AllowedCPUs= held by systemd but not in
  // force ("cpuset.cpus does not exist"), because the rollback had taken cpuset off the root behind
  // systemd's back, and systemd, believing it still on, did not enable it again.
  const unitsOnly = parsePolicy(
    `apiVersion: isolate/v1
kind: HostPolicy
workloads:
  - { name: kafka, class: exclusive, cores: 2, match: { systemdUnit: kafka.service }, disks: { paths: [/data1/kafka-logs] } }
  - { name: yarn, class: batch, match: { systemdUnit: batch.slice } }
`,
    'p.yaml',
  );
  const unitsHost = (rootControllers: string[]) => {
    const o = host();
    o.cgroup.rootSubtreeControl = rootControllers;
    for (const p of ['/system.slice', '/system.slice/kafka.service', '/batch.slice'])
      o.cgroup.groups[p] = { ...o.cgroup.groups['/kafka.slice']! };
    o.systemd!.units = Object.fromEntries(
      ['kafka.service', 'system.slice', 'batch.slice'].map((u) => [
        u,
        { Id: u, LoadState: 'loaded', AllowedCPUs: '' },
      ]),
    );
    return o;
  };

  it('are systemd’s when every workload is a unit: no cgroupfs write of the root, whatever it enables now', () => {
    for (const root of [['memory', 'pids'], []]) {
      const plan = planHost(topology, unitsOnly, unitsHost(root));
      expect(plan.changes.filter((c) => c.backend === 'cgroupfs' && c.target === '/')).toEqual([]);
      expect(plan.changes.map((c) => `${c.target} ${c.setting}`)).toEqual(
        expect.arrayContaining(['kafka.service AllowedCPUs', 'batch.slice AllowedCPUs']),
      );
    }
  });

  it('are isolate’s for a cgroup outside any unit, and only the controllers that cgroup needs', () => {
    const plan = planHost(topology, policy, host());
    expect(
      plan.changes.filter((c) => c.target === '/').map((c) => `${c.setting}: ${c.from} -> ${c.to}`),
    ).toEqual(['cgroup.subtree_control: cpuset cpu memory -> cpu cpuset io memory']);
  });
});
