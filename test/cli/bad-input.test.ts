// Every error a user can make with a policy, a sysfs tree or a flag: one line on stderr naming the
// file/field and the fix, exit code 1, no stack trace, nothing written.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { synthTopology } from '../support/synthetic.js';
import { writeSysfs } from '../support/sysfs.js';
import { isolate } from './run.js';

const GOOD = `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
workloads:
  - name: kafka
    class: exclusive
    cores: 2
    match: { cgroup: /kafka.slice }
    memory: { low: 1G }
  - name: flink
    class: batch
    match: { cgroup: /hadoop-yarn }
    memory: { high: 2G, max: 3G }
`;

let dir: string;
let root: string;
const policy = (name: string, text: string) => {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, text);
  return file;
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'isolate-bad-'));
  // Two nodes of 4 SMT2 cores, 4 GiB each.
  root = writeSysfs(
    synthTopology({
      packages: 2,
      nodesPerPackage: 1,
      coresPerNode: 4,
      threads: [2],
      siblings: 'split',
      l3PerNode: 1,
      nodeMemoryBytes: 4 * 1024 ** 3,
    }),
  );
});

function expectOneLineError(r: ReturnType<typeof isolate>, pattern: RegExp): void {
  expect(r.code, r.stderr).toBe(1);
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(lines[0]).toMatch(pattern);
}

describe('policy errors name file, line:column, field and the fix', () => {
  const cases: [string, (t: string) => string, RegExp][] = [
    [
      'unknown top-level field',
      (t) => t.replace('reserved:', 'reservd:'),
      /:3:1: reservd: unknown field "reservd"; allowed: /,
    ],
    [
      'unknown workload field',
      (t) => t.replace('    cores: 2', '    cpus: 2'),
      /:7:5: workloads\[0\]\.cpus: unknown field "cpus"/,
    ],
    [
      'wrong type for cores',
      (t) => t.replace('cores: 2', 'cores: eight'),
      /:7:12: workloads\[0\]\.cores: expected a whole number of cores .* got "eight"/,
    ],
    [
      'zero cores',
      (t) => t.replace('cores: 2', 'cores: 0'),
      /:7:12: workloads\[0\]\.cores: expected a whole number of physical cores, 1 or more; got 0/,
    ],
    [
      'negative cores',
      (t) => t.replace('cores: 2', 'cores: -3'),
      /workloads\[0\]\.cores: expected a whole number of physical cores, 1 or more; got -3/,
    ],
    [
      'bad size unit',
      (t) => t.replace('low: 1G', 'low: 1Q'),
      /:9:20: workloads\[0\]\.memory\.low: expected bytes .* got "1Q"/,
    ],
    [
      'max below high',
      (t) => t.replace('max: 3G', 'max: 1G'),
      /workloads\[1\]\.memory\.max: max \(1G\) is below high \(2G\)/,
    ],
    [
      'duplicate workload names',
      (t) => t.replace('name: flink', 'name: kafka'),
      /:10:11: workloads\[1\]\.name: duplicate workload name "kafka"/,
    ],
    [
      'bad regex',
      (t) => t.replace('match: { cgroup: /kafka.slice }', "match: { process: { cmdline: 'kafka(' } }"),
      /workloads\[0\]\.match\.process\.cmdline: invalid regular expression/,
    ],
    [
      'bad apiVersion',
      (t) => t.replace('isolate/v1', 'isolate/v2'),
      /:1:13: apiVersion: expected "isolate\/v1"; got "isolate\/v2"/,
    ],
    [
      'bad class',
      (t) => t.replace('class: batch', 'class: bulk'),
      /workloads\[1\]\.class: expected "exclusive" or "batch"; got "bulk"/,
    ],
    [
      'cores on batch',
      (t) => t.replace('    class: batch', '    class: batch\n    cores: 2'),
      /workloads\[1\]\.cores: only exclusive workloads take cores/,
    ],
    [
      'two matchers',
      (t) => t.replace('{ cgroup: /hadoop-yarn }', '{ cgroup: /hadoop-yarn, systemdUnit: a.service }'),
      /workloads\[1\]\.match: set exactly one of systemdUnit, cgroup or process/,
    ],
    [
      'relative cgroup',
      (t) => t.replace('/hadoop-yarn', 'hadoop-yarn'),
      /workloads\[1\]\.match\.cgroup: expected an absolute cgroup path/,
    ],
    [
      'bad unit name',
      (t) => t.replace('{ cgroup: /kafka.slice }', '{ systemdUnit: kafka }'),
      /workloads\[0\]\.match\.systemdUnit: expected a unit name ending in \.service/,
    ],
    [
      'bad near',
      (t) => t.replace('    cores: 2', '    cores: 2\n    near: [eth0]'),
      /workloads\[0\]\.near\[0\]: expected nic:NAME, disk:NAME or scsi:hostN/,
    ],
    [
      'bad reserved cpus',
      (t) => t.replace('{ cores: 1 }', '{ cpus: "0-" }'),
      /reserved\.cpus: expected a CPU list like "0-3,8"; got "0-"/,
    ],
    [
      'both reserved forms',
      (t) => t.replace('{ cores: 1 }', '{ cores: 1, cpus: "0" }'),
      /reserved: set exactly one of cores .* or cpus/,
    ],
    [
      'bad cpu weight',
      (t) => t.replace('    memory: { high', '    cpu: { weight: 0 }\n    memory: { high'),
      /workloads\[1\]\.cpu\.weight: expected a whole number from 1 to 10000/,
    ],
    [
      'no exclusive workload',
      (t) => t.replace('class: exclusive', 'class: batch').replace('    cores: 2\n', ''),
      /workloads: no workload has class: exclusive/,
    ],
    [
      'empty workloads',
      () => 'apiVersion: isolate/v1\nkind: HostPolicy\nworkloads: []\n',
      /:3:12: workloads: expected a non-empty list of workloads/,
    ],
    ['YAML syntax error', (t) => t.replace('cores: 2', 'cores: [2'), /:\d+:\d+: YAML syntax error: /],
    [
      'duplicate key',
      (t) => t.replace('    cores: 2', '    cores: 2\n    cores: 3'),
      /YAML syntax error: Map keys must be unique/,
    ],
    ['not a mapping', () => '- just\n- a list\n', /\(document\): expected a HostPolicy mapping/],
  ];
  it.each(cases)('%s', (name, edit, pattern) => {
    const file = policy(name.replace(/\W+/g, '-'), edit(GOOD));
    expectOneLineError(
      isolate(['policy', 'validate', file]),
      new RegExp(`^isolate: ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`),
    );
    expectOneLineError(isolate(['policy', 'validate', file]), pattern);
  });

  it('accepts the good policy', () => {
    const r = isolate(['policy', 'validate', policy('good', GOOD)]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/ok \(2 workloads\)/);
  });
});

describe('policy errors that depend on the host', () => {
  const cases: [string, (t: string) => string, RegExp][] = [
    [
      'more cores than a node holds',
      (t) => t.replace('cores: 2', 'cores: 4'),
      /:7:12: workloads\[0\]\.cores: asks for 4 whole cores on one NUMA node, but the largest request that fits is 3 \(node 0/,
    ],
    [
      'protections above host memory',
      (t) => t.replace('low: 1G', 'low: 6G, min: 3G'),
      /workloads\[0\]\.memory: memory protections \(min \+ low\) of all workloads add up to 9G, more than the host's 8G/,
    ],
    [
      'reserved cpu that does not exist',
      (t) => t.replace('{ cores: 1 }', '{ cpus: "99" }'),
      /reserved\.cpus: cpu 99 is not an online CPU on this host \(online: 0-15\)/,
    ],
    [
      'mems on a node that does not exist',
      (t) => t.replace('memory: { low: 1G }', 'memory: { low: 1G, mems: "5" }'),
      /workloads\[0\]\.memory\.mems: node 5 has no memory on this host/,
    ],
  ];
  it.each(cases)('%s', (name, edit, pattern) => {
    const file = policy(`host-${name.replace(/\W+/g, '-')}`, edit(GOOD));
    expectOneLineError(isolate(['plan', '--dry-run', '--root', root, '--policy', file]), pattern);
    expectOneLineError(isolate(['policy', 'validate', '--root', root, file]), pattern);
  });
});

/** One node, two SMT2 cores: a tree small enough to damage by hand. */
const smallTree = () =>
  writeSysfs(
    synthTopology({
      packages: 1,
      nodesPerPackage: 1,
      coresPerNode: 2,
      threads: [2],
      siblings: 'adjacent',
      l3PerNode: 1,
    }),
  );

describe('sysfs and flag errors', () => {
  it('a missing policy file', () => {
    expectOneLineError(
      isolate(['plan', '--dry-run', '--root', root, '--policy', '/nonexistent.yaml']),
      /\/nonexistent\.yaml: cannot read policy \(no such file\)/,
    );
  });
  it('a --root that does not exist', () => {
    expectOneLineError(
      isolate(['plan', '--dry-run', '--root', '/nonexistent-root']),
      /--root \/nonexistent-root: no such directory/,
    );
  });
  it('a --root without sysfs', () => {
    const empty = mkdtempSync(join(tmpdir(), 'isolate-empty-'));
    expectOneLineError(
      isolate(['topology', '--root', empty]),
      /sys\/devices\/system\/cpu: no cpuN directories found; --root must point at/,
    );
  });
  it('a malformed sibling list', () => {
    const broken = smallTree();
    writeFileSync(join(broken, 'sys/devices/system/cpu/cpu0/topology/core_cpus_list'), '0-\n');
    expectOneLineError(
      isolate(['topology', '--root', broken]),
      /cpu0\/topology\/core_cpus_list: malformed cpu list "0-": bad element "0-"; the sysfs tree looks damaged/,
    );
  });
  it('a malformed node meminfo', () => {
    const broken = smallTree();
    writeFileSync(join(broken, 'sys/devices/system/node/node0/meminfo'), 'garbage\n');
    expectOneLineError(isolate(['topology', '--root', broken]), /node0\/meminfo: no MemTotal line/);
  });
  it('an unknown flag', () => {
    expectOneLineError(isolate(['plan', '--frobnicate']), /unknown option '--frobnicate'/);
  });
  it('an unknown command', () => {
    expectOneLineError(isolate(['frobnicate']), /unknown command 'frobnicate'/);
  });
  it('a missing argument', () => {
    expectOneLineError(isolate(['policy', 'validate']), /missing required argument 'file'/);
  });
});
