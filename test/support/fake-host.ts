/**
 * A whole host under one directory for commands that write (apply, the Ansible role): a captured sysfs
 * tree plus a writable stand-in for the cgroup2 mount. cgroupfs's own semantics ("+cpuset" in
 * subtree_control, interface files appearing on mkdir) are not emulated: the groups the policies name
 * exist already, controllers enabled, with the kernel's defaults in their interface files, so apply
 * only writes values into existing files and reads them back. Kernel behaviour is proven in test/vm.
 */
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const FIXTURES = join(import.meta.dirname, '../fixtures/sysfs');
const OVERLAYS = join(import.meta.dirname, '../fixtures');

/** Top-level and nested groups of the hosts the example policies describe. */
export const DEFAULT_GROUPS = [
  'init.scope',
  'system.slice',
  'system.slice/kafka.service',
  'system.slice/storm-supervisor.service',
  'user.slice',
  'kafka.slice',
  'hadoop-yarn',
  'batch.slice',
  'isolate-kafka-a',
  'isolate-kafka-b',
];

const CONTROLLERS = 'cpuset cpu io memory pids';
const ENABLED = 'cpuset cpu memory';

/** A group's interface files with the kernel's defaults, controllers `ENABLED` delegated to it. */
export const GROUP_FILES: Readonly<Record<string, string>> = {
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

function group(dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (const [name, value] of Object.entries(GROUP_FILES)) writeFileSync(join(dir, name), `${value}\n`);
}

export function makeFakeHost(
  fixture: string,
  groups = DEFAULT_GROUPS,
  root = mkdtempSync(join(tmpdir(), 'isolate-host-')),
): string {
  // verbatimSymlinks: sysfs links are relative (class/net/X → ../../devices/...) and must stay inside root.
  cpSync(join(FIXTURES, fixture, 'sys'), join(root, 'sys'), { recursive: true, verbatimSymlinks: true });
  const cg = join(root, 'sys/fs/cgroup');
  mkdirSync(cg, { recursive: true });
  writeFileSync(join(cg, 'cgroup.controllers'), `${CONTROLLERS}\n`);
  writeFileSync(join(cg, 'cgroup.subtree_control'), `${ENABLED}\n`);
  for (const g of groups) group(join(cg, g));
  // No processes: check audits an empty thread list, process matches find nothing to move.
  mkdirSync(join(root, 'proc'), { recursive: true });
  // Parents of nested groups delegate the controllers to them, as systemd does for system.slice.
  for (const g of groups.filter((g) => groups.some((o) => o.startsWith(`${g}/`))))
    writeFileSync(join(cg, g, 'cgroup.subtree_control'), `${ENABLED}\n`);
  return root;
}

/** Lays an overlay from test/fixtures (`disks/r630-kafka`, `irq/qemu-2s-smt2`) over a host root: its files win. */
export function overlayFixture(root: string, overlay: string): string {
  cpSync(join(OVERLAYS, overlay), root, { recursive: true, verbatimSymlinks: true, force: true });
  return root;
}

/** The Dell R630 of test/fixtures/disks/r630-kafka: its CPU tree and its Kafka disks (block devices, mounts), no cgroups. */
export function r630DisksRoot(root = mkdtempSync(join(tmpdir(), 'isolate-r630-'))): string {
  cpSync(join(FIXTURES, 'intel-2s-ht-split/sys/devices/system'), join(root, 'sys/devices/system'), {
    recursive: true,
  });
  return overlayFixture(root, 'disks/r630-kafka');
}
