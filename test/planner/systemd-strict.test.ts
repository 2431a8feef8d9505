// strict: true on a systemd host: an exclusive service in system.slice is moved into a top-level slice
// of its own (a Slice= drop-in isolate writes; effective at the unit's next restart), which is fenced
// through systemd and made the partition root; a Delegate=yes unit's subtree is written through cgroupfs.
// Fixture observations → the exact change list.
import { describe, expect, it } from 'vitest';
import type { ObservedGroup, ObservedState } from '../../src/model/observed.js';
import type { Change } from '../../src/model/plan.js';
import { formatPlan } from '../../src/planner/format.js';
import { planHost } from '../../src/planner/plan.js';
import { parsePolicy } from '../../src/policy/load.js';
import { cgroupCpuList, slicePath } from '../../src/model/systemd.js';
import { freshHost } from '../support/observed.js';
import { synthTopology, TWO_NODES_SMT2_SPLIT } from '../support/synthetic.js';

// Two nodes × 4 SMT2 cores, siblings N and N+8: node 0 = cpus 0-3,8-11, node 1 = 4-7,12-15.
const topology = synthTopology(TWO_NODES_SMT2_SPLIT);

const UNSET = {
  AllowedCPUs: '',
  AllowedMemoryNodes: '',
  MemoryMin: '0',
  MemoryLow: '0',
  MemoryHigh: 'infinity',
  MemoryMax: 'infinity',
  CPUWeight: '[not set]',
  Delegate: 'no',
};

const TOP = ['init.scope', 'system.slice', 'user.slice', 'hadoop-yarn'];

const group = (values: Record<string, string> = {}): ObservedGroup => ({
  exists: true,
  values,
  ownedBySystemd: true,
});

/** A systemd host: kafka.service runs in `kafkaCgroup` with Slice= `slice`; kafka.slice is a loaded unit. */
function host(kafkaCgroup: string | null, slice: string, extraTop: string[] = []): ObservedState {
  const top = [...TOP, ...extraTop];
  const o = freshHost(top);
  o.cgroup.rootSubtreeControl = ['cpuset', 'memory', 'pids'];
  const units = ['init.scope', 'system.slice', 'user.slice', 'kafka.slice', ...extraTop];
  o.systemd = {
    version: 252,
    units: Object.fromEntries(
      units
        .filter((u) => u.endsWith('.slice') || u.endsWith('.scope'))
        .map((u) => [u, { Id: u, LoadState: 'loaded', ...UNSET }]),
    ),
  };
  o.systemd.units['kafka.service'] = {
    Id: 'kafka.service',
    LoadState: 'loaded',
    Slice: slice,
    ControlGroup: kafkaCgroup ?? '',
    ...UNSET,
  };
  o.cgroup.units['kafka.service'] = kafkaCgroup;
  if (kafkaCgroup) o.cgroup.groups[kafkaCgroup] = group();
  return o;
}

const policy = parsePolicy(
  `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
strict: true
workloads:
  - { name: kafka, class: exclusive, cores: 2, numa: single, match: { systemdUnit: kafka.service }, memory: { low: 1G } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
`,
  'p.yaml',
);

/**
 * What systemd does after a set-property when it can: the CPU and node lists it holds are written
 * into the unit's cgroup. A fixture with properties but no files would be a unit systemd failed to
 * realise (see the test of that below).
 */
function systemdWrote(o: ObservedState): ObservedState {
  for (const [unit, props] of Object.entries(o.systemd?.units ?? {})) {
    const cg = props.ControlGroup || (unit.endsWith('.slice') ? slicePath(unit) : `/${unit}`);
    const g = o.cgroup.groups[cg];
    if (!g) continue;
    if (props.AllowedCPUs) g.values['cpuset.cpus'] = cgroupCpuList(props.AllowedCPUs);
    if (props.AllowedMemoryNodes) g.values['cpuset.mems'] = cgroupCpuList(props.AllowedMemoryNodes);
  }
  return o;
}

const line = (c: Change) => `${c.backend} ${c.target} ${c.setting}: ${c.from ?? '(none)'} → ${c.to}`;
const FENCE = '0,3-8,11-15';
const KAFKA = '1-2,9-10';
const GIB = String(1024 ** 3);

describe('strict: true through systemd', () => {
  it('kafka.service in system.slice: the Slice= drop-in first, the unit fenced until it restarts, kafka.slice prepared; system.slice not fenced yet', () => {
    const plan = planHost(topology, policy, host('/system.slice/kafka.service', 'system.slice'));
    expect(plan.changes.map(line)).toEqual([
      'systemd kafka.service Slice: system.slice → kafka.slice',
      // The anchor: an empty slice in system.slice that keeps cpuset enabled there (see below).
      `systemd system-isolate.slice AllowedCPUs: (none) → ${FENCE}`,
      'systemd system-isolate.slice ActiveState: (none) → active',
      `systemd kafka.slice AllowedCPUs:  → ${KAFKA}`,
      `systemd kafka.service AllowedCPUs:  → ${KAFKA}`,
      `systemd init.scope AllowedCPUs:  → ${FENCE}`,
      `systemd user.slice AllowedCPUs:  → ${FENCE}`,
      'systemd kafka.slice AllowedMemoryNodes:  → 0',
      'systemd kafka.service AllowedMemoryNodes:  → 0',
      `systemd kafka.slice MemoryLow: 0 → ${GIB}`,
      `systemd kafka.service MemoryLow: 0 → ${GIB}`,
      'cgroupfs /hadoop-yarn cpuset.mems: (none) → 0-1',
      `cgroupfs /hadoop-yarn cpuset.cpus: (none) → ${FENCE}`,
    ]);
    // No partition while Kafka still runs in system.slice; system.slice keeps Kafka's cores for now.
    const w = plan.warnings.join('\n');
    expect(w).toMatch(
      /kafka: kafka\.service runs in \/system\.slice\/kafka\.service; it moves to kafka\.slice at its next restart/,
    );
    expect(w).toMatch(/strict: \/system\.slice holds an exclusive workload/);
    expect(w).not.toMatch(/is not a top-level cgroup/);
    expect(plan.allocation.workloads.find((a) => a.name === 'kafka')!.target).toBe(
      '/system.slice/kafka.service',
    );
    // The plan announces the drop-in and when it takes effect.
    expect(formatPlan(plan, 'p.yaml')).toMatch(
      /^ +1\. drop-in \/etc\/systemd\/system\/kafka\.service\.d\/50-isolate-slice\.conf: Slice=kafka\.slice \(takes effect at kafka\.service's next restart\) {2}\(now system\.slice\) {2}\[isolate writes the drop-in .*; it takes effect at the unit's next restart \(isolate never restarts it\)\]$/m,
    );
  });

  it('before the restart, a unit whose AllowedCPUs= systemd holds but never wrote (no cpuset in system.slice) is set again after the anchor', () => {
    // The state after apply + daemon-reload on systemd 252 without an anchor: every property held,
    // /system.slice/kafka.service without cpuset files, Kafka on every CPU.
    const o = host('/system.slice/kafka.service', 'kafka.slice');
    const held = { AllowedCPUs: KAFKA, AllowedMemoryNodes: '0', MemoryLow: GIB };
    Object.assign(o.systemd!.units['kafka.slice']!, held);
    Object.assign(o.systemd!.units['kafka.service']!, held);
    for (const u of ['init.scope', 'user.slice']) o.systemd!.units[u]!.AllowedCPUs = FENCE;
    o.cgroup.groups['/hadoop-yarn'] = {
      ...group({ 'cpuset.cpus': FENCE, 'cpuset.mems': '0-1' }),
      ownedBySystemd: false,
    };
    systemdWrote(o);
    o.cgroup.groups['/system.slice/kafka.service'] = group({ 'memory.low': GIB });
    const plan = planHost(topology, policy, o);
    expect(plan.changes.map(line)).toEqual([
      `systemd system-isolate.slice AllowedCPUs: (none) → ${FENCE}`,
      'systemd system-isolate.slice ActiveState: (none) → active',
      'systemd kafka.service AllowedMemoryNodes: 0 → 0',
      `systemd kafka.service AllowedCPUs: ${KAFKA} → ${KAFKA}`,
    ]);
    expect(plan.changes[0]!.note).toMatch(
      /keeps cpuset enabled so kafka\.service's AllowedCPUs= is in force until its restart/,
    );
    expect(plan.changes[3]!.note).toMatch(
      /systemd holds AllowedCPUs=1-2,9-10 but \/system\.slice\/kafka\.service\/cpuset\.cpus does not exist \(no cpuset in \/system\.slice\): not in force/,
    );
    // Once the anchor runs and systemd wrote the lists, nothing is left to do.
    o.systemd!.units['system-isolate.slice'] = {
      Id: 'system-isolate.slice',
      LoadState: 'loaded',
      ActiveState: 'active',
      ...UNSET,
      AllowedCPUs: FENCE.replace(/,/g, ' '),
    };
    o.cgroup.groups['/system.slice/kafka.service']!.values['cpuset.cpus'] = KAFKA;
    o.cgroup.groups['/system.slice/kafka.service']!.values['cpuset.mems'] = '0';
    expect(planHost(topology, policy, o).changes.map(line)).toEqual([]);
  });

  it('after the restart (kafka.service in /kafka.slice): kafka.slice is the target and partition root, system.slice is fenced, no drop-in again', () => {
    const o = host('/kafka.slice/kafka.service', 'kafka.slice', ['kafka.slice']);
    // What the first apply left: the slice's and the unit's properties.
    Object.assign(o.systemd!.units['kafka.slice']!, {
      AllowedCPUs: KAFKA,
      AllowedMemoryNodes: '0',
      MemoryLow: GIB,
    });
    Object.assign(o.systemd!.units['kafka.service']!, {
      AllowedCPUs: KAFKA,
      AllowedMemoryNodes: '0',
      MemoryLow: GIB,
    });
    Object.assign(o.systemd!.units['init.scope']!, { AllowedCPUs: FENCE });
    Object.assign(o.systemd!.units['user.slice']!, { AllowedCPUs: FENCE });
    o.cgroup.groups['/kafka.slice'] = group({ 'cpuset.cpus': KAFKA, 'cpuset.cpus.partition': 'member' });
    o.cgroup.groups['/hadoop-yarn'] = {
      ...group({ 'cpuset.cpus': FENCE, 'cpuset.mems': '0-1' }),
      ownedBySystemd: false,
    };
    const plan = planHost(topology, policy, systemdWrote(o));
    expect(plan.allocation.workloads.find((a) => a.name === 'kafka')!.target).toBe('/kafka.slice');
    expect(plan.changes.map(line)).toEqual([
      `systemd system.slice AllowedCPUs:  → ${FENCE}`,
      'cgroupfs /kafka.slice cpuset.cpus.partition: member → root',
    ]);
    expect(plan.changes[1]!.note).toMatch(/systemd has no property for cpuset partitions/);
    expect(plan.warnings).toEqual([]);
  });

  it('the partition reset to member by someone is planned back to root (the agent checks it every interval)', () => {
    const o = host('/kafka.slice/kafka.service', 'kafka.slice', ['kafka.slice']);
    Object.assign(o.systemd!.units['kafka.slice']!, {
      AllowedCPUs: KAFKA,
      AllowedMemoryNodes: '0',
      MemoryLow: GIB,
    });
    for (const u of ['init.scope', 'user.slice', 'system.slice']) o.systemd!.units[u]!.AllowedCPUs = FENCE;
    o.cgroup.groups['/kafka.slice'] = group({ 'cpuset.cpus': KAFKA, 'cpuset.cpus.partition': 'root' });
    o.cgroup.groups['/hadoop-yarn'] = {
      ...group({ 'cpuset.cpus': FENCE, 'cpuset.mems': '0-1' }),
      ownedBySystemd: false,
    };
    expect(planHost(topology, policy, systemdWrote(o)).changes.map(line)).toEqual([]);
    o.cgroup.groups['/kafka.slice']!.values['cpuset.cpus.partition'] = 'member';
    expect(planHost(topology, policy, systemdWrote(o)).changes.map(line)).toEqual([
      'cgroupfs /kafka.slice cpuset.cpus.partition: member → root',
    ]);
    // AllowedCPUs= drifting from the partition's CPUs is put back through systemd, before the partition.
    o.systemd!.units['kafka.slice']!.AllowedCPUs = '1-2';
    expect(planHost(topology, policy, systemdWrote(o)).changes.map(line)).toEqual([
      `systemd kafka.slice AllowedCPUs: 1-2 → ${KAFKA}`,
      'cgroupfs /kafka.slice cpuset.cpus.partition: member → root',
    ]);
  });

  it("the operator's own top-level slice is used as it is: no drop-in", () => {
    const o = host('/broker.slice/kafka.service', 'broker.slice', ['broker.slice']);
    o.systemd!.units['broker.slice'] = { Id: 'broker.slice', LoadState: 'loaded', ...UNSET };
    const plan = planHost(topology, policy, systemdWrote(o));
    expect(plan.allocation.workloads.find((a) => a.name === 'kafka')!.target).toBe('/broker.slice');
    expect(plan.changes.some((c) => c.setting === 'Slice')).toBe(false);
    expect(plan.changes.map(line)).toContain('cgroupfs /broker.slice cpuset.cpus.partition: (none) → root');
    expect(plan.changes.map(line)).toContain(`systemd system.slice AllowedCPUs:  → ${FENCE}`);
    expect(plan.changes.map(line)).not.toContain(`systemd kafka.slice AllowedCPUs:  → ${KAFKA}`);
  });

  it('an empty /kafka.slice systemd has not loaded is never fenced: kafka.service moves into it at its restart', () => {
    // The slice's cgroup is there (left empty) but systemd lists no kafka.slice unit; kafka.service
    // still runs in system.slice.
    const o = host('/system.slice/kafka.service', 'system.slice', ['kafka.slice']);
    delete o.systemd!.units['kafka.slice'];
    o.cgroup.groups['/kafka.slice'] = group({ 'cpuset.cpus': '' });
    const plan = planHost(topology, policy, systemdWrote(o));
    expect(plan.changes.map(line)).toContain('systemd kafka.service Slice: system.slice → kafka.slice');
    expect(plan.changes.filter((c) => c.target === '/kafka.slice' || c.target === 'kafka.slice')).toEqual([]);
  });

  it('a nested slice (system-kafka.slice) is not a slice of its own: the drop-in names kafka.slice', () => {
    const plan = planHost(
      topology,
      policy,
      host('/system.slice/system-kafka.slice/kafka.service', 'system-kafka.slice'),
    );
    expect(plan.changes[0]).toMatchObject({
      setting: 'Slice',
      from: 'system-kafka.slice',
      to: 'kafka.slice',
    });
  });

  it('a stopped kafka.service gets the drop-in and kafka.slice its settings, so it starts in its partition', () => {
    const plan = planHost(topology, policy, host(null, 'system.slice'));
    expect(plan.allocation.workloads.find((a) => a.name === 'kafka')!.target).toBe('/kafka.slice');
    expect(plan.changes.map(line).filter((l) => l.includes('kafka'))).toEqual([
      'systemd kafka.service Slice: system.slice → kafka.slice',
      `systemd kafka.slice AllowedCPUs:  → ${KAFKA}`,
      'systemd kafka.slice AllowedMemoryNodes:  → 0',
      `systemd kafka.slice MemoryLow: 0 → ${GIB}`,
    ]);
    // system.slice holds no exclusive workload any more: it is fenced now.
    expect(plan.changes.map(line)).toContain(`systemd system.slice AllowedCPUs:  → ${FENCE}`);
  });

  it('user.slice and machine.slice are fenced before they run (loaded, no cgroup yet); unknown units are not', () => {
    const o = host('/kafka.slice/kafka.service', 'kafka.slice', ['kafka.slice']);
    o.cgroup.topLevel = o.cgroup.topLevel.filter((t) => t !== 'user.slice');
    delete o.cgroup.groups['/user.slice'];
    o.systemd!.units['machine.slice'] = { Id: 'machine.slice', LoadState: 'loaded', ...UNSET };
    const lines = planHost(topology, policy, systemdWrote(o)).changes.map(line);
    expect(lines).toContain(`systemd user.slice AllowedCPUs:  → ${FENCE}`);
    expect(lines).toContain(`systemd machine.slice AllowedCPUs:  → ${FENCE}`);
    expect(lines.filter((l) => l.includes('user.slice') || l.includes('machine.slice'))).toHaveLength(2);
    delete o.systemd!.units['machine.slice'];
    expect(
      planHost(topology, policy, systemdWrote(o))
        .changes.map(line)
        .some((l) => l.includes('machine.slice')),
    ).toBe(false);
  });

  it('systemd prints CPU lists with spaces ("0 3-8 11-15"): read as the same list, no change', () => {
    const o = host('/kafka.slice/kafka.service', 'kafka.slice', ['kafka.slice']);
    Object.assign(o.systemd!.units['kafka.slice']!, {
      AllowedCPUs: '1-2 9-10',
      AllowedMemoryNodes: '0',
      MemoryLow: GIB,
    });
    for (const u of ['init.scope', 'user.slice', 'system.slice'])
      o.systemd!.units[u]!.AllowedCPUs = '0 3-8 11-15';
    o.cgroup.groups['/kafka.slice'] = group({ 'cpuset.cpus': KAFKA, 'cpuset.cpus.partition': 'root' });
    o.cgroup.groups['/hadoop-yarn'] = {
      ...group({ 'cpuset.cpus': FENCE, 'cpuset.mems': '0-1' }),
      ownedBySystemd: false,
    };
    expect(planHost(topology, policy, systemdWrote(o)).changes.map(line)).toEqual([]);
  });

  it('top-level mount units (/dev-hugepages.mount on systemd 252) are fenced through systemd, not cgroupfs', () => {
    const o = host('/kafka.slice/kafka.service', 'kafka.slice', ['kafka.slice', 'dev-hugepages.mount']);
    o.systemd!.units['dev-hugepages.mount'] = { Id: 'dev-hugepages.mount', LoadState: 'loaded', ...UNSET };
    const lines = planHost(topology, policy, systemdWrote(o)).changes.map(line);
    expect(lines).toContain(`systemd dev-hugepages.mount AllowedCPUs:  → ${FENCE}`);
    expect(lines.filter((l) => l.includes('dev-hugepages'))).toHaveLength(1);
  });

  it('strict: false, or no systemd: no Slice= drop-in', () => {
    const loose = parsePolicy(
      `apiVersion: isolate/v1
kind: HostPolicy
strict: false
workloads:
  - { name: kafka, class: exclusive, cores: 2, match: { systemdUnit: kafka.service } }
`,
      'p.yaml',
    );
    expect(
      planHost(topology, loose, host('/system.slice/kafka.service', 'system.slice')).changes.some(
        (c) => c.setting === 'Slice',
      ),
    ).toBe(false);
    const noSystemd = host('/system.slice/kafka.service', 'system.slice');
    delete noSystemd.systemd;
    expect(planHost(topology, policy, noSystemd).changes.some((c) => c.setting === 'Slice')).toBe(false);
  });
});

describe('a Delegate=yes unit (the layout systemd recommends for YARN)', () => {
  const nm = 'hadoop-yarn-nodemanager.service';
  const yarnPolicy = (match: string) =>
    parsePolicy(
      `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
workloads:
  - { name: kafka, class: exclusive, cores: 2, match: { cgroup: /kafka.slice } }
  - { name: flink, class: batch, match: { ${match} } }
`,
      'p.yaml',
    );
  function nmHost(delegate: 'yes' | 'no'): ObservedState {
    const o = host(null, 'system.slice', ['kafka.slice']);
    o.systemd!.units[nm] = { Id: nm, LoadState: 'loaded', ...UNSET, Delegate: delegate };
    o.cgroup.units[nm] = `/system.slice/${nm}`;
    o.cgroup.groups[`/system.slice/${nm}`] = group({ 'cgroup.subtree_control': '' });
    o.cgroup.groups[`/system.slice/${nm}/hadoop-yarn`] = group({ 'cgroup.subtree_control': 'cpuset' });
    return o;
  }

  it('the unit itself is fenced through systemd; the containers below inherit it', () => {
    const plan = planHost(topology, yarnPolicy(`systemdUnit: ${nm}`), nmHost('yes'));
    expect(plan.changes.map(line).filter((l) => l.includes(nm))).toEqual([
      `systemd ${nm} AllowedCPUs:  → ${FENCE}`,
      `systemd ${nm} AllowedMemoryNodes:  → 0-1`,
    ]);
  });

  it("a cgroup inside the delegated subtree is written through cgroupfs, the unit's own subtree_control too, without a daemon-reload warning", () => {
    const target = `/system.slice/${nm}/hadoop-yarn`;
    const plan = planHost(topology, yarnPolicy(`cgroup: ${target}`), nmHost('yes'));
    expect(plan.changes.map(line).filter((l) => l.includes(nm))).toEqual([
      `cgroupfs /system.slice/${nm} cgroup.subtree_control:  → cpuset`,
      `cgroupfs ${target} cpuset.mems: (none) → 0-1`,
      `cgroupfs ${target} cpuset.cpus: (none) → ${FENCE}`,
    ]);
    expect(plan.changes.filter((c) => c.target.includes(nm)).every((c) => c.note === undefined)).toBe(true);
    expect(plan.warnings.join('\n')).not.toMatch(/daemon-reload may undo/);
    // Without Delegate=yes systemd owns that subtree: the same writes come with the warning.
    const owned = planHost(topology, yarnPolicy(`cgroup: ${target}`), nmHost('no'));
    expect(owned.warnings.join('\n')).toMatch(/daemon-reload may undo/);
  });
});
