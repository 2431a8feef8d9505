// The order and content of planned cgroup writes, against the kernel's rules (docs cgroup-v2 §2.4, §9).
import { describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/policy/load.js';
import { planHost } from '../../src/planner/plan.js';
import type { Change } from '../../src/model/plan.js';
import { afterChanges, freshHost, noCgroupHost } from '../support/observed.js';
import { synthTopology, TWO_NODES_SMT2_SPLIT } from '../support/synthetic.js';

// Two nodes × 4 SMT2 cores, siblings N and N+8: node 0 = cpus 0-3,8-11.
const topology = synthTopology(TWO_NODES_SMT2_SPLIT);
const policy = (kafka: string, extra = '', kafkaCgroup = '/kafka.slice') =>
  parsePolicy(
    `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
${extra}
workloads:
  - { name: kafka, class: exclusive, cores: ${kafka}, match: { cgroup: ${kafkaCgroup} }, memory: { low: 1G } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn }, memory: { high: 2G, max: 3G }, cpu: { weight: 10 } }
`,
    'p.yaml',
  );
const key = (c: Change) => `${c.target} ${c.setting}`;

describe('planned cgroup writes', () => {
  it('on a fresh host: controllers, mkdir, cpus, partition, memory, weight — in that order', () => {
    const plan = planHost(topology, policy('2'), freshHost());
    expect(plan.changes.map(key)).toEqual([
      '/ cgroup.subtree_control',
      '/hadoop-yarn mkdir',
      '/kafka.slice mkdir',
      '/kafka.slice cpuset.mems',
      '/hadoop-yarn cpuset.mems',
      '/kafka.slice cpuset.cpus',
      '/hadoop-yarn cpuset.cpus',
      '/kafka.slice cpuset.cpus.partition',
      '/kafka.slice memory.low',
      '/hadoop-yarn memory.high',
      '/hadoop-yarn memory.max',
      '/hadoop-yarn cpu.weight',
    ]);
    const root = plan.changes[0]!;
    expect(root.to).toBe('cpu cpuset memory');
    expect(plan.changes.find((c) => key(c) === '/kafka.slice cpuset.cpus')!.to).toBe('1-2,9-10');
    expect(plan.changes.find((c) => key(c) === '/hadoop-yarn cpuset.cpus')!.to).toBe('0,3-8,11-15');
    expect(plan.changes.find((c) => key(c) === '/kafka.slice memory.low')!.to).toBe(String(1024 ** 3));
  });

  it('a nested exclusive cgroup: the warning advises strict: true only to a policy without it', () => {
    const warning = (extra: string) =>
      planHost(topology, policy('2', extra, '/srv/kafka'), freshHost()).warnings.find((w) =>
        w.includes('not a top-level cgroup'),
      );
    expect(warning('')).toMatch(/put it in its own slice, e\.g\. kafka\.slice, and use strict: true\)$/);
    const strict = warning('strict: true');
    expect(strict).toMatch(
      /strict: true moves only systemd units; match it by systemdUnit, or run it in a top-level slice/,
    );
    expect(strict).not.toMatch(/use strict: true/);
  });

  it('shrinking Kafka: Kafka lets go of its cores before batch takes them', () => {
    const before = afterChanges(freshHost(), planHost(topology, policy('3'), freshHost()).changes);
    const plan = planHost(topology, policy('2'), before);
    expect(plan.changes.map(key)).toEqual(['/kafka.slice cpuset.cpus', '/hadoop-yarn cpuset.cpus']);
    expect(plan.changes[0]).toMatchObject({ from: '1-3,9-11', to: '1-2,9-10' });
    expect(plan.changes[1]).toMatchObject({ from: '0,4-8,12-15', to: '0,3-8,11-15' });
  });

  it('growing Kafka: batch shrinks first, Kafka keeps its cores and grows after', () => {
    const before = afterChanges(freshHost(), planHost(topology, policy('2'), freshHost()).changes);
    const plan = planHost(topology, policy('3'), before);
    expect(plan.changes.map(key)).toEqual(['/hadoop-yarn cpuset.cpus', '/kafka.slice cpuset.cpus']);
    expect(plan.changes[0]).toMatchObject({ from: '0,3-8,11-15', to: '0,4-8,12-15' });
    expect(plan.changes[1]).toMatchObject({ from: '1-2,9-10', to: '1-3,9-11' });
  });

  it('strict fences every other top-level cgroup before the partition is switched on', () => {
    const host = freshHost(['init.scope', 'system.slice', 'user.slice']);
    const plan = planHost(topology, policy('2', 'strict: true'), host);
    const keys = plan.changes.map(key);
    for (const t of ['/init.scope', '/system.slice', '/user.slice']) {
      const i = keys.indexOf(`${t} cpuset.cpus`);
      expect(i).toBeGreaterThan(-1);
      expect(i).toBeLessThan(keys.indexOf('/kafka.slice cpuset.cpus.partition'));
      expect(plan.changes[i]!.to).toBe('0,3-8,11-15');
      expect(plan.changes[i]!.note).toMatch(/systemd owns this cgroup/);
    }
    expect(plan.warnings.join('\n')).toMatch(/systemctl daemon-reload may undo/);
  });

  it('process matchers: the cgroup is created and sized before the processes move, one PID per change', () => {
    const p = parsePolicy(
      `apiVersion: isolate/v1
kind: HostPolicy
workloads:
  - { name: kafka, class: exclusive, cores: 1, match: { process: { cmdline: 'kafka\\.Kafka' } } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
`,
      'p.yaml',
    );
    const host = freshHost();
    host.processes = { kafka: [4242, 77] };
    host.processCgroups = { 4242: '/system.slice/kafka.service', 77: '/user.slice' };
    const plan = planHost(topology, p, host);
    const keys = plan.changes.map(key);
    expect(keys.slice(-2)).toEqual(['/isolate-kafka cgroup.procs', '/isolate-kafka cgroup.procs']);
    expect(plan.changes.slice(-2).map((c) => [c.to, c.from])).toEqual([
      ['77', '/user.slice'],
      ['4242', '/system.slice/kafka.service'],
    ]);
    expect(keys.indexOf('/isolate-kafka mkdir')).toBeLessThan(keys.indexOf('/isolate-kafka cpuset.cpus'));
    // Already moved: nothing more to do.
    const again = planHost(topology, p, afterChanges(host, plan.changes));
    expect(again.changes).toEqual([]);
  });

  it('a unit that is not running is skipped with a warning, not created', () => {
    const p = parsePolicy(
      `apiVersion: isolate/v1
kind: HostPolicy
workloads:
  - { name: kafka, class: exclusive, cores: 1, match: { systemdUnit: kafka.service } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
`,
      'p.yaml',
    );
    const plan = planHost(topology, p, freshHost());
    expect(plan.changes.some((c) => c.target.includes('kafka.service'))).toBe(false);
    expect(plan.warnings.join('\n')).toMatch(/kafka\.service has no cgroup \(not running\)/);
  });

  it('without cgroup v2 it still plans, with unknown "from" values and a warning', () => {
    const plan = planHost(topology, policy('2'), noCgroupHost());
    expect(plan.changes.length).toBeGreaterThan(0);
    expect(plan.changes.every((c) => c.from === null)).toBe(true);
    expect(plan.changes.some((c) => c.setting === 'mkdir')).toBe(false);
    expect(plan.warnings[0]).toMatch(/^apply would be refused: no cgroup v2 hierarchy/);
  });
});
