// cgroup v1 and hybrid hosts on fixture trees: layout detection (and refused contradictions), the
// plan isolate makes there, the refusals of fields v1 cannot express, and the executor writing and
// rolling back a fake v1 tree. The kernel's own v1 rules are proven in test/vm/cgroupv1.test.ts.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { detectCgroupLayout } from '../../src/cgroup/layout.js';
import { parseV1ProcCgroup } from '../../src/cgroupv1/observe.js';
import { UserError } from '../../src/model/errors.js';
import type { Change } from '../../src/model/plan.js';
import { apply, rollback } from '../../src/ops/apply.js';
import { buildPlan, plan } from '../../src/ops/plan.js';
import { readSavedPlan } from '../../src/ops/saved-plan.js';
import { weightToShares } from '../../src/planner/v1.js';
import { makeFakeV1Host, mountinfoFor } from '../support/fake-v1-host.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});
const host = (...a: Parameters<typeof makeFakeV1Host>) => {
  const r = makeFakeV1Host(...a);
  roots.push(r);
  return r;
};
const policyIn = (root: string, text: string) => {
  const f = join(root, 'policy.yaml');
  writeFileSync(f, text);
  return f;
};

const POLICY = `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
strict: false
workloads:
  - name: kafka
    class: exclusive
    cores: 1
    match: { process: { cmdline: 'kafka\\.Kafka' } }
  - name: flink
    class: batch
    match: { cgroup: /hadoop-yarn }
    memory: { high: 1G, max: 2G }
    cpu: { weight: 50 }
`;
const PROCS = {
  100: { cmdline: 'java kafka.Kafka server.properties', systemd: '/system.slice/kafka.service' },
  200: { cmdline: 'java NodeManager', cpu: '/hadoop-yarn', memory: '/hadoop-yarn' },
  201: {
    cmdline: 'java flink.TaskManager',
    cpu: '/hadoop-yarn/container_1',
    memory: '/hadoop-yarn/container_1',
  },
  300: { cmdline: 'sshd' },
};
const base = {
  cpus: '0-7',
  mems: '0-1',
  cpuGroups: ['hadoop-yarn', 'hadoop-yarn/container_1'],
  memoryGroups: ['hadoop-yarn'],
};
const fmt = (c: Change) =>
  `${c.backend === 'cgroupfs' && c.hierarchy ? `${c.hierarchy}:` : ''}${c.target} ${c.setting}=${c.to}`;

describe('layout detection', () => {
  it('tells legacy, hybrid and unified apart from the mount table and finds the cpuset hierarchy', async () => {
    const legacy = await detectCgroupLayout(host('qemu-2s-smt2', { layout: 'legacy', ...base }));
    expect(legacy).toMatchObject({ layout: 'legacy', cpuset: 'v1', unified: null, source: 'mountinfo' });
    expect(legacy.v1).toMatchObject({
      cpuset: 'cpuset',
      cpu: 'cpu,cpuacct',
      cpuacct: 'cpu,cpuacct',
      memory: 'memory',
    });
    const hybrid = await detectCgroupLayout(host('qemu-2s-smt2', { layout: 'hybrid', ...base }));
    expect(hybrid).toMatchObject({ layout: 'hybrid', cpuset: 'v1', unified: 'unified' });
  });

  it('judges a tree without a mount table from its directories', async () => {
    const l = await detectCgroupLayout(host('qemu-2s-smt2', { layout: 'hybrid', ...base, mountinfo: null }));
    expect(l).toMatchObject({ layout: 'hybrid', cpuset: 'v1', source: 'directories' });
  });

  it.each([
    [
      'cgroup2 listed at /sys/fs/cgroup without cgroup.controllers',
      (m: string) =>
        m.replace(' /sys/fs/cgroup ro', ' /sys/fs/cgroup ro').replace('- tmpfs tmpfs', '- cgroup2 cgroup2'),
      /lists cgroup2 at \/sys\/fs\/cgroup but .*cgroup.controllers does not exist/,
    ],
    [
      'a v1 hierarchy listed but missing',
      (m: string) => `${m}40 25 0:40 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n`,
      /lists a cgroup v1 hierarchy at \/sys\/fs\/cgroup\/pids but .* does not exist/,
    ],
  ])('refuses a contradiction: %s', async (_name, edit, pattern) => {
    const root = host('qemu-2s-smt2', { layout: 'legacy', ...base, mountinfo: edit(mountinfoFor('legacy')) });
    const err = await detectCgroupLayout(root).catch((e) => e);
    expect(err).toBeInstanceOf(UserError);
    expect(err.message).toMatch(pattern);
    expect(err.message).not.toContain('\n');
  });

  it('refuses cgroup.controllers at the mount when the mount table lists only v1', async () => {
    const root = host('qemu-2s-smt2', { layout: 'legacy', ...base });
    writeFileSync(join(root, 'sys/fs/cgroup/cgroup.controllers'), 'cpuset cpu\n');
    await expect(detectCgroupLayout(root)).rejects.toThrow(
      /cgroup.controllers exists but .*mountinfo lists no cgroup2 mount/,
    );
  });

  it('parses /proc/<pid>/cgroup of a hybrid host by controller', () => {
    const m = parseV1ProcCgroup(
      '4:memory:/a\n3:cpu,cpuacct:/hadoop-yarn/c1\n2:cpuset:/\n1:name=systemd:/s\n0::/s\n',
    );
    expect([m.get('cpu'), m.get('cpuacct'), m.get('cpuset'), m.get('name=systemd'), m.get('0')]).toEqual([
      '/hadoop-yarn/c1',
      '/hadoop-yarn/c1',
      '/',
      '/s',
      '/s',
    ]);
  });
});

describe('planning on a legacy host', () => {
  it('one cpuset per workload: memory_migrate, cpus and mems before tasks, cpu_exclusive after the CPUs, moves last', async () => {
    const root = host('qemu-2s-smt2', { layout: 'legacy', ...base, procs: PROCS });
    const { plan } = await buildPlan({ root, policyPath: policyIn(root, POLICY) });
    expect(plan.layout).toMatch(
      /^legacy \(cgroup v1\): cpuset at \/sys\/fs\/cgroup\/cpuset; isolate owns the v1 cpuset hierarchy/,
    );
    const kafka = plan.allocation.workloads.find((a) => a.name === 'kafka')!;
    expect(kafka.target).toBe('/isolate-kafka');
    const k = kafka.cpus.toString();
    expect(['2-3', '6-7']).toContain(k);
    const node = k === '2-3' ? '0' : '1';
    const lines = plan.changes.map(fmt);
    expect(lines).toEqual([
      'cpuset:/isolate-kafka mkdir=present',
      'cpuset:/isolate-flink mkdir=present',
      // v1 moves Kafka's pages to its node only with memory_migrate set (v2 always does).
      'cpuset:/isolate-kafka cpuset.memory_migrate=1',
      `cpuset:/isolate-kafka cpuset.mems=${node}`,
      'cpuset:/isolate-flink cpuset.mems=0-1',
      `cpuset:/isolate-kafka cpuset.cpus=${k}`,
      `cpuset:/isolate-flink cpuset.cpus=${k === '2-3' ? '0-1,4-7' : '0-5'}`,
      'cpuset:/isolate-kafka cpuset.cpu_exclusive=1',
      `memory:/hadoop-yarn memory.limit_in_bytes=${2 * 1024 ** 3}`,
      `memory:/hadoop-yarn memory.soft_limit_in_bytes=${1024 ** 3}`,
      `cpu,cpuacct:/hadoop-yarn cpu.shares=${weightToShares(50)}`,
      'cpuset:/isolate-kafka cgroup.procs=100',
      'cpuset:/isolate-flink cgroup.procs=200',
      'cpuset:/isolate-flink cgroup.procs=201',
    ]);
    expect(weightToShares(50)).toBe(512);
    // mem_exclusive is not set: batch shares Kafka's node (every node with memory), and says why.
    expect(plan.warnings.join('\n')).toMatch(
      /kafka: memory node\(s\) \d are shared .* cpuset.mem_exclusive is not set/,
    );
  });

  it('sets memsw with swap accounting, lowering the limit before it (memsw stays ≥ the limit)', async () => {
    const root = host('qemu-2s-smt2', { layout: 'legacy', ...base, swapAccounting: true });
    const { plan } = await buildPlan({ root, policyPath: policyIn(root, POLICY) });
    const mem = plan.changes.map(fmt).filter((l) => l.startsWith('memory:'));
    expect(mem).toEqual([
      `memory:/hadoop-yarn memory.limit_in_bytes=${2 * 1024 ** 3}`,
      `memory:/hadoop-yarn memory.memsw.limit_in_bytes=${2 * 1024 ** 3}`,
      `memory:/hadoop-yarn memory.soft_limit_in_bytes=${1024 ** 3}`,
    ]);
  });

  it("strict fences other cpusets bottom-up and moves the root cpuset's processes to housekeeping", async () => {
    const root = host('qemu-2s-smt2', {
      layout: 'hybrid',
      ...base,
      procs: PROCS,
      cpusets: { docker: { cpus: '0-7', mems: '0-1' }, 'docker/abc': { cpus: '2-7', mems: '0-1' } },
    });
    const { plan } = await buildPlan({
      root,
      policyPath: policyIn(root, POLICY.replace('strict: false', 'strict: true')),
    });
    const k = plan.allocation.workloads.find((a) => a.name === 'kafka')!.cpus;
    const lines = plan.changes.map(fmt);
    const at = (l: string) => lines.findIndex((x) => x.startsWith(l));
    expect(lines).toContain(`cpuset:/docker/abc cpuset.cpus=${CpuSetMinus('2-7', k.toString())}`);
    expect(lines).toContain(`cpuset:/docker cpuset.cpus=${CpuSetMinus('0-7', k.toString())}`);
    expect(at('cpuset:/docker/abc cpuset.cpus')).toBeLessThan(at('cpuset:/docker cpuset.cpus'));
    expect(at('cpuset:/docker cpuset.cpus')).toBeLessThan(at('cpuset:/isolate-kafka cpuset.cpus'));
    expect(lines).toContain('cpuset:/isolate-housekeeping mkdir=present');
    expect(lines).toContain('cpuset:/isolate-housekeeping cgroup.procs=300');
    expect(at('cpuset:/isolate-housekeeping cpuset.mems')).toBeLessThan(
      at('cpuset:/isolate-housekeeping cgroup.procs'),
    );
    expect(plan.layout).toMatch(/^hybrid/);
    // The broker is kafka's: nothing to warn about.
    expect(plan.warnings.filter((w) => /kafka\.Kafka|finds no process/.test(w))).toEqual([]);
  });

  it('an exclusive workload that matches nothing is a warning; under strict, so is the broker strict would move to housekeeping', async () => {
    const root = host('qemu-2s-smt2', { layout: 'hybrid', ...base, procs: PROCS });
    // A typo in the match: the real broker (pid 100) is in no workload.
    const typo = POLICY.replace("cmdline: 'kafka\\.Kafka'", "cmdline: 'kafka\\.Kafak'");
    expect(typo).not.toBe(POLICY);
    const loose = await buildPlan({ root, policyPath: policyIn(root, typo) });
    expect(loose.plan.warnings).toContainEqual(
      expect.stringMatching(
        /^kafka: its match finds no process on this host, so nothing is moved into \/isolate-kafka/,
      ),
    );
    expect(loose.plan.warnings.filter((w) => w.includes('kafka.Kafka'))).toEqual([]);
    const { plan } = await buildPlan({
      root,
      policyPath: policyIn(root, typo.replace('strict: false', 'strict: true')),
    });
    expect(plan.changes.map(fmt)).toContainEqual(
      expect.stringMatching(/^cpuset:\/isolate-housekeeping cgroup\.procs=100$/),
    );
    expect(plan.warnings).toContainEqual(
      "process 100 runs kafka.Kafka but no workload matches it: strict: true moves it into /isolate-housekeeping, off the exclusive CPUs; fix the exclusive workload's match if it is the broker",
    );
  });

  it('finds processes through the cgroup.procs of the matched hierarchies, not by reading every process', async () => {
    const unitPolicy = POLICY.replace(
      "match: { process: { cmdline: 'kafka\\.Kafka' } }",
      'match: { systemdUnit: kafka.service }',
    );
    expect(unitPolicy).not.toBe(POLICY);
    const moves = async (root: string, policy = POLICY) =>
      (await buildPlan({ root, policyPath: policyIn(root, policy) })).plan.changes
        .map(fmt)
        .filter((l) => l.includes('cgroup.procs='));
    const want = [
      'cpuset:/isolate-kafka cgroup.procs=100',
      'cpuset:/isolate-flink cgroup.procs=200',
      'cpuset:/isolate-flink cgroup.procs=201',
    ];
    // A unit: systemd's tracking hierarchy, name=systemd on legacy, cgroup2 on hybrid without it, and
    // every process read where no mount table names one (a fixture tree).
    const legacy = host('qemu-2s-smt2', { layout: 'legacy', ...base, procs: PROCS });
    expect(await moves(legacy, unitPolicy)).toEqual(want);
    const noName = mountinfoFor('hybrid')
      .split('\n')
      .filter((l) => !l.includes('name=systemd'))
      .join('\n');
    const hybrid = host('qemu-2s-smt2', { layout: 'hybrid', ...base, procs: PROCS, mountinfo: noName });
    expect(await moves(hybrid, unitPolicy)).toEqual(want);
    const bare = host('qemu-2s-smt2', { layout: 'legacy', ...base, procs: PROCS, mountinfo: null });
    expect(await moves(bare, unitPolicy)).toEqual(want);
    // A process whose own /proc entry claims /hadoop-yarn but that the hierarchy does not list is never
    // looked at: the kernel's cgroup.procs is the index (with a mount table naming every hierarchy).
    const decoy = host('qemu-2s-smt2', {
      layout: 'legacy',
      ...base,
      procs: { ...PROCS, 400: { cmdline: 'java flink.TaskManager', cpu: '/hadoop-yarn/container_1' } },
    });
    const procs = join(decoy, 'sys/fs/cgroup/cpu,cpuacct/hadoop-yarn/container_1/cgroup.procs');
    writeFileSync(procs, readFileSync(procs, 'utf8').replace('400\n', ''));
    expect(await moves(decoy)).toEqual(want);
    // Not strict: the cpuset root's other processes (sshd, 300) are not even read; strict moves them.
    const strict = POLICY.replace('strict: false', 'strict: true');
    expect(await moves(legacy, strict)).toContain('cpuset:/isolate-housekeeping cgroup.procs=300');
  });

  it("moves a thread that escaped its workload's cpuset back through tasks", async () => {
    const root = host('qemu-2s-smt2', {
      layout: 'legacy',
      ...base,
      cpusets: {
        'isolate-kafka': { cpus: '6-7', mems: '1', cpuExclusive: '1' },
        'isolate-flink': { cpus: '0-5', mems: '0-1' },
      },
      procs: {
        100: {
          cmdline: 'java kafka.Kafka',
          cpuset: '/isolate-kafka',
          threads: { 101: '/', 102: '/isolate-kafka' },
        },
      },
    });
    const { plan } = await buildPlan({ root, policyPath: policyIn(root, POLICY) });
    expect(plan.changes.map(fmt).filter((l) => l.includes('cgroup.procs') || l.includes('tasks'))).toEqual([
      'cpuset:/isolate-kafka tasks=101',
    ]);
    expect(plan.changes.find((c) => c.setting === 'tasks')!.from).toBe('/');
  });
});

function CpuSetMinus(a: string, b: string): string {
  const parse = (s: string) =>
    s.split(',').flatMap((r) => {
      const [x, y] = r.split('-').map(Number);
      return Array.from({ length: (y ?? x!) - x! + 1 }, (_, i) => x! + i);
    });
  const drop = new Set(parse(b));
  const keep = parse(a).filter((c) => !drop.has(c));
  const out: string[] = [];
  for (let i = 0; i < keep.length; ) {
    let j = i;
    while (j + 1 < keep.length && keep[j + 1] === keep[j]! + 1) j++;
    out.push(i === j ? `${keep[i]}` : `${keep[i]}-${keep[j]}`);
    i = j + 1;
  }
  return out.join(',');
}

describe('fields cgroup v1 cannot express are refused', () => {
  it.each([
    [
      'memory.low',
      '    memory: { low: 1G }\n',
      /workloads\[0\]\.memory\.low: memory\.low protection does not exist in cgroup v1.*legacy cgroup v1 layout.*systemd\.unified_cgroup_hierarchy=1/,
    ],
    ['memory.min', '    memory: { min: 1G }\n', /memory\.min protection does not exist in cgroup v1/],
  ])('%s', async (_n, extra, pattern) => {
    const root = host('qemu-2s-smt2', { layout: 'legacy', ...base });
    const text = POLICY.replace(
      "match: { process: { cmdline: 'kafka\\.Kafka' } }\n",
      `match: { process: { cmdline: 'kafka\\.Kafka' } }\n${extra}`,
    );
    const err = await buildPlan({ root, policyPath: policyIn(root, text) }).catch((e) => e);
    expect(err).toBeInstanceOf(UserError);
    expect(err.message).toMatch(pattern);
  });

  it('cpu.idle', async () => {
    const root = host('qemu-2s-smt2', { layout: 'hybrid', ...base });
    const err = await buildPlan({
      root,
      policyPath: policyIn(root, POLICY.replace('weight: 50', 'idle: true')),
    }).catch((e) => e);
    expect(err.message).toMatch(
      /cpu\.idle: cpu\.idle \(cgroup SCHED_IDLE\) does not exist in cgroup v1 on this hybrid cgroup layout.*systemd\.unified_cgroup_hierarchy=1/,
    );
    // What v1 offers instead, and why the kernel parameter is no way out on a RHEL 7 host.
    expect(err.message).toContain(
      'the v1 substitute is a low cpu.weight (written as cpu.shares on v1, e.g. weight: 1 → shares 10)',
    );
    expect(err.message).toMatch(
      /boot a kernel of 5\.0 or later \(cpuset on cgroup v2\) .*\(a 3\.10 kernel, as RHEL 7's, cannot\)$/,
    );
  });
});

describe('the v1 executor on a fake tree', () => {
  it('applies through the engine and rolls back to the exact previous values', async () => {
    const root = host('qemu-2s-smt2', {
      layout: 'legacy',
      ...base,
      cpusets: {
        'isolate-kafka': {},
        'isolate-flink': {},
        'isolate-housekeeping': {},
        docker: { cpus: '0-7', mems: '0-1' },
      },
    });
    const file = (rel: string) => readFileSync(join(root, 'sys/fs/cgroup', rel), 'utf8').trim();
    const before = [
      'docker/cpuset.cpus',
      'isolate-kafka/cpuset.cpus',
      'memory/hadoop-yarn/memory.limit_in_bytes',
      'cpu,cpuacct/hadoop-yarn/cpu.shares',
    ].map((f) => (f.startsWith('memory') || f.startsWith('cpu,') ? file(f) : file(`cpuset/${f}`)));
    const out = await apply({
      root,
      policyPath: policyIn(root, POLICY.replace('strict: false', 'strict: true')),
    });
    expect(out.steps.every((s) => s.status === 'applied')).toBe(true);
    const k = out.allocation!.workloads.find((a) => a.name === 'kafka')!.cpus.toString();
    expect(file('cpuset/isolate-kafka/cpuset.cpus')).toBe(k);
    expect(file('cpuset/isolate-kafka/cpuset.cpu_exclusive')).toBe('1');
    expect(file('cpuset/docker/cpuset.cpus')).toBe(CpuSetMinus('0-7', k));
    expect(file('memory/hadoop-yarn/memory.limit_in_bytes')).toBe(String(2 * 1024 ** 3));
    expect(file('cpu,cpuacct/hadoop-yarn/cpu.shares')).toBe('512');
    // Re-planning the applied host changes nothing.
    const again = await buildPlan({ root, policyPath: join(root, 'policy.yaml') });
    expect(again.plan.changes.filter((c) => c.setting !== 'mkdir').map(fmt)).toEqual([]);
    await rollback({ root });
    const after = [
      'docker/cpuset.cpus',
      'isolate-kafka/cpuset.cpus',
      'memory/hadoop-yarn/memory.limit_in_bytes',
      'cpu,cpuacct/hadoop-yarn/cpu.shares',
    ].map((f) => (f.startsWith('memory') || f.startsWith('cpu,') ? file(f) : file(`cpuset/${f}`)));
    expect(after).toEqual(before);
    expect(file('cpuset/isolate-kafka/cpuset.cpu_exclusive')).toBe('0');
  });
});

describe('saved v1 plans', () => {
  it('apply --plan takes a saved v1 plan, and refuses a hierarchy that leaves /sys/fs/cgroup', async () => {
    const root = host('qemu-2s-smt2', {
      layout: 'legacy',
      ...base,
      cpusets: { 'isolate-kafka': {}, 'isolate-flink': {} },
    });
    const saved = join(root, 'plan.json');
    await plan({ root, policyPath: policyIn(root, POLICY), saveTo: saved });
    const text = readFileSync(saved, 'utf8');
    expect(JSON.parse(text).changes.every((c: Change) => c.backend === 'cgroupfs' && c.hierarchy)).toBe(true);
    const bad = join(root, 'bad.json');
    writeFileSync(bad, text.replace('"hierarchy": "cpuset"', '"hierarchy": "../../etc"'));
    expect(() => readSavedPlan(bad)).toThrow(
      /plan\.changes\[0\]\.hierarchy: "\.\.\/\.\.\/etc" is not a cgroup v1 mount such as "cpuset"/,
    );
    const out = await apply({ root, planFile: saved });
    expect(out.changed).toBeGreaterThan(3);
    expect(
      readFileSync(join(root, 'sys/fs/cgroup/cpuset/isolate-kafka/cpuset.cpu_exclusive'), 'utf8').trim(),
    ).toBe('1');
  });
});
