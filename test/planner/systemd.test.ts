// Where systemd runs the host, its units' CPUs and memory are planned as unit properties
// (systemctl set-property), diffed against what systemd holds; only what systemd has no property
// for (cpuset partitions, cgroups that are not units) stays with cgroupfs.
import { describe, expect, it } from 'vitest';
import type { ObservedState } from '../../src/model/observed.js';
import type { Change } from '../../src/model/plan.js';
import { planHost } from '../../src/planner/plan.js';
import { parsePolicy } from '../../src/policy/load.js';
import { freshHost } from '../support/observed.js';
import { synthTopology, TWO_NODES_SMT2_SPLIT } from '../support/synthetic.js';

// Two nodes × 4 SMT2 cores, siblings N and N+8: node 0 = cpus 0-3,8-11.
const topology = synthTopology(TWO_NODES_SMT2_SPLIT);

const UNSET = {
  AllowedCPUs: '',
  AllowedMemoryNodes: '',
  MemoryMin: '0',
  MemoryLow: '0',
  MemoryHigh: 'infinity',
  MemoryMax: 'infinity',
  CPUWeight: '[not set]',
};

function systemdHost(top: string[], units: string[]): ObservedState {
  const o = freshHost(top);
  o.systemd = {
    version: 252,
    units: Object.fromEntries(units.map((u) => [u, { Id: u, LoadState: 'loaded', ...UNSET }])),
  };
  return o;
}

const key = (c: Change) => `${c.backend} ${c.target} ${c.setting}`;

const unitPolicy = parsePolicy(
  `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
workloads:
  - { name: kafka, class: exclusive, cores: 2, match: { systemdUnit: kafka.service }, memory: { low: 1G } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
`,
  'p.yaml',
);

describe('planning through systemd', () => {
  it("a running unit's CPUs, memory nodes and memory go through set-property; YARN's cgroup through cgroupfs", () => {
    const host = systemdHost(['system.slice'], ['kafka.service', 'system.slice']);
    host.cgroup.groups['/system.slice/kafka.service'] = {
      exists: true,
      values: {},
      ownedBySystemd: true,
    };
    host.cgroup.units['kafka.service'] = '/system.slice/kafka.service';
    const plan = planHost(topology, unitPolicy, host);
    const keys = plan.changes.map(key);
    expect(keys).toEqual(
      expect.arrayContaining([
        'systemd kafka.service AllowedCPUs',
        'systemd kafka.service AllowedMemoryNodes',
        'systemd kafka.service MemoryLow',
        'cgroupfs /hadoop-yarn cpuset.cpus',
      ]),
    );
    // systemd enables the controllers its units need; isolate writes no file of a unit's cgroup.
    expect(keys.filter((k) => k.startsWith('cgroupfs /system.slice'))).toEqual([]);
    expect(plan.changes.find((c) => key(c) === 'systemd kafka.service AllowedCPUs')!.to).toBe('1-2,9-10');
    expect(plan.changes.find((c) => key(c) === 'systemd kafka.service MemoryLow')!.to).toBe(
      String(1024 ** 3),
    );
    expect(plan.warnings.join('\n')).not.toMatch(/daemon-reload may undo/);
  });

  it('a unit that is not running yet gets its properties now, so it starts fenced', () => {
    const plan = planHost(topology, unitPolicy, systemdHost([], ['kafka.service']));
    expect(
      plan.changes
        .filter((c) => c.target === 'kafka.service')
        .map((c) => c.setting)
        .sort(),
    ).toEqual(['AllowedCPUs', 'AllowedMemoryNodes', 'MemoryLow']);
    expect(plan.changes.some((c) => c.backend === 'cgroupfs' && c.target.includes('kafka.service'))).toBe(
      false,
    );
  });

  it('strict: the other top-level units are fenced through systemd; the partition file is written, with a note', () => {
    const p = parsePolicy(
      `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
strict: true
workloads:
  - { name: kafka, class: exclusive, cores: 2, match: { cgroup: /kafka.slice } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
`,
      'p.yaml',
    );
    const top = ['init.scope', 'system.slice', 'user.slice', 'kafka.slice'];
    const host = systemdHost(top, top);
    const plan = planHost(topology, p, host);
    for (const u of ['init.scope', 'system.slice', 'user.slice']) {
      expect(plan.changes.find((c) => key(c) === `systemd ${u} AllowedCPUs`)!.to).toBe('0,3-8,11-15');
    }
    const partition = plan.changes.find((c) => key(c) === 'cgroupfs /kafka.slice cpuset.cpus.partition')!;
    expect(partition.note).toMatch(/systemd has no property for cpuset partitions/);
    const keys = plan.changes.map(key);
    // Donors let go before the partition is switched on.
    expect(keys.indexOf('systemd system.slice AllowedCPUs')).toBeLessThan(
      keys.indexOf('cgroupfs /kafka.slice cpuset.cpus.partition'),
    );
    expect(keys.indexOf('systemd kafka.slice AllowedCPUs')).toBeLessThan(
      keys.indexOf('cgroupfs /kafka.slice cpuset.cpus.partition'),
    );
  });

  it('re-planning after systemd holds the values gives no systemd change', () => {
    const host = systemdHost([], ['kafka.service']);
    const first = planHost(topology, unitPolicy, host);
    for (const c of first.changes.filter((x) => x.backend === 'systemd'))
      host.systemd!.units[c.target]![c.setting] = c.to;
    const again = planHost(topology, unitPolicy, host);
    expect(again.changes.filter((c) => c.backend === 'systemd')).toEqual([]);
  });
});

describe('the plan as text', () => {
  it('shows systemd changes as the systemctl command that makes them', async () => {
    const { formatPlan } = await import('../../src/planner/format.js');
    const host = systemdHost([], ['kafka.service']);
    const text = formatPlan(planHost(topology, unitPolicy, host), 'p.yaml');
    expect(text).toMatch(
      /^ +\d+\. systemctl set-property kafka\.service AllowedCPUs=1-2,9-10 {2}\(now ""\)$/m,
    );
  });
});
