// CPUs that are possible but not present. POWER kernels list them in a node's cpulist (the POWER9
// tree, test/fixtures/sysfs/power9-2s-smt4): they are ignored with a note, not taken for a
// contradiction. What no real kernel can produce is still refused.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/model/errors.js';
import { readTopology } from '../../src/topology/read.js';
import { isolate } from '../cli/run.js';
import { synthTopology } from '../support/synthetic.js';
import { writeSysfs } from '../support/sysfs.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/sysfs');
const POWER9 = join(FIXTURES, 'power9-2s-smt4');
const NOTE = "node 0's cpulist names cpus 128-159, which are not present; ignored";

describe('POWER9: node 0 lists possible CPUs that are not present', () => {
  it('plans with the bundled policy: whole SMT4 cores on one node, and says which CPUs it ignored', () => {
    const r = isolate(['plan', '--dry-run', '--root', POWER9, '--policy', 'default']);
    expect(r.code, r.stderr).toBe(0);
    // At INFO: under Notes, not among the warnings.
    expect(r.stdout).toMatch(new RegExp(`\\nNotes:\\n  - ${NOTE}\\n`));
    expect(r.stdout).not.toMatch(/contradicts/);
    const warnings = r.stdout.slice(r.stdout.indexOf('Warnings:'));
    expect(warnings.slice(0, warnings.indexOf('\n\n'))).not.toContain(NOTE);

    const j = isolate(['plan', '--dry-run', '--json', '--root', POWER9, '--policy', 'default']);
    expect(j.code, j.stderr).toBe(0);
    const plan = JSON.parse(j.stdout);
    expect(plan.notes).toEqual([NOTE]);
    expect(plan.warnings).not.toContain(NOTE);
    const kafka = plan.allocation.kafka;
    expect(kafka.nodes).toHaveLength(1);
    // 50 % of a node's 16 cores: 8 whole cores of 4 threads, none of them a not-present CPU.
    expect(kafka.cores).toHaveLength(8);
    expect(kafka.cpus).toEqual(kafka.cores.flatMap((c: number) => [c, c + 1, c + 2, c + 3]));
    expect(kafka.cpus.every((c: number) => c < 128)).toBe(true);
  });

  it('topology shows both chips and the note', () => {
    const r = isolate(['topology', '--root', POWER9]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^128 online CPUs \(0-127\), 32 physical cores, 2 NUMA nodes, up to 4 threads/m);
    expect(r.stdout).toMatch(/^package 8$/m);
    expect(r.stdout).toContain(`note: ${NOTE}`);
    expect(r.stdout).not.toMatch(/^warning:/m);
  });

  it('the reader keeps only present CPUs on node 0', () => {
    const t = readTopology(POWER9);
    expect(t.nodes.find((n) => n.id === 0)!.cpus.toString()).toBe('0-63');
    expect(t.cpus.map((c) => c.id)).toEqual([...Array(128).keys()]);
    expect(t.notes).toEqual([NOTE]);
    expect(t.warnings).toEqual([]);
  });
});

describe('qemu-possible-not-present (x86: not-present CPUs in no node cpulist) still reads and plans', () => {
  const tree = join(FIXTURES, 'qemu-possible-not-present');
  it('reads without a note about not-present CPUs', () => {
    const t = readTopology(tree);
    expect(t.possible.toString()).toBe('0-7');
    expect(t.online.toString()).toBe('0-3');
    expect(t.nodes.map((n) => [n.id, n.cpus.toString()])).toEqual([
      [0, '0-3'],
      [1, ''],
    ]);
    expect([...t.warnings, ...t.notes].join('\n')).not.toMatch(/not present/);
  });
  it('plans', () => {
    const r = isolate(['plan', '--dry-run', '--root', tree, '--policy', 'default']);
    expect(r.code, r.stderr).toBe(0);
  });
});

/** Two nodes of two SMT2 cores (cpus 0-3 and 4-7), with possible 0-11 and present 0-7. */
function tree(nodes: { node0: string; node1: string }, present = '0-7'): string {
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
  const cpu = join(r, 'sys/devices/system/cpu');
  writeFileSync(join(cpu, 'possible'), '0-11\n');
  writeFileSync(join(cpu, 'present'), `${present}\n`);
  writeFileSync(join(cpu, 'offline'), '8-11\n');
  writeFileSync(join(r, 'sys/devices/system/node/node0/cpulist'), `${nodes.node0}\n`);
  writeFileSync(join(r, 'sys/devices/system/node/node1/cpulist'), `${nodes.node1}\n`);
  return r;
}

const refusal = (root: string): string => {
  try {
    readTopology(root);
  } catch (err) {
    expect(err).toBeInstanceOf(UserError);
    return (err as Error).message;
  }
  throw new Error('expected the tree to be refused');
};

describe('which node cpulist entries are ignored and which are contradictions', () => {
  it('not-present CPUs are ignored on every node that names them, one note per node', () => {
    const t = readTopology(tree({ node0: '0-3,8-11', node1: '4-7,10' }));
    expect(t.nodes.map((n) => n.cpus.toString())).toEqual(['0-3', '4-7']);
    expect(t.notes).toEqual([
      "node 0's cpulist names cpus 8-11, which are not present; ignored",
      "node 1's cpulist names cpu 10, which is not present; ignored",
    ]);
  });

  it('a present CPU named by two nodes is still a contradiction', () => {
    expect(refusal(tree({ node0: '0-3,8-11', node1: '3-7' }))).toMatch(
      /node1\/cpulist and .*node0\/cpulist both list cpu3; a CPU is on one NUMA node; sysfs contradicts itself/,
    );
  });

  it('a present CPU with no directory is still a contradiction', () => {
    expect(refusal(tree({ node0: '0-3,8-9', node1: '4-7' }, '0-9'))).toMatch(
      /node0\/cpulist lists CPUs 8-9 that have no directory in .*system\/cpu; sysfs contradicts itself/,
    );
  });

  it('a CPU beyond the last possible one is still a contradiction', () => {
    expect(refusal(tree({ node0: '0-3,12-13', node1: '4-7' }))).toMatch(
      /node0\/cpulist lists CPUs 12-13, beyond the last possible CPU \(.*cpu\/possible: 0-11\); sysfs contradicts itself/,
    );
  });
});
