// memory.low from a write rate and a catch-up window: parsed (both rate bases, durations), refused
// with the field and the fix, in the loader and the schema alike; planned as rate × window capped
// by the memory of the workload's nodes, with the arithmetic in the plan; the plain size unchanged.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { planHost } from '../../src/planner/plan.js';
import { parsePolicy } from '../../src/policy/load.js';
import { parseRate, parseWindow } from '../../src/policy/rate.js';
import { freshHost } from '../support/observed.js';
import { policyRefusal } from '../support/policies.js';
import { synthTopology, TWO_NODES_SMT2_SPLIT } from '../support/synthetic.js';

const schemaDir = join(import.meta.dirname, '../../schema');
const ajv = new Ajv2020({ allErrors: true, strict: false });
for (const f of ['policy.schema.json', 'raid-policy.schema.json'])
  ajv.addSchema(JSON.parse(readFileSync(join(schemaDir, f), 'utf8')));
const validate = ajv.getSchema('https://isolate.dev/schema/policy.schema.json')!;

const policy = (low: string) => `apiVersion: isolate/v1
kind: HostPolicy
workloads:
  - name: kafka
    class: exclusive
    cores: 2
    match: { cgroup: /kafka.slice }
    memory: { low: ${low} }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
`;

const GiB = 1024 ** 3;

describe('parsing', () => {
  it.each([
    ['170MB/s', 170_000_000],
    ['162MiB/s', 162 * 2 ** 20],
    ['162M/s', 162 * 2 ** 20],
    ['1.5GB/s', 1_500_000_000],
    ['500kB/s', 500_000],
    ['4096B/s', 4096],
    [178257920, 178257920],
  ])('rate %s is %d bytes a second', (text, bytes) => {
    expect(parseRate(text)).toBe(bytes);
  });

  it.each(['170MB', '170 MB/min', 'fast', '-1MB/s', 0, 1.5, '0MB/s'])('refuses the rate %s', (text) => {
    expect(parseRate(text)).toMatch(/expected bytes a second|at least 1 byte/);
  });

  it.each([
    ['10m', 600],
    ['10min', 600],
    ['90s', 90],
    ['1.5h', 5400],
    [600, 600],
  ])('window %s is %d s', (text, s) => {
    expect(parseWindow(text)).toBe(s);
  });

  it.each(['10', '10d', '0m', '25h', -5])('refuses the window %s', (text) => {
    expect(parseWindow(text)).toMatch(/expected a duration|above 0 and at most 24h/);
  });

  it('takes { writeRate, window } for low, in the loader and the schema', () => {
    const text = policy('{ writeRate: 170MB/s, window: 10m }');
    expect(validate(parse(text)), JSON.stringify(validate.errors)).toBe(true);
    expect(parsePolicy(text, 'p.yaml').workloads[0]!.memory.low).toEqual({
      writeRate: 170_000_000,
      windowSeconds: 600,
      written: { writeRate: '170MB/s', window: '10m' },
    });
  });

  it.each([
    ['{ writeRate: 170MB/s }', 'memory.low.window', /missing: how many minutes of writes/],
    ['{ window: 10m }', 'memory.low.writeRate', /missing: the rate the workload writes at/],
    ['{ writeRate: 170MB/s, window: 10m, burst: 2 }', 'memory.low', /unknown field "burst"/],
    ['{ writeRate: fast, window: 10m }', 'memory.low.writeRate', /expected bytes a second/],
    ['{ writeRate: 170MB/s, window: 10d }', 'memory.low.window', /expected a duration such as 10m/],
  ])('refuses %s naming the field, in the loader and the schema', (low, where, why) => {
    const text = policy(low);
    const msg = policyRefusal(text);
    expect(msg).toContain(where);
    expect(msg).toMatch(why);
    expect(msg.split('\n').filter(Boolean)).toHaveLength(1);
    expect(validate(parse(text))).toBe(false);
  });

  it('a write rate is for low only', () => {
    const text = policy('32G').replace('{ low: 32G }', '{ min: { writeRate: 170MB/s, window: 10m } }');
    expect(policyRefusal(text)).toMatch(/memory\.min: expected bytes/);
    expect(validate(parse(text))).toBe(false);
  });
});

describe('planning', () => {
  // 128 GiB a node, as a two-socket broker has.
  const topology = synthTopology({ ...TWO_NODES_SMT2_SPLIT, nodeMemoryBytes: 128 * GiB });
  const plan = (low: string) =>
    planHost(topology, parsePolicy(policy(low), 'p.yaml'), freshHost(['kafka.slice', 'hadoop-yarn']));

  it("writeRate × window, page-aligned, and the plan shows the operators' arithmetic", () => {
    const p = plan('{ writeRate: 170MB/s, window: 10m }');
    const kafka = p.allocation.workloads.find((w) => w.name === 'kafka')!;
    expect(kafka.memory.low).toBe(Math.floor(102_000_000_000 / 4096) * 4096);
    const change = p.changes.find((c) => c.setting === 'memory.low' && c.target === '/kafka.slice');
    expect(change?.to).toBe(String(kafka.memory.low));
    expect(p.notes).toContain(
      'memory.low kafka: 170MB/s × 10m = 170.0 MB/s (162.1M/s) × 10.0 min = 95.0G (102000000000 bytes) of page cache kept from reclaim (node 0 has 128G): a consumer up to 10.0 min behind reads from memory',
    );
    expect(p.warnings.filter((w) => w.startsWith('memory.low'))).toEqual([]);
  });

  it('more than 75 % of the workload’s nodes is refused, naming the share and the fixes; a size is the operator’s word', () => {
    // 170 MB/s × 30 min = 285 GB against node 0's 128 GiB (the planner once capped it at all of it).
    expect(() => plan('{ writeRate: 170MB/s, window: 30m }')).toThrow(
      /^p\.yaml:\d+:\d+: workloads\[0\]\.memory\.low: 170MB\/s × 30m is 285\.0G, 223 % of the 128G of node 0; a protection derived from a write rate is kept to 75 % of its nodes' memory \(96G here: .*\): lower window or writeRate, give kafka more nodes \(memory\.mems\), or write memory\.low as a size if you mean that much$/,
    );
    // At the edge: 606 s of 170 MB/s is 74.96 % of 128 GiB (planned), 607 s is 75.08 % (refused).
    expect(() => plan('{ writeRate: 170MB/s, window: 606s }')).not.toThrow();
    expect(() => plan('{ writeRate: 170MB/s, window: 607s }')).toThrow(
      /is 96\.1G, 76 % of the 128G of node 0/,
    );
    // The same amount written as a size: planned as written.
    expect(plan('100G').allocation.workloads.find((w) => w.name === 'kafka')!.memory.low).toBe(100 * GiB);
  });

  it('the plain size form is unchanged and has no note', () => {
    const p = plan('32G');
    expect(p.allocation.workloads.find((w) => w.name === 'kafka')!.memory.low).toBe(32 * GiB);
    expect(p.notes.filter((n) => n.startsWith('memory.low'))).toEqual([]);
  });
});
