/**
 * A whole host under one directory for commands that write (apply, the Ansible role): a captured sysfs
 * tree plus a writable stand-in for the cgroup2 mount. cgroupfs's own semantics ("+cpuset" in
 * subtree_control, interface files appearing on mkdir) are not emulated: the groups the policies name
 * exist already, controllers enabled, with the kernel's defaults in their interface files, so apply
 * only writes values into existing files and reads them back. Kernel behaviour is proven in test/vm.
 */
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// The builders are docs/try-it.md's scratch host's: what a newcomer tries is what the tests check.
import { buildHost, GROUP_FILES as SCRATCH_GROUP_FILES, overlay } from '../../scripts/scratch-host.mjs';

const FIXTURES = join(import.meta.dirname, '../fixtures/sysfs');

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

/** A group's interface files with the kernel's defaults, controllers `cpuset cpu memory` delegated to it. */
export const GROUP_FILES: Readonly<Record<string, string>> = SCRATCH_GROUP_FILES;

export function makeFakeHost(
  fixture: string,
  groups = DEFAULT_GROUPS,
  root = mkdtempSync(join(tmpdir(), 'isolate-host-')),
): string {
  return buildHost(fixture, groups, root);
}

/** Lays an overlay from test/fixtures (`disks/r630-kafka`, `irq/qemu-2s-smt2`) over a host root: its files win. */
export function overlayFixture(root: string, name: string): string {
  return overlay(root, name);
}

/** The Dell R630 of test/fixtures/disks/r630-kafka: its CPU tree and its Kafka disks (block devices, mounts), no cgroups. */
export function r630DisksRoot(root = mkdtempSync(join(tmpdir(), 'isolate-r630-'))): string {
  cpSync(join(FIXTURES, 'intel-2s-ht-split/sys/devices/system'), join(root, 'sys/devices/system'), {
    recursive: true,
  });
  return overlayFixture(root, 'disks/r630-kafka');
}
