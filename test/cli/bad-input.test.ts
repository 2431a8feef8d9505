// Every error a user can make with a policy, a sysfs tree or a flag: one line on stderr naming the
// file/field and the fix, exit code 1, no stack trace, nothing written.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { synthTopology, TWO_NODES_SMT2_SPLIT } from '../support/synthetic.js';
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
  root = writeSysfs(synthTopology({ ...TWO_NODES_SMT2_SPLIT, nodeMemoryBytes: 4 * 1024 ** 3 }));
});

function expectOneLineError(r: ReturnType<typeof isolate>, pattern: RegExp): void {
  expect(r.code, r.stderr).toBe(1);
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(lines[0]).toMatch(pattern);
}

/** Exit 1 and one error line (warnings about the host may come with it on stderr), no stack trace. */
function expectOneLineErrorAmong(r: ReturnType<typeof isolate>, pattern: RegExp): void {
  expect(r.code, r.stderr).toBe(1);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  const errors = r.stderr.split('\n').filter((l) => l.startsWith('isolate: '));
  expect(errors, r.stderr).toHaveLength(1);
  expect(errors[0]).toMatch(pattern);
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
      // Beside cores (cpus instead of cores would be two mistakes, both reported: below).
      (t) => t.replace('    cores: 2', '    cores: 2\n    cpus: 2'),
      /:8:5: workloads\[0\]\.cpus: unknown field "cpus"/,
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
      /:3:12: workloads: the list is empty; add at least one workload/,
    ],
    // Beyond 2^53 − 1 YAML rounds a number (99999999999999999999 reads as 100000000000000000000).
    [
      'cores beyond 2^53 − 1',
      (t) => t.replace('cores: 2', 'cores: 99999999999999999999'),
      /:7:12: workloads\[0\]\.cores: got a number above 9007199254740991 \(2\^53 − 1\), the largest whole number a policy holds exactly; expected a whole number of physical cores, 1 or more$/,
    ],
    [
      'reserved cores beyond 2^53 − 1',
      (t) => t.replace('{ cores: 1 }', '{ cores: 99999999999999999999 }'),
      /:3:20: reserved\.cores: got a number above 9007199254740991 .*; expected a whole number of cores, 0 or more$/,
    ],
    [
      'a size beyond 2^53 − 1 bytes',
      (t) => t.replace('low: 1G', 'low: 99999999999999999999G'),
      /:9:20: workloads\[0\]\.memory\.low: size "99999999999999999999G" is too large: at most 9007199254740991 bytes \(just under 8P\); write a smaller size$/,
    ],
    ['YAML syntax error', (t) => t.replace('cores: 2', 'cores: [2'), /:\d+:\d+: YAML syntax error: /],
    [
      'duplicate key',
      (t) => t.replace('    cores: 2', '    cores: 2\n    cores: 3'),
      /YAML syntax error: Map keys must be unique/,
    ],
    [
      'an empty reserved CPU list',
      (t) => t.replace('reserved: { cores: 1 }', 'reserved: { cpus: "" }'),
      /:3:\d+: reserved\.cpus: expected a non-empty CPU list like "0-3,8"$/,
    ],
    ['not a mapping', () => '- just\n- a list\n', /\(document\): expected a HostPolicy mapping/],
    // yaml warns about a collection used as a key on its own (stderr): only isolate's line is printed.
    ['a list as a key', (t) => `? [a, b]\n: 1\n${t}`, /:1:1: \[ a, b \]: unknown field/],
  ];
  it.each(cases)('%s', (name, edit, pattern) => {
    const file = policy(name.replace(/\W+/g, '-'), edit(GOOD));
    expectOneLineError(
      isolate(['policy', 'validate', file]),
      new RegExp(`^isolate: ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`),
    );
    expectOneLineError(isolate(['policy', 'validate', file]), pattern);
  });

  it('names every mistake in one run, each on its own line with its location and fix', () => {
    // Five mistakes in three places: the top level, the first workload (three) and the second.
    const text = GOOD.replace('apiVersion: isolate/v1', 'apiVersion: isolate/v2')
      .replace('    cores: 2', '    cpus: 2')
      .replace('    memory: { low: 1G }', '    memory: { low: 1Q }')
      .replace('    class: batch', '    class: bulk');
    const file = policy('five-mistakes', text);
    const r = isolate(['policy', 'validate', file]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    const lines = r.stderr.trimEnd().split('\n');
    const at = (re: string) => new RegExp(`^isolate: ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:${re}`);
    expect(lines, r.stderr).toHaveLength(5);
    expect(lines[0]).toMatch(at('1:13: apiVersion: expected "isolate/v1"; got "isolate/v2"'));
    expect(lines[1]).toMatch(at('7:5: workloads\\[0\\]\\.cpus: unknown field "cpus"'));
    expect(lines[2]).toMatch(at('\\d+:\\d+: workloads\\[0\\]\\.cores: exclusive workloads need cores'));
    expect(lines[3]).toMatch(at('9:20: workloads\\[0\\]\\.memory\\.low: '));
    expect(lines[4]).toMatch(
      at('11:12: workloads\\[1\\]\\.class: expected "exclusive" or "batch"; got "bulk"'),
    );
    // --json: one document, every error in it.
    const j = isolate(['plan', '--dry-run', '--json', '--root', root, '--policy', file]);
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout).error).toMatch(/apiVersion: .* \(and 4 more: .*workloads\[1\]\.class: /);
  });

  it('accepts the good policy', () => {
    const r = isolate(['policy', 'validate', policy('good', GOOD)]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/ok \(2 workloads\)/);
  });

  it('accepts the largest exact numbers: cores and reserved cores 2^53 − 1, sizes up to 8191T', () => {
    const edge = GOOD.replace('cores: 2', 'cores: 9007199254740991')
      .replace('{ cores: 1 }', '{ cores: 9007199254740991 }')
      .replace('low: 1G', 'low: 9007199254740991')
      .replace('high: 2G, max: 3G', 'high: 8191T, max: 8191T');
    const r = isolate(['policy', 'validate', policy('edge', edge)]);
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

  // The role installs a policy only when validate passes on the host and drops its stderr: what the
  // policy names and the host lacks is an error there, every one in one run, each with its location.
  it('validate --root refuses a NIC the host lacks (near and irqs.nics), every one in one run', () => {
    const file = policy(
      'host-nic-typo',
      GOOD.replace('cores: 2\n', 'cores: 2\n    near: [nic:eht0]\n    irqs: { nics: [ens3f9] }\n'),
    );
    const r = isolate(['policy', 'validate', '--root', root, file]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stderr.split('\n').filter((l) => l.startsWith('isolate: '))).toEqual([
      `isolate: ${file}:8:12: workloads[0].near[0]: nic:eht0 is not on this host (NICs: eth0); correct the name or remove it`,
      `isolate: ${file}:9:20: workloads[0].irqs.nics[0]: NIC ens3f9 is not on this host (NICs: eth0); correct the name or remove it`,
    ]);
    // Without --root the file alone is checked: it is well formed.
    expect(isolate(['policy', 'validate', file]).code).toBe(0);
  });

  it('validate --root refuses a kafkaConfig it cannot read and a data directory that does not exist', () => {
    const conf = policy(
      'host-kafka-config',
      GOOD.replace('cores: 2\n', 'cores: 2\n    disks: { kafkaConfig: /etc/kafka/server.properties }\n'),
    );
    expectOneLineErrorAmong(
      isolate(['policy', 'validate', '--root', root, conf]),
      /:8:27: workloads\[0\]\.disks\.kafkaConfig: cannot read .*\/etc\/kafka\/server\.properties \(ENOENT at .*\): Kafka's log directories are unknown/,
    );
    const paths = policy(
      'host-data-path',
      GOOD.replace('cores: 2\n', 'cores: 2\n    disks: { paths: [/data9/kafka-logs] }\n'),
    );
    expectOneLineErrorAmong(
      isolate(['policy', 'validate', '--root', root, paths]),
      /:8:22: workloads\[0\]\.disks\.paths\[0\]: \/data9\/kafka-logs does not exist \(\/data9 is missing\): a typo, or its disk is not mounted/,
    );
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

// ---- issue 9: hardening. Each case: exit code, one line naming the file/field, no stack trace,
// bounded output, and an end (spawnSync's timeout turns a hang into a failure, not a wait).

/** A refusal: `code`, one line on stderr matching `pattern`, small output, no stack, no hang. */
function expectRefusal(r: ReturnType<typeof isolate>, code: number, pattern: RegExp): void {
  expect(r.code, `${r.stderr}\n(null: killed after the timeout, i.e. it hung)`).toBe(code);
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr.slice(0, 2000)).toHaveLength(1);
  expect(r.stderr).not.toMatch(/\n\s+at |internal error|ISOLATE_DEBUG|parseAllDocuments|call stack/);
  expect(r.stderr.length + r.stdout.length).toBeLessThan(4096);
  expect(lines[0]).toMatch(pattern);
}

const run = (args: string[], env: Record<string, string> = {}) =>
  isolate(args, { env: { ISOLATE_LOG: 'off', ...env }, timeout: 20_000 });

describe('hardening: isolate writes only regular files of its own', () => {
  const planArgs = () => ['plan', '--root', root, '--policy', policy('h-good', GOOD)];
  it('refuses --out through a symlink, and leaves the link alone', () => {
    const target = join(dir, 'victim.txt');
    writeFileSync(target, 'precious\n');
    const link = join(dir, 'out-link.json');
    symlinkSync(target, link);
    expectRefusal(
      run([...planArgs(), '--out', link]),
      1,
      /--out .*out-link\.json: refusing to replace a symbolic link/,
    );
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe('precious\n');
  });
  it('refuses --out onto a FIFO, and leaves it a FIFO', () => {
    const fifo = join(dir, 'out.fifo');
    execFileSync('mkfifo', [fifo]);
    expectRefusal(run([...planArgs(), '--out', fifo]), 1, /out\.fifo: refusing to replace a FIFO/);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
  });
  it('refuses --out onto a directory', () => {
    const d = mkdtempSync(join(dir, 'outdir-'));
    expectRefusal(run([...planArgs(), '--out', d]), 1, /refusing to replace a directory/);
  });
  it('refuses --out in a missing directory, and creates none', () => {
    const out = join(dir, 'no-such-dir', 'sub', 'plan.json');
    expectRefusal(run([...planArgs(), '--out', out]), 1, /directory .*no-such-dir\/sub does not exist/);
    expect(existsSync(join(dir, 'no-such-dir'))).toBe(false);
  });
  it('still creates its own state directory for the default plan path', () => {
    const host = writeSysfs(
      synthTopology({
        packages: 1,
        nodesPerPackage: 1,
        coresPerNode: 4,
        threads: [2],
        siblings: 'adjacent',
        l3PerNode: 1,
      }),
    );
    const r = run(['plan', '--root', host, '--policy', policy('h-good', GOOD)]);
    expect(r.code, r.stderr).toBe(0);
    expect(lstatSync(join(host, 'var/lib/isolate/plan.json')).isFile()).toBe(true);
  });
  it('refuses --dry-run with --out instead of ignoring --out', () => {
    const out = join(dir, 'dry.json');
    expectRefusal(
      run(['plan', '--dry-run', '--root', root, '--policy', policy('h-good', GOOD), '--out', out]),
      1,
      /--out .*dry\.json: --dry-run writes nothing anywhere/,
    );
    expect(existsSync(out)).toBe(false);
  });
});

describe('hardening: contradictory sysfs is refused, naming both files', () => {
  const tree = () => smallTree();
  const cpu = (r: string, rel: string) => join(r, 'sys/devices/system/cpu', rel);
  const node = (r: string, rel: string) => join(r, 'sys/devices/system/node', rel);
  it('a sibling list naming a CPU whose own list disagrees', () => {
    // Two nodes: cpu2 claims cpu4 (a CPU of the other node) as its sibling; cpu4 does not agree.
    const r = writeSysfs(
      synthTopology({
        packages: 2,
        nodesPerPackage: 1,
        coresPerNode: 2,
        threads: [2],
        siblings: 'adjacent',
        l3PerNode: 1,
      }),
    );
    for (const f of ['core_cpus_list', 'thread_siblings_list'])
      writeFileSync(cpu(r, `cpu2/topology/${f}`), '2-4\n');
    expectRefusal(
      run(['plan', '--dry-run', '--root', r, '--policy', 'default']),
      1,
      /cpu\d\/topology\/core_cpus_list says "[\d,-]+" but .*cpu\d\/topology\/core_cpus_list says "[\d,-]+"; SMT sibling lists contradict/,
    );
  });
  it('online listing CPUs that have no directory', () => {
    const r = tree();
    writeFileSync(cpu(r, 'online'), '0-7\n');
    expectRefusal(
      run(['topology', '--root', r]),
      1,
      /cpu\/online lists CPUs 4-7 that have no directory in .*system\/cpu/,
    );
  });
  it('online and offline overlapping', () => {
    const r = tree();
    writeFileSync(cpu(r, 'offline'), '3\n');
    expectRefusal(run(['topology', '--root', r]), 1, /cpu\/online and .*cpu\/offline both list CPUs 3/);
  });
  it('an empty online list', () => {
    const r = tree();
    writeFileSync(cpu(r, 'online'), '\n');
    expectRefusal(run(['topology', '--root', r]), 1, /cpu\/online: empty/);
  });
  it('overlapping node cpulists', () => {
    const r = writeSysfs(
      synthTopology({
        packages: 2,
        nodesPerPackage: 1,
        coresPerNode: 2,
        threads: [2],
        siblings: 'adjacent',
        l3PerNode: 1,
      }),
    );
    writeFileSync(node(r, 'node1/cpulist'), '3-7\n');
    expectRefusal(run(['topology', '--root', r]), 1, /node1\/cpulist and .*node0\/cpulist both list cpu3/);
  });
  it('a node without meminfo', () => {
    const r = tree();
    rmSync(node(r, 'node0/meminfo'));
    expectRefusal(run(['topology', '--root', r]), 1, /node0\/meminfo: missing/);
  });
  it('a FIFO where a sysfs file is expected', () => {
    const r = tree();
    const f = cpu(r, 'cpu1/topology/core_cpus_list');
    rmSync(f);
    execFileSync('mkfifo', [f]);
    expectRefusal(
      run(['topology', '--root', r]),
      1,
      /cpu1\/topology\/core_cpus_list: cannot read \(a FIFO, not a regular file\)/,
    );
  });
  it('an oversized sysfs file', () => {
    const r = tree();
    writeFileSync(cpu(r, 'isolated'), `${'0,'.repeat(200_000)}0\n`);
    expectRefusal(run(['topology', '--root', r]), 1, /cpu\/isolated: cannot read \(larger than 256 KiB\)/);
  });
});

describe('hardening: impossible or ambiguous policies', () => {
  it('an exclusive cgroup inside the batch cgroup', () => {
    const f = policy('h-nested', GOOD.replace('/kafka.slice', '/hadoop-yarn/kafka'));
    expectRefusal(
      run(['policy', 'validate', f]),
      1,
      /workloads\[0\]\.match\.cgroup: \/hadoop-yarn\/kafka is inside \/hadoop-yarn, the cgroup of workloads\[1\] \(flink, batch\); under cgroup v2/,
    );
  });
  it('reserved cores beyond the host, without the invalid advice "lower cores to 0"', () => {
    const f = policy('h-reserved', GOOD.replace('{ cores: 1 }', '{ cores: 50 }'));
    const r = run(['plan', '--dry-run', '--root', root, '--policy', f]);
    expectRefusal(
      r,
      1,
      /reserved\.cores: reserves 50 cores per package, but the largest package has 4 cores.*set reserved\.cores to at most 3/,
    );
    expect(r.stderr).not.toMatch(/lower cores to 0/);
  });
  it('isolcpus covering every CPU, without "lower cores to 0"', () => {
    const r0 = smallTree();
    writeFileSync(join(r0, 'sys/devices/system/cpu/isolated'), '0-3\n');
    const f = policy(
      'h-isolated',
      GOOD.replace('{ cores: 1 }', '{ cores: 0 }').replace('cores: 2', 'cores: 1'),
    );
    const r = run(['plan', '--dry-run', '--root', r0, '--policy', f]);
    expectRefusal(r, 1, /workloads\[0\]\.cores: no whole core is free for kafka: .*boot-isolated CPUs 0-3/);
    expect(r.stderr).not.toMatch(/lower cores to 0/);
  });
  it('--root "" is not the current directory', () => {
    expectRefusal(run(['plan', '--dry-run', '--root', '']), 1, /--root: empty/);
  });
  it('"5GB" is refused as ambiguous, naming the field', () => {
    const f = policy('h-gb', GOOD.replace('low: 1G', 'low: 5GB'));
    expectRefusal(
      run(['policy', 'validate', f]),
      1,
      /workloads\[0\]\.memory\.low: "5GB" is ambiguous.*write 5G or 5GiB/,
    );
  });
  it('"5GiB" and "5G" are the same', () => {
    for (const v of ['5G', '5GiB']) {
      const r = run(['policy', 'validate', policy(`h-${v}`, GOOD.replace('low: 1G', `low: ${v}`))]);
      expect(r.code, r.stderr).toBe(0);
    }
  });
  it('a FIFO as the policy file', () => {
    const fifo = join(dir, 'policy.fifo');
    execFileSync('mkfifo', [fifo]);
    expectRefusal(
      run(['policy', 'validate', fifo]),
      1,
      /policy\.fifo: cannot read policy \(a FIFO, not a regular file\)/,
    );
  });
  it('a policy larger than 1 MiB', () => {
    const f = policy('h-big', `${GOOD}${'# padding\n'.repeat(120_000)}`);
    expectRefusal(run(['policy', 'validate', f]), 1, /h-big\.yaml: cannot read policy \(larger than 1 MiB\)/);
  });
  it('more workloads than a policy may hold', () => {
    const many = Array.from(
      { length: 300 },
      (_, i) => `  - name: w${i}\n    class: batch\n    match: { cgroup: /w${i} }\n`,
    ).join('');
    const f = policy('h-many', `${GOOD}${many}`);
    expectRefusal(run(['policy', 'validate', f]), 1, /workloads: 302 workloads; a policy holds at most 256/);
  });
  it('a huge string value is echoed short and escaped', () => {
    const f = policy(
      'h-long',
      GOOD.replace('class: bulk', '').replace('class: batch', `class: "${'x\\u0007'.repeat(100_000)}"`),
    );
    const r = run(['policy', 'validate', f]);
    expectRefusal(
      r,
      1,
      /workloads\[1\]\.class: expected "exclusive" or "batch"; got "x\\u0007x.*…" \(200000 characters\)/,
    );
  });
  it('a binary file', () => {
    const f = join(dir, 'h-binary.yaml');
    writeFileSync(f, Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3, 0xff]));
    expectRefusal(run(['policy', 'validate', f]), 1, /h-binary\.yaml: cannot read policy \(binary content/);
  });
  it('a UTF-16 file', () => {
    const f = join(dir, 'h-utf16.yaml');
    writeFileSync(f, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(GOOD, 'utf16le')]));
    expectRefusal(
      run(['policy', 'validate', f]),
      1,
      /h-utf16\.yaml: cannot read policy \(UTF-16 text; save it as UTF-8\)/,
    );
  });
  it('a YAML alias bomb, blamed on the file', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i++)
      bomb.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(', ')}]`,
      );
    const f = policy('h-bomb', `${bomb.join('\n')}\n`);
    expectRefusal(run(['policy', 'validate', f]), 1, /h-bomb\.yaml: YAML: the document has too many aliases/);
  });
  it('two YAML documents', () => {
    const f = policy('h-twodocs', `${GOOD}---\n${GOOD}`);
    expectRefusal(run(['policy', 'validate', f]), 1, /h-twodocs\.yaml:\d+:\d+: YAML: a second document/);
  });
  it('nesting deep enough to exhaust a stack', () => {
    const f = policy('h-deep', `workloads: ${'['.repeat(20_000)}${']'.repeat(20_000)}\n`);
    const r = run(['policy', 'validate', f]);
    expectRefusal(r, 1, /h-deep\.yaml(:\d+:\d+)?: (YAML|workloads)/);
  });
});

describe('hardening: errors that are the input, not the program', () => {
  it('a corrupt journal', () => {
    const r0 = smallTree();
    mkdirSync(join(r0, 'var/lib/isolate'), { recursive: true });
    writeFileSync(join(r0, 'var/lib/isolate/journal.json'), '{ not json');
    expectRefusal(
      run(['rollback', '--root', r0]),
      1,
      /journal .*journal\.json is unreadable \(not valid JSON\); inspect it/,
    );
    expectRefusal(
      run(['apply', '--yes', '--root', r0, '--policy', policy('h-good', GOOD)]),
      1,
      /journal .*journal\.json is unreadable/,
    );
  });
  it('".." in a saved plan\'s target', () => {
    const r0 = root;
    const planFile = join(dir, 'dotdot.json');
    const p = run(['plan', '--root', r0, '--policy', policy('h-good', GOOD), '--out', planFile, '--json']);
    expect(p.code, p.stderr).toBe(0);
    const saved = JSON.parse(readFileSync(planFile, 'utf8'));
    saved.changes[0].target = '/../../etc';
    writeFileSync(planFile, JSON.stringify(saved));
    expectRefusal(
      run(['apply', '--yes', '--root', r0, '--plan', planFile]),
      1,
      /--plan .*dotdot\.json: not a plan "isolate plan" saves: plan\.changes\[0\]\.target: "\/\.\.\/\.\.\/etc" leaves its tree/,
    );
  });
  it('ISOLATE_LOG_LEVEL=bogus', () => {
    expectRefusal(
      run(['rollback', '--root', smallTree()], { ISOLATE_LOG: 'json', ISOLATE_LOG_LEVEL: 'bogus' }),
      1,
      /ISOLATE_LOG_LEVEL="bogus": expected one of/,
    );
  });
  it('no command at all is a usage error', () => {
    const r = run([]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Usage: isolate/);
  });
});

describe('hardening: the bundled policy is only for dry runs', () => {
  it('plan --dry-run may fall back, with a notice', () => {
    const r = run(['plan', '--dry-run', '--root', root]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/using the bundled default policy/);
  });
  it('apply refuses without a policy the operator chose', () => {
    expectRefusal(
      run(['apply', '--yes', '--root', root]),
      1,
      /no policy: .*etc\/isolate\/policy\.yaml does not exist and no --policy was given; .*--policy default/,
    );
  });
  it('plan without --dry-run (it saves a plan to apply) refuses too', () => {
    expectRefusal(run(['plan', '--root', smallTree()]), 1, /no policy: /);
  });
  it('check refuses with UNKNOWN (3)', () => {
    const r = run(['check', '--root', root]);
    expectRefusal(r, 3, /^isolate: UNKNOWN: no policy: /);
    // A monitoring plugin's status is stdout's first line: one short line, never nothing.
    const out = r.stdout.split('\n');
    expect(out, r.stdout).toEqual([expect.stringMatching(/^UNKNOWN: no policy: /), '']);
    expect(out[0]!.length).toBeLessThanOrEqual(200);
  });
  it('--policy default is an explicit choice', () => {
    const r = run(['plan', '--dry-run', '--root', root, '--policy', 'default', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
  });
});

describe('hardening: monitoring and JSON contracts', () => {
  it('check: any failure is UNKNOWN (3) with one JSON document under --json', () => {
    const r = run(['check', '--json', '--root', root, '--policy', '/nonexistent.yaml']);
    expect(r.code, r.stderr).toBe(3);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ status: 'UNKNOWN', code: 3 });
    expect(doc.error).toMatch(/nonexistent\.yaml: cannot read policy/);
  });
  it('check: a bad flag is UNKNOWN (3) too', () => {
    const r = run(['check', '--frobnicate', '--json']);
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'UNKNOWN' });
  });
  /** A root with a MegaRAID HBA and a storcli that must never be reached: the lock comes first. */
  const raidRoot = () => {
    const r = mkdtempSync(join(tmpdir(), 'isolate-raidlock-'));
    mkdirSync(join(r, 'sys/class/scsi_host/host0'), { recursive: true });
    writeFileSync(join(r, 'sys/class/scsi_host/host0/proc_name'), 'megaraid_sas\n');
    mkdirSync(join(r, 'opt/MegaRAID/storcli'), { recursive: true });
    writeFileSync(join(r, 'opt/MegaRAID/storcli/storcli64'), '#!/bin/sh\necho "{}"\n', { mode: 0o755 });
    return r;
  };
  it('raid check: a lock path in a missing directory is UNKNOWN (3), named, with JSON', () => {
    const lock = join(dir, 'no-such-dir/raid.lock');
    const r = run(['raid', 'check', '--json', '--root', raidRoot()], { ISOLATE_RAID_LOCK: lock });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(
      /^isolate: UNKNOWN: RAID lock .*no-such-dir\/raid\.lock: cannot create it \(ENOENT\)/,
    );
    expect(r.stderr).not.toMatch(/internal error/);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'UNKNOWN', code: 3 });
  });
  it('raid check: a lock path that is a directory is named as such, not as another process', () => {
    const lock = mkdtempSync(join(dir, 'lockdir-'));
    const r = run(['raid', 'check', '--root', raidRoot()], { ISOLATE_RAID_LOCK: lock });
    expectRefusal(r, 3, /RAID lock .*lockdir-\w+: it exists and is not a regular file/);
  });
  it('apply --json prints one JSON document when it refuses', () => {
    const r0 = smallTree();
    mkdirSync(join(r0, 'var/lib/isolate'), { recursive: true });
    writeFileSync(join(r0, 'var/lib/isolate/journal.json'), '{ not json');
    const r = run(['apply', '--json', '--yes', '--root', r0, '--policy', policy('h-good', GOOD)]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({
      ok: false,
      exitCode: 1,
      error: expect.stringMatching(/journal\.json is unreadable/),
    });
  });
  it.each([
    [['topology', '--json', '--root', '/nonexistent-root']],
    [['plan', '--dry-run', '--json', '--root', '/nonexistent-root']],
    [['rollback', '--json', '--root', '/nonexistent-root']],
    [['raid', 'show', '--json', '--timeout', 'soon']],
    [['raid', 'parse', '--json', '--tool', 'storcli', '/nonexistent.json']],
  ])('%j prints one JSON document with the error', (args) => {
    const r = run(args);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: expect.any(String) });
  });
  it('raid parse refuses --root, which would do nothing: it reads only the files it is given', () => {
    for (const args of [
      ['raid', 'parse', '--root', root, '--tool', 'storcli', '/nonexistent.json'],
      ['--root', root, 'raid', 'parse', '--tool', 'storcli', '/nonexistent.json'],
    ]) {
      expectRefusal(run(args), 1, /raid parse: --root does not apply; .*drop --root/);
    }
    expectRefusal(
      run(['raid', 'parse', '--tool', 'storcli', '/nonexistent.json']),
      1,
      /raid parse: cannot read \/nonexistent\.json \(no such file\)/,
    );
  });
});

describe('hardening: what a user reads', () => {
  const oneNode = () =>
    writeSysfs(
      synthTopology({
        packages: 1,
        nodesPerPackage: 1,
        coresPerNode: 1,
        threads: [1],
        siblings: 'adjacent',
        l3PerNode: 1,
      }),
    );
  it('singular counts in topology and validate', () => {
    const r = run(['topology', '--root', oneNode()]);
    expect(r.stdout).toMatch(/1 online CPU \(0\), 1 physical core, 1 NUMA node, up to 1 thread per core/);
    const one = GOOD.replace(/ {2}- name: flink[\s\S]*$/, '');
    const v = run(['policy', 'validate', policy('h-one', one.replace('workloads:', 'workloads:'))]);
    expect(`${v.stdout}${v.stderr}`).not.toMatch(/\(1 workloads\)/);
  });
  it('the topology columns line up', () => {
    const r = run([
      'topology',
      '--root',
      writeSysfs(
        synthTopology({
          packages: 1,
          nodesPerPackage: 1,
          coresPerNode: 12,
          threads: [2],
          siblings: 'split',
          l3PerNode: 2,
        }),
      ),
    ]);
    const cols = r.stdout
      .split('\n')
      .filter((l) => l.includes('(L3'))
      .map((l) => l.indexOf('(L3'));
    expect(cols.length).toBeGreaterThan(4);
    expect(new Set(cols).size).toBe(1);
  });
  it('plan says why each node was chosen and that reserved CPUs are shared with batch', () => {
    const f = policy('h-good', GOOD);
    const text = run(['plan', '--dry-run', '--root', root, '--policy', f]);
    expect(text.stdout).toMatch(/kafka[\s\S]*why: node \d: (most free whole cores|lowest id)/);
    expect(text.stdout).toMatch(
      /flink[\s\S]*why: every online CPU the exclusive workloads leave, including the reserved housekeeping CPUs/,
    );
    const json = JSON.parse(run(['plan', '--dry-run', '--json', '--root', root, '--policy', f]).stdout);
    expect(json.allocation.kafka.reason).toMatch(/^node \d: /);
    expect(json.reserved.reason).toMatch(/shared by batch workloads/);
  });
  it('check spells out what it could not read instead of "?" and "-"', () => {
    const r0 = smallTree();
    mkdirSync(join(r0, 'proc'), { recursive: true });
    const f = policy('h-check', GOOD.replace('cores: 2', 'cores: 1').replace('{ cores: 1 }', '{ cores: 0 }'));
    const r = run(['check', '--root', r0, '--policy', f]);
    expect(r.stdout).toMatch(/effective unknown, cpuset\.cpus\.effective not readable/);
    expect(r.stdout).toMatch(/partition n\/a, no cpuset\.cpus\.partition/);
    expect(r.stdout).not.toMatch(/effective \?|partition -/);
  });
  it('memory sizes in errors are human', () => {
    const f = policy('h-mem', GOOD.replace('low: 1G', 'low: 6G, min: 3G'));
    const r = run(['plan', '--dry-run', '--root', root, '--policy', f]);
    expect(r.stderr).toMatch(/add up to 9G, more than the host's 8G/);
    expect(r.stderr).not.toMatch(/\d{9,} bytes/);
  });
});
