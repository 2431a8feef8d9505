// Node choice and core fill order, called in-process with a table of cases (as kubelet's
// cpu_assignment_test.go does for its packing): real sysfs trees from test/fixtures/sysfs and
// synthetic shapes. The CLI tests only check that `isolate plan` shows what these rules decide.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ObservedState } from '../../src/model/observed.js';
import type { Topology } from '../../src/model/topology.js';
import { allocate } from '../../src/planner/allocate.js';
import { parsePolicy } from '../../src/policy/load.js';
import { readTopology } from '../../src/topology/read.js';
import { freshHost } from '../support/observed.js';
import { type SynthSpec, synthTopology } from '../support/synthetic.js';

const tree = (name: string) => readTopology(join(import.meta.dirname, '../fixtures/sysfs', name));

const policy = (body: string) =>
  parsePolicy(`apiVersion: isolate/v1\nkind: HostPolicy\n${body}`, 'table.yaml');

const KAFKA = (reserved: number, cores: number | string, extra = '') => `reserved: { cores: ${reserved} }
workloads:
  - { name: kafka, class: exclusive, cores: ${cores}, match: { cgroup: /kafka.slice }${extra} }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
`;

/** A host where the Kafka cgroup already has these CPUs (a previous apply). */
function holding(cpus: string): ObservedState {
  const o = freshHost(['kafka.slice', 'hadoop-yarn']);
  o.cgroup.groups['/kafka.slice']!.values['cpuset.cpus'] = cpus;
  return o;
}

interface Case {
  name: string;
  topology: () => Topology;
  body: string;
  observed?: ObservedState;
  /** Expected allocation of the workload `kafka` (or `a`/`b`). */
  want: Record<string, { cpus?: string; nodes?: number[]; mems?: number[] }>;
  reserved?: string;
  warning?: RegExp;
}

/** One package split into two nodes of four SMT2 cores, siblings N and N+8 (sub-NUMA clustering). */
const ONE_PACKAGE_TWO_NODES: SynthSpec = {
  packages: 1,
  nodesPerPackage: 2,
  coresPerNode: 4,
  threads: [2],
  siblings: 'split',
  l3PerNode: 1,
};

const CASES: Case[] = [
  {
    name: 'near: the NIC-local node (two sockets, SMT2)',
    topology: () => tree('qemu-2s-smt2'),
    body: KAFKA(1, 1, ', near: [nic:eth0]'),
    want: { kafka: { cpus: '6-7', nodes: [1], mems: [1] }, flink: { cpus: '0-5', mems: [0, 1] } },
    reserved: '0-1,4-5',
  },
  {
    name: 'equal free cores on both nodes: ties broken by the lowest node id',
    topology: () => tree('qemu-2s-smt2'),
    body: KAFKA(1, 1),
    want: { kafka: { cpus: '2-3', nodes: [0] } },
  },
  {
    name: 'keep the current node while it is valid, although a tie would pick node 0',
    topology: () => tree('qemu-2s-smt2'),
    body: KAFKA(1, 1),
    observed: holding('6-7'),
    want: { kafka: { cpus: '6-7', nodes: [1] } },
  },
  {
    name: 'a cpuset that is no CPU list is unknown, not empty: nothing of it is kept, and it is said',
    topology: () => tree('qemu-2s-smt2'),
    body: KAFKA(1, 1),
    observed: holding('6-7,x'),
    want: { kafka: { cpus: '2-3', nodes: [0] } },
    warning:
      /\/kafka\.slice cpuset\.cpus reads "6-7,x", which is no CPU list .*; its current cores are unknown, so none of them is kept/,
  },
  {
    name: 'growing keeps the cores it has and adds beside them',
    topology: () => tree('qemu-2s-smt2'),
    body: KAFKA(0, 2),
    observed: holding('6-7'),
    want: { kafka: { cpus: '4-7', nodes: [1] } },
  },
  {
    name: 'numa: spread may cross nodes when asked explicitly',
    topology: () => tree('qemu-2s-smt2'),
    body: KAFKA(1, 2, ', numa: spread'),
    want: { kafka: { cpus: '2-3,6-7', nodes: [0, 1] } },
  },
  {
    name: 'a memory-less node is used last; its mems come from the nearest memory node',
    topology: () => tree('qemu-memoryless-node'),
    body: `reserved: { cores: 0 }
workloads:
  - { name: a, class: exclusive, cores: 2, match: { cgroup: /a.slice } }
  - { name: b, class: exclusive, cores: 1, match: { cgroup: /b.slice } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
`,
    want: { a: { nodes: [0] }, b: { nodes: [1], mems: [0] } },
    warning: /node 1 has CPUs but no memory/,
  },
  {
    name: 'near a device on a memory-less node: near wins, memory from the nearest memory node',
    topology: () =>
      synthTopology({
        packages: 1,
        nodesPerPackage: 2,
        coresPerNode: 4,
        threads: [2],
        siblings: 'adjacent',
        l3PerNode: 1,
        memoryless: [1],
      }),
    body: KAFKA(1, 2, ', near: [nic:eth0]'),
    want: { kafka: { cpus: '8-11', nodes: [1], mems: [0] } },
    warning: /node 1 has CPUs but no memory/,
  },
  {
    name: 'offline siblings: a core gives only its online threads',
    topology: () => tree('qemu-offline-cpus'),
    body: KAFKA(0, 2),
    // Node 1 has core 4 (cpu5 offline) and core 6 (cpus 6-7); node 0 lost a whole core.
    want: { kafka: { cpus: '4,6-7', nodes: [1] } },
  },
  {
    name: 'siblings N and N+8 (Intel numbering) stay together',
    topology: () => tree('intel-2s-ht-split'),
    body: KAFKA(1, 2),
    want: { kafka: { cpus: '1-2,9-10' } },
    reserved: '0,4,8,12',
  },
  {
    name: 'N/N+half siblings: whole cores on the node with most free cores (node 0 holds the reserved one)',
    topology: () => synthTopology(ONE_PACKAGE_TWO_NODES),
    body: KAFKA(1, 3),
    want: { kafka: { cpus: '4-6,12-14', nodes: [1] } },
    reserved: '0,8',
  },
  {
    name: 'reserved per node: each node of a package keeps its own lowest core (sub-NUMA clustering)',
    topology: () => synthTopology(ONE_PACKAGE_TWO_NODES),
    body: KAFKA(1, 3).replace('reserved: { cores: 1 }', 'reserved: { cores: 1, per: node }'),
    // Per package this host reserves 0,8 only (the case above); per node, node 1 keeps core 4 (4,12)
    // and Kafka's 3 cores are the rest of node 0, which now has as many free cores as node 1.
    want: { kafka: { cpus: '1-3,9-11', nodes: [0] } },
    reserved: '0,4,8,12',
  },
];

describe('allocate: node choice and fill order', () => {
  it.each(CASES)('$name', (c) => {
    const warnings: string[] = [];
    const a = allocate(c.topology(), policy(c.body), c.observed, warnings);
    for (const [name, want] of Object.entries(c.want)) {
      const got = a.workloads.find((w) => w.name === name)!;
      expect(got, name).toBeDefined();
      if (want.cpus) expect(got.cpus.toString(), `${name} cpus`).toBe(want.cpus);
      if (want.nodes) expect(got.nodes, `${name} nodes`).toEqual(want.nodes);
      if (want.mems) expect(got.mems, `${name} mems`).toEqual(want.mems);
    }
    if (c.reserved) expect(a.reserved.toString()).toBe(c.reserved);
    if (c.warning) expect(warnings.join('\n')).toMatch(c.warning);
  });

  it('hybrid parts: performance cores before efficiency cores', () => {
    const t = tree('intel-hybrid');
    const a = allocate(t, policy(KAFKA(1, 2)), undefined, []);
    const kafka = a.workloads.find((w) => w.name === 'kafka')!;
    expect(kafka.cores).toHaveLength(2);
    for (const id of kafka.cores) expect(t.cores.find((c) => c.id === id)!.coreType).toBe('performance');
  });

  it('several L3 groups per node: one group is filled before the next', () => {
    const t = tree('amd-epyc-l3');
    const kafka = allocate(t, policy(KAFKA(1, 4)), undefined, []).workloads.find((w) => w.name === 'kafka')!;
    expect(new Set(kafka.cores.map((id) => t.cores.find((c) => c.id === id)!.l3)).size).toBe(1);
    expect(kafka.cpus.size).toBe(8);
  });

  it('refuses reserving every core of a node, per node, naming the largest count that fits', () => {
    const t = synthTopology(ONE_PACKAGE_TWO_NODES);
    const body = KAFKA(4, 1).replace('reserved: { cores: 4 }', 'reserved: { cores: 4, per: node }');
    expect(() => allocate(t, policy(body), undefined, [])).toThrow(
      /reserves 4 cores per node, but the largest node has 4 cores.*set reserved\.cores to at most 3/,
    );
    // Per package the same count leaves four cores free.
    expect(() => allocate(t, policy(KAFKA(4, 1)), undefined, [])).not.toThrow();
    // A real socket split into four one-core nodes has no core to spare per node.
    const snc = KAFKA(1, 1).replace('reserved: { cores: 1 }', 'reserved: { cores: 1, per: node }');
    expect(() => allocate(tree('qemu-1s-4nodes'), policy(snc), undefined, [])).toThrow(
      /largest node has 1 core.*set reserved\.cores to 0 \(a single-core node has no core to spare\)/,
    );
  });

  it('refuses a request no node can hold, naming the largest that fits', () => {
    expect(() => allocate(tree('qemu-2s-smt2'), policy(KAFKA(1, 2)), undefined, [])).toThrow(
      /asks for 2 whole cores on one NUMA node, but the largest request that fits is 1/,
    );
  });
});

describe('allocate: the workload’s disks steer its node like near: does', () => {
  /** A host whose kafka data directories are on these whole disks, each on its NUMA node (or -1). */
  function withDisks(disks: [string, number | null][]): ObservedState {
    const o = freshHost(['kafka.slice', 'hadoop-yarn']);
    o.disks = [
      {
        workload: 'kafka',
        source: 'paths',
        dirs: [],
        findings: [],
        disks: disks.map(([name, node]) => ({
          name,
          dev: '259:0',
          node,
          scheduler: 'none',
          schedulers: ['none'],
          rotational: false,
        })),
      },
    ];
    return o;
  }
  const pick = (extra: string, o: ObservedState) =>
    allocate(tree('qemu-2s-smt2'), policy(KAFKA(1, 1, extra)), o, []).workloads.find(
      (w) => w.name === 'kafka',
    )!;

  it('goes to the node of its disks, and says so', () => {
    // Without disks the tie goes to node 0 (lowest id, above).
    const a = pick('', withDisks([['nvme0n1', 1]]));
    expect(a.nodes).toEqual([1]);
    expect(a.reason).toBe('node 1: its disks nvme0n1 (disks:) are on this node');
  });

  it('near: outranks the disks; a disk on an unknown node (-1) counts nowhere', () => {
    expect(pick(', near: [nic:eth0]', withDisks([['nvme0n1', 0]])).nodes).toEqual([1]);
    expect(pick('', withDisks([['nvme0n1', null]])).nodes).toEqual([0]);
  });

  it('most disks win: two on node 0 against one on node 1', () => {
    expect(
      pick(
        '',
        withDisks([
          ['sda', 0],
          ['sdb', 0],
          ['nvme0n1', 1],
        ]),
      ).nodes,
    ).toEqual([0]);
    expect(
      pick(
        '',
        withDisks([
          ['sda', 1],
          ['sdb', 1],
          ['nvme0n1', 0],
        ]),
      ).nodes,
    ).toEqual([1]);
  });
});
