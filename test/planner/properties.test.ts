import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/model/errors.js';
import { parsePolicy } from '../../src/policy/load.js';
import { planHost } from '../../src/planner/plan.js';
import type { Plan } from '../../src/model/plan.js';
import { CpuSet } from '../../src/model/cpuset.js';
import type { Topology } from '../../src/model/topology.js';
import { afterChanges, freshHost } from '../support/observed.js';
import { type SynthSpec, synthTopology } from '../support/synthetic.js';
import { writeSysfs } from '../support/sysfs.js';
import { readTopology } from '../../src/topology/read.js';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const specArb: fc.Arbitrary<SynthSpec> = fc
  .record({
    packages: fc.integer({ min: 1, max: 2 }),
    nodesPerPackage: fc.integer({ min: 1, max: 4 }),
    coresPerNode: fc.integer({ min: 1, max: 10 }),
    threads: fc.constantFrom([1], [2], [4], [2, 1], [2, 2, 1]),
    split: fc.boolean(),
    l3PerNode: fc.integer({ min: 1, max: 3 }),
    memorylessMask: fc.integer({ min: 0, max: 255 }),
    offlineSeed: fc.array(fc.integer({ min: 1, max: 400 }), { maxLength: 4 }),
  })
  .map((r) => {
    const nodes = r.packages * r.nodesPerPackage;
    // Keep at least node 0 with memory.
    const memoryless = Array.from({ length: nodes }, (_, i) => i).filter(
      (i) => i > 0 && (r.memorylessMask >> i) & 1,
    );
    const uniform = r.threads.every((t) => t === r.threads[0]);
    return {
      packages: r.packages,
      nodesPerPackage: r.nodesPerPackage,
      coresPerNode: r.coresPerNode,
      threads: r.threads,
      siblings: r.split && uniform ? 'split' : 'adjacent',
      l3PerNode: Math.min(r.l3PerNode, r.coresPerNode),
      memoryless,
      offline: r.offlineSeed,
    } satisfies SynthSpec;
  });

interface Request {
  reservedCores: number;
  exclusive: { cores: number | string; match: 'cgroup' | 'process' }[];
  strict: boolean;
}

const requestArb: fc.Arbitrary<Request> = fc.record({
  reservedCores: fc.integer({ min: 0, max: 1 }),
  exclusive: fc.array(
    fc.record({
      cores: fc.oneof(fc.integer({ min: 1, max: 12 }), fc.constantFrom('25%', '50%', '100%')),
      match: fc.constantFrom('cgroup' as const, 'process' as const),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  strict: fc.boolean(),
});

function policyYaml(req: Request): string {
  const lines = [
    'apiVersion: isolate/v1',
    'kind: HostPolicy',
    `reserved: { cores: ${req.reservedCores} }`,
    `strict: ${req.strict}`,
    'workloads:',
  ];
  req.exclusive.forEach((e, i) => {
    lines.push(
      `  - name: kafka${i}`,
      '    class: exclusive',
      `    cores: ${typeof e.cores === 'number' ? e.cores : `"${e.cores}"`}`,
    );
    lines.push(
      e.match === 'cgroup'
        ? `    match: { cgroup: /kafka${i}.slice }`
        : `    match: { process: { cmdline: 'broker${i}' } }`,
    );
  });
  lines.push('  - name: flink', '    class: batch', '    match: { cgroup: /hadoop-yarn }');
  return `${lines.join('\n')}\n`;
}

/** Rules 1, 2, 5, 6 of the planner, checked against the topology, not against the planner's own notes. */
function assertInvariants(topology: Topology, plan: Plan): void {
  const reserved = plan.allocation.reserved;
  const coreOf = new Map(topology.cpus.filter((c) => c.core !== null).map((c) => [c.id, c.core!]));
  const coreCpus = new Map(topology.cores.map((c) => [c.id, c.cpus]));
  // Rule 5: reserved CPUs are whole cores.
  for (const id of reserved) expect(coreCpus.get(coreOf.get(id)!)!.isSubsetOf(reserved)).toBe(true);
  let exclusiveUnion = CpuSet.EMPTY;
  for (const a of plan.allocation.workloads.filter((w) => w.class === 'exclusive')) {
    expect(a.cpus.isEmpty).toBe(false);
    // Rule 1: whole physical cores, every online sibling.
    for (const id of a.cpus) expect(coreCpus.get(coreOf.get(id)!)!.isSubsetOf(a.cpus)).toBe(true);
    // Rule 2: one NUMA node (numa: single is the default).
    const nodes = new Set([...a.cpus].map((id) => topology.cpus.find((c) => c.id === id)!.node));
    expect(nodes.size).toBe(1);
    // Rule 5: never on reserved cores; no two exclusive workloads share a CPU.
    expect(a.cpus.overlaps(reserved)).toBe(false);
    expect(a.cpus.overlaps(exclusiveUnion)).toBe(false);
    exclusiveUnion = exclusiveUnion.union(a.cpus);
    // mems: memory nodes only.
    for (const m of a.mems) expect(topology.nodes.find((n) => n.id === m)!.hasMemory).toBe(true);
  }
  // Rule 6: batch gets every online CPU outside the exclusive ones, and no other.
  for (const b of plan.allocation.workloads.filter((w) => w.class === 'batch')) {
    expect(b.cpus.equals(topology.online.minus(exclusiveUnion))).toBe(true);
    expect(b.mems).toEqual(topology.nodes.filter((n) => n.hasMemory).map((n) => n.id));
  }
}

describe('planner properties over generated topologies', () => {
  it('keeps rules 1, 2, 5, 6 and re-planning after apply gives zero changes', () => {
    let planned = 0;
    let refused = 0;
    fc.assert(
      fc.property(specArb, requestArb, (spec, req) => {
        const topology = synthTopology(spec);
        const policy = parsePolicy(policyYaml(req), 'gen.yaml');
        const observed = freshHost(['init.scope', 'system.slice', 'user.slice']);
        let plan: Plan;
        try {
          plan = planHost(topology, policy, observed);
        } catch (err) {
          // Refusals must be user errors naming the largest request that fits, never a crash.
          expect(err).toBeInstanceOf(UserError);
          expect((err as Error).message).toMatch(
            /largest request that fits is [1-9]\d*|no online CPU is left|no whole core is free|reserved\.cores: reserves/,
          );
          refused++;
          return;
        }
        planned++;
        assertInvariants(topology, plan);
        const after = afterChanges(observed, plan.changes);
        const again = planHost(topology, policy, after);
        expect(again.changes).toEqual([]);
        expect(again.allocation.workloads.map((w) => w.cpus.toString())).toEqual(
          plan.allocation.workloads.map((w) => w.cpus.toString()),
        );
      }),
      { numRuns: 300, seed: 20261129 },
    );
    // The generators must exercise both outcomes, or the property proves little.
    expect(planned).toBeGreaterThan(50);
    expect(refused).toBeGreaterThan(5);
  });

  it('the "largest request that fits" it names does fit', () => {
    fc.assert(
      fc.property(specArb, fc.integer({ min: 1, max: 40 }), (spec, cores) => {
        const topology = synthTopology(spec);
        const yaml = (n: number) =>
          policyYaml({ reservedCores: 1, strict: false, exclusive: [{ cores: n, match: 'cgroup' }] });
        try {
          planHost(topology, parsePolicy(yaml(cores), 'gen.yaml'), freshHost());
        } catch (err) {
          const m = /largest request that fits is (\d+)/.exec((err as Error).message);
          // Nothing fits at all: the refusal names what took every core, never "lower cores to 0".
          if (/no whole core is free|reserved\.cores: reserves/.test((err as Error).message)) return;
          if (!m) throw err;
          const largest = Number(m[1]);
          expect(largest).toBeLessThan(cores);
          if (largest > 0) {
            const plan = planHost(topology, parsePolicy(yaml(largest), 'gen.yaml'), freshHost());
            expect(plan.allocation.workloads[0]!.cores).toHaveLength(largest);
          }
        }
      }),
      { numRuns: 200, seed: 7 },
    );
  });

  it('growing an exclusive workload adds cores and moves none', () => {
    fc.assert(
      fc.property(
        specArb,
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 4 }),
        (spec, start, grow) => {
          const topology = synthTopology(spec);
          const yaml = (n: number) =>
            policyYaml({ reservedCores: 0, strict: false, exclusive: [{ cores: n, match: 'cgroup' }] });
          let first: Plan;
          try {
            first = planHost(topology, parsePolicy(yaml(start), 'gen.yaml'), freshHost());
          } catch {
            return;
          }
          const node = first.allocation.workloads[0]!.nodes[0]!;
          const freeOnNode = topology.cores.filter((c) => c.node === node).length;
          fc.pre(start + grow <= freeOnNode && start + grow < topology.cores.length);
          const after = afterChanges(freshHost(), first.changes);
          const second = planHost(topology, parsePolicy(yaml(start + grow), 'gen.yaml'), after);
          const before = first.allocation.workloads[0]!;
          const now = second.allocation.workloads[0]!;
          expect(before.cpus.isSubsetOf(now.cpus)).toBe(true);
          expect(now.cores.length - before.cores.length).toBe(grow);
          expect(now.nodes).toEqual(before.nodes);
        },
      ),
      { numRuns: 200, seed: 42 },
    );
  });
});

/** Exclusive sets must be disjoint and each on one NUMA node, judged by each CPU's own node. */
function assertDisjointOneNode(topology: Topology, plan: Plan): void {
  let union = CpuSet.EMPTY;
  for (const a of plan.allocation.workloads.filter((w) => w.class === 'exclusive')) {
    expect(a.cpus.overlaps(union), `${a.name} ${a.cpus} overlaps ${union}`).toBe(false);
    union = union.union(a.cpus);
    const nodes = new Set([...a.cpus].map((id) => topology.cpus.find((c) => c.id === id)?.node));
    expect(nodes.size, `${a.name} ${a.cpus} spans nodes ${[...nodes]}`).toBe(1);
  }
}

/**
 * One CPU's sibling list names a CPU of another core, and may leave out one of its true siblings
 * (`pick*` choose which, deterministically).
 */
const brokenArb = fc.record({
  spec: specArb.filter((s) => s.packages * s.nodesPerPackage * s.coresPerNode >= 2),
  pickCore: fc.nat(),
  pickCpu: fc.nat(),
  pickOther: fc.nat(),
  drop: fc.boolean(),
  req: requestArb,
});

function breakOne(
  topology: Topology,
  {
    pickCore,
    pickCpu,
    pickOther,
    drop,
  }: { pickCore: number; pickCpu: number; pickOther: number; drop: boolean },
) {
  const cores = topology.cores;
  const a = cores[pickCore % cores.length]!;
  const others = cores.filter((c) => c.id !== a.id);
  const b = others[pickOther % others.length]!;
  const x = b.cpus.toArray()[pickOther % b.cpus.size]!;
  const own = a.cpus.toArray();
  const cpu = own[pickCpu % own.length]!;
  const dropped = drop ? own.find((id) => id !== cpu) : undefined;
  const lying = CpuSet.of([...own.filter((id) => id !== dropped), x]);
  return { cpu, lying };
}

describe('planner with one inconsistent sibling relation', () => {
  it('refuses, or gives disjoint exclusive sets on one node each (Topology handed to the planner)', () => {
    fc.assert(
      fc.property(brokenArb, ({ spec, req, ...broken }) => {
        const topology = synthTopology(spec);
        const { cpu, lying } = breakOne(topology, broken);
        // As a trusting reader would have built it: the liar's core grows by the named CPU.
        const core = topology.cores.find((c) => c.cpus.has(cpu))!;
        core.cpus = lying;
        for (const c of topology.cpus) if (core.cpus.has(c.id) && c.id === cpu) c.siblings = lying;
        try {
          const plan = planHost(topology, parsePolicy(policyYaml(req), 'gen.yaml'), freshHost());
          assertDisjointOneNode(topology, plan);
        } catch (err) {
          expect(err).toBeInstanceOf(UserError);
        }
      }),
      { numRuns: 200, seed: 9 },
    );
  });

  it('refuses, or gives disjoint exclusive sets on one node each (sysfs tree read by readTopology)', () => {
    // Small trees: each run writes a whole sysfs tree to disk.
    const small = brokenArb.filter(
      ({ spec }) => spec.packages * spec.nodesPerPackage <= 2 && spec.coresPerNode <= 4,
    );
    fc.assert(
      fc.property(small, ({ spec, req, ...broken }) => {
        const truth = synthTopology(spec);
        const { cpu, lying } = breakOne(truth, broken);
        const root = writeSysfs(truth);
        try {
          for (const f of ['core_cpus_list', 'thread_siblings_list']) {
            writeFileSync(join(root, `sys/devices/system/cpu/cpu${cpu}/topology/${f}`), `${lying}\n`);
          }
          let plan: Plan;
          try {
            // No reserved core: the liar's core and the core it names are both up for grabs.
            const yaml = policyYaml({ ...req, reservedCores: 0 });
            plan = planHost(readTopology(root), parsePolicy(yaml, 'gen.yaml'), freshHost());
          } catch (err) {
            expect(err).toBeInstanceOf(UserError);
            return;
          }
          // Judged against the true topology: the liar must not have put one CPU in two sets.
          assertDisjointOneNode(truth, plan);
        } finally {
          rmSync(root, { recursive: true, force: true });
        }
      }),
      { numRuns: 25, seed: 11 },
    );
  });
});
