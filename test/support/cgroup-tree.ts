// A host root for agent and apply tests: a real sysfs fixture plus a cgroup2 tree of plain files in
// which the policy's cgroups already exist (plain files cannot grow cgroup interface files on mkdir).
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const FIXTURES = join(import.meta.dirname, '../fixtures/sysfs');

export function fakeCgroupHost(groups: string[], fixture = 'qemu-2s-smt2'): { root: string; cg: string } {
  const root = mkdtempSync(join(tmpdir(), 'isolate-host-'));
  cpSync(join(FIXTURES, fixture), root, { recursive: true });
  const cg = join(root, 'sys/fs/cgroup');
  mkdirSync(cg, { recursive: true });
  writeFileSync(join(cg, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
  writeFileSync(join(cg, 'cgroup.subtree_control'), 'cpuset cpu memory\n');
  for (const g of groups) {
    mkdirSync(join(cg, g));
    for (const f of ['cpuset.cpus', 'cpuset.mems', 'cgroup.subtree_control'])
      writeFileSync(join(cg, g, f), '\n');
    writeFileSync(join(cg, g, 'cpuset.cpus.partition'), 'member\n');
    writeFileSync(join(cg, g, 'cgroup.events'), 'populated 0\nfrozen 0\n');
  }
  return { root, cg };
}
