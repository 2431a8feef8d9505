#!/usr/bin/env node
// A scratch host to try isolate on without touching this machine (docs/try-it.md): a directory that
// reads like a Linux host under `--root`. A captured sysfs tree from test/fixtures/sysfs (with its IRQ
// overlay from test/fixtures/irq when there is one), a writable stand-in for the cgroup2 mount in
// which the groups a policy names already exist with the kernel's defaults, a /proc with a Kafka
// broker and a YARN container, and a policy at etc/isolate/policy.yaml.
//
// It has no kernel: what the kernel does after a write (cpuset.cpus.effective, the CPUs a thread may
// run on) is played by `settle`, run after apply and rollback. The test suite builds its hosts with
// the same functions (test/support/fake-host.ts), so what the page shows is what the tests check.
//
//   node scripts/scratch-host.mjs new DIR [--host qemu-2s-smt2|intel-2s-96cpu|...]
//   node scripts/scratch-host.mjs settle DIR
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'fixtures');

const CONTROLLERS = 'cpuset cpu io memory pids';
const ENABLED = 'cpuset cpu memory';

/** A group's interface files with the kernel's defaults, controllers `ENABLED` delegated to it. */
export const GROUP_FILES = {
  'cgroup.controllers': ENABLED,
  'cgroup.subtree_control': '',
  'cgroup.procs': '',
  'cgroup.events': 'populated 0\nfrozen 0',
  'cpuset.cpus': '',
  'cpuset.mems': '',
  'cpuset.cpus.partition': 'member',
  'cpu.weight': '100',
  'cpu.idle': '0',
  'memory.current': '0',
  'memory.min': '0',
  'memory.low': '0',
  'memory.high': 'max',
  'memory.max': 'max',
};

function group(dir) {
  mkdirSync(dir, { recursive: true });
  for (const [name, value] of Object.entries(GROUP_FILES)) writeFileSync(join(dir, name), `${value}\n`);
}

/**
 * `fixture`'s sysfs tree under `root` with a cgroup2 stand-in holding `groups`, each with the
 * kernel's defaults; parents of nested groups delegate the controllers to them, as systemd does.
 */
export function buildHost(fixture, groups, root) {
  // verbatimSymlinks: sysfs links are relative (class/net/X → ../../devices/...) and must stay inside root.
  cpSync(join(FIXTURES, 'sysfs', fixture, 'sys'), join(root, 'sys'), {
    recursive: true,
    verbatimSymlinks: true,
  });
  const cg = join(root, 'sys/fs/cgroup');
  mkdirSync(cg, { recursive: true });
  writeFileSync(join(cg, 'cgroup.controllers'), `${CONTROLLERS}\n`);
  writeFileSync(join(cg, 'cgroup.subtree_control'), `${ENABLED}\n`);
  for (const g of groups) group(join(cg, g));
  // No processes yet: check audits an empty thread list, process matches find nothing to move.
  mkdirSync(join(root, 'proc'), { recursive: true });
  for (const g of groups.filter((g) => groups.some((o) => o.startsWith(`${g}/`))))
    writeFileSync(join(cg, g, 'cgroup.subtree_control'), `${ENABLED}\n`);
  return root;
}

/** Lays an overlay from test/fixtures (`irq/qemu-2s-smt2`, `disks/r630-kafka`) over a root: its files win. */
export function overlay(root, name) {
  cpSync(join(FIXTURES, name), root, { recursive: true, verbatimSymlinks: true, force: true });
  return root;
}

function put(root, rel, content) {
  const f = join(root, rel);
  mkdirSync(dirname(f), { recursive: true });
  writeFileSync(f, content);
}

/** /proc/<pid>/{cgroup,task/<tid>/status} as the kernel shows them (the fields check reads). */
export function putProcesses(root, procs) {
  for (const p of procs) {
    put(root, `proc/${p.pid}/cgroup`, `0::${p.cgroup}\n`);
    for (const tid of p.threads) {
      put(
        root,
        `proc/${p.pid}/task/${tid}/status`,
        `Name:\t${p.name}\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t${p.pid}\nPid:\t${tid}\nPPid:\t${p.ppid ?? 1}\nKthread:\t0\nCpus_allowed_list:\t${p.cpus}\nMems_allowed_list:\t0-1\n`,
      );
    }
  }
}

/**
 * The kernel reports cpuset.cpus.effective: a cgroup's own cpuset.cpus, or its parent's effective
 * CPUs while that is empty. The stand-in has no kernel, so this writes it, from `online` down.
 */
export function settleEffective(root, online) {
  const cg = join(root, 'sys/fs/cgroup');
  const walk = (dir, parent) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      const d = join(dir, e.name);
      const file = join(d, 'cpuset.cpus');
      const own = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
      const effective = own === '' ? parent : own;
      writeFileSync(join(d, 'cpuset.cpus.effective'), `${effective}\n`);
      walk(d, effective);
    }
  };
  walk(cg, online);
}

/**
 * What the kernel does after apply or rollback: each cgroup's effective CPUs, then each thread's
 * Cpus_allowed_list, which is its cgroup's effective CPUs (the threads here never set their own).
 */
export function settle(root) {
  const online = readFileSync(join(root, 'sys/devices/system/cpu/online'), 'utf8').trim();
  settleEffective(root, online);
  const proc = join(root, 'proc');
  for (const pid of readdirSync(proc).filter((n) => /^\d+$/.test(n))) {
    const cgroupFile = join(proc, pid, 'cgroup');
    if (!existsSync(cgroupFile)) continue;
    const path = readFileSync(cgroupFile, 'utf8').trim().replace(/^0::/, '');
    const effectiveFile = join(root, 'sys/fs/cgroup', path, 'cpuset.cpus.effective');
    const cpus = existsSync(effectiveFile) ? readFileSync(effectiveFile, 'utf8').trim() : online;
    for (const tid of readdirSync(join(proc, pid, 'task'))) {
      const status = join(proc, pid, 'task', tid, 'status');
      const text = readFileSync(status, 'utf8');
      writeFileSync(status, text.replace(/^Cpus_allowed_list:\t.*$/m, `Cpus_allowed_list:\t${cpus}`));
    }
  }
}

/** docs/try-it.md's policy: Kafka on one whole core near its NIC's node, YARN's containers batch. */
export const TRY_POLICY = `apiVersion: isolate/v1
kind: HostPolicy
workloads:
  - {name: kafka, class: exclusive, cores: 1, match: {cgroup: /kafka.slice}}
  - {name: yarn, class: batch, match: {cgroup: /hadoop-yarn}}
`;

const TRY_GROUPS = [
  'init.scope',
  'system.slice',
  'user.slice',
  'kafka.slice',
  'kafka.slice/kafka.service',
  'hadoop-yarn',
  'hadoop-yarn/container_01',
];

/** A scratch host ready to try: `fixture`'s tree, its IRQs, a running broker and container, a policy. */
export function newScratchHost(root, fixture = 'qemu-2s-smt2') {
  if (!existsSync(join(FIXTURES, 'sysfs', fixture))) {
    const known = readdirSync(join(FIXTURES, 'sysfs')).filter((n) => !n.endsWith('.md'));
    throw new Error(`--host ${fixture}: no such fixture; one of ${known.join(', ')}`);
  }
  if (existsSync(root) && readdirSync(root).length > 0) {
    throw new Error(`${root}: not empty; give a new or empty directory`);
  }
  buildHost(fixture, TRY_GROUPS, root);
  if (existsSync(join(FIXTURES, 'irq', fixture))) overlay(root, `irq/${fixture}`);
  const online = readFileSync(join(root, 'sys/devices/system/cpu/online'), 'utf8').trim();
  putProcesses(root, [
    { pid: 1, name: 'systemd', cgroup: '/init.scope', threads: [1], cpus: online, ppid: 0 },
    { pid: 2100, name: 'java', cgroup: '/kafka.slice/kafka.service', threads: [2100, 2101], cpus: online },
    { pid: 3300, name: 'java', cgroup: '/hadoop-yarn/container_01', threads: [3300], cpus: online },
  ]);
  settle(root);
  put(root, 'etc/isolate/policy.yaml', TRY_POLICY);
  return root;
}

function main(argv) {
  const [command, dir, ...rest] = argv;
  const usage =
    'usage: node scripts/scratch-host.mjs new DIR [--host FIXTURE] | node scripts/scratch-host.mjs settle DIR';
  if (!dir || (command !== 'new' && command !== 'settle')) throw new Error(usage);
  const root = resolve(dir);
  if (command === 'settle') {
    settle(root);
    process.stdout.write(
      `${root}: cpuset.cpus.effective and each thread's CPUs are what the kernel would make them\n`,
    );
    return;
  }
  const at = rest.indexOf('--host');
  const fixture = at >= 0 ? rest[at + 1] : 'qemu-2s-smt2';
  if (fixture === undefined) throw new Error(usage);
  newScratchHost(root, fixture);
  process.stdout.write(
    `${root}: a scratch host (${fixture}) with a cgroup v2 stand-in, a Kafka broker (pid 2100) in /kafka.slice, a YARN container (pid 3300) in /hadoop-yarn and the policy etc/isolate/policy.yaml\nnext: isolate plan --dry-run --root ${root}\n`,
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`scratch-host: ${err.message}\n`);
    process.exitCode = 1;
  }
}
