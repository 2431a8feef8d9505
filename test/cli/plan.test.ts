// `isolate plan` as a process, on sysfs trees from real kernels: the allocation an SRE would see,
// the --json contract, exit codes, and that --dry-run writes nothing anywhere.
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolate } from './run.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/sysfs');

function policyFile(body: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'isolate-plan-'));
  const file = join(dir, 'policy.yaml');
  writeFileSync(file, `apiVersion: isolate/v1\nkind: HostPolicy\n${body}`);
  return file;
}

function planJson(tree: string, body: string, extra: string[] = []) {
  const r = isolate(['plan', '--dry-run', '--json', '--root', tree, '--policy', policyFile(body), ...extra]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

const KAFKA = (cores: number | string, extra = '') => `workloads:
  - { name: kafka, class: exclusive, cores: ${cores}, match: { cgroup: /kafka.slice }${extra} }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
`;

/** Every file under a directory with its content hash and mtime: proof that nothing was written. */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile())
        out.set(p, `${createHash('sha1').update(readFileSync(p)).digest('hex')}@${statSync(p).mtimeMs}`);
      else out.set(p, 'link');
    }
  };
  walk(dir);
  return out;
}

describe('isolate plan on real topologies', () => {
  const twoSocket = join(FIXTURES, 'qemu-2s-smt2');

  it('gives whole cores on the NIC-local node and the rest to batch (two sockets, SMT2)', () => {
    const plan = planJson(twoSocket, `reserved: { cores: 1 }\n${KAFKA(1, ', near: [nic:eth0]')}`);
    expect(plan.allocation.kafka).toMatchObject({
      class: 'exclusive',
      cpus: [6, 7],
      nodes: [1],
      mems: [1],
      cores: [6],
    });
    expect(plan.allocation.flink).toMatchObject({ class: 'batch', cpus: [0, 1, 2, 3, 4, 5], mems: [0, 1] });
    expect(plan.reserved.cpus).toEqual([0, 1, 4, 5]);
    // No cgroup v2 under this root: plan still works and says apply would be refused.
    expect(plan.warnings.join('\n')).toMatch(/apply would be refused/);
    expect(plan.changes.length).toBeGreaterThan(0);
    for (const c of plan.changes)
      expect(Object.keys(c)).toEqual(expect.arrayContaining(['target', 'setting', 'from', 'to']));
  });

  it('refuses a request no node can hold and names the largest that fits', () => {
    const r = isolate([
      'plan',
      '--dry-run',
      '--root',
      twoSocket,
      '--policy',
      policyFile(`reserved: { cores: 1 }\n${KAFKA(2)}`),
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /asks for 2 whole cores on one NUMA node, but the largest request that fits is 1/,
    );
  });

  // Node choice and fill order (spread, memory-less nodes, offline siblings, N/N+8 siblings, hybrid
  // and L3 groups) are tested in-process in test/planner/allocate.test.ts.

  it('--detailed-exitcode: 2 when there are changes', () => {
    const r = isolate([
      'plan',
      '--dry-run',
      '--detailed-exitcode',
      '--root',
      twoSocket,
      '--policy',
      policyFile(`reserved: { cores: 1 }\n${KAFKA(1)}`),
    ]);
    expect(r.code).toBe(2);
  });

  it('--dry-run writes nothing under the root or beside the policy', () => {
    const root = mkdtempSync(join(tmpdir(), 'isolate-root-'));
    cpSync(twoSocket, root, { recursive: true });
    const policy = policyFile(`reserved: { cores: 1 }\n${KAFKA(1)}`);
    const before = snapshot(root);
    const r = isolate(['plan', '--dry-run', '--root', root, '--policy', policy]);
    expect(r.code, r.stderr).toBe(0);
    expect(snapshot(root)).toEqual(before);
    expect(readdirSync(join(policy, '..'))).toEqual(['policy.yaml']);
  });

  it('without --dry-run, saves the plan for apply --plan', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'isolate-out-')), 'plan.json');
    const r = isolate([
      'plan',
      '--root',
      twoSocket,
      '--out',
      out,
      '--policy',
      policyFile(`reserved: { cores: 1 }\n${KAFKA(1)}`),
    ]);
    expect(r.code, r.stderr).toBe(0);
    const saved = JSON.parse(readFileSync(out, 'utf8'));
    expect(saved.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(saved.allocation.kafka.cpus).toEqual([2, 3]);
  });

  it('uses the bundled default policy, and says so, when none is given', () => {
    const r = isolate(['plan', '--dry-run', '--root', twoSocket]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/using the bundled default policy .*policies\/default\.yaml/);
    expect(r.stdout).toMatch(/kafka \(exclusive\)/);
  });
});

describe('re-planning a converged host', () => {
  it('gives zero changes after the planned values are in place (exit 0 with --detailed-exitcode)', () => {
    // A cgroup2 tree as the kernel would show it after apply: the observer reads plain files.
    const root = mkdtempSync(join(tmpdir(), 'isolate-converged-'));
    cpSync(join(FIXTURES, 'qemu-2s-smt2'), root, { recursive: true });
    const cg = join(root, 'sys/fs/cgroup');
    mkdirSync(cg, { recursive: true });
    writeFileSync(join(cg, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
    writeFileSync(join(cg, 'cgroup.subtree_control'), '\n');
    for (const top of ['init.scope', 'system.slice', 'user.slice']) {
      mkdirSync(join(cg, top));
      for (const f of ['cpuset.cpus', 'cpuset.mems', 'cpuset.cpus.partition', 'cgroup.subtree_control']) {
        writeFileSync(join(cg, top, f), f.endsWith('partition') ? 'member\n' : '\n');
      }
      writeFileSync(join(cg, top, 'cgroup.events'), 'populated 1\nfrozen 0\n');
    }
    const policy = policyFile(`reserved: { cores: 1 }\nstrict: true\n${KAFKA(1, ', memory: { low: 256M }')}`);
    const first = isolate(['plan', '--dry-run', '--json', '--root', root, '--policy', policy]);
    expect(first.code, first.stderr).toBe(0);
    const plan = JSON.parse(first.stdout);
    expect(plan.warnings.join('\n')).not.toMatch(/apply would be refused/);
    const settings = plan.changes.map((c: { target: string; setting: string }) => `${c.target} ${c.setting}`);
    expect(settings).toEqual(
      expect.arrayContaining([
        '/ cgroup.subtree_control',
        '/kafka.slice mkdir',
        '/kafka.slice cpuset.cpus',
        '/kafka.slice cpuset.cpus.partition',
        '/system.slice cpuset.cpus',
      ]),
    );
    // Donors shrink before the exclusive cgroup's partition is switched on.
    const idx = (s: string) => settings.indexOf(s);
    expect(idx('/system.slice cpuset.cpus')).toBeLessThan(idx('/kafka.slice cpuset.cpus.partition'));
    expect(idx('/ cgroup.subtree_control')).toBeLessThan(idx('/kafka.slice mkdir'));
    // Write what apply would have written.
    for (const c of plan.changes as { target: string; setting: string; to: string }[]) {
      const dir = join(cg, c.target);
      if (c.setting === 'mkdir') {
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, 'cgroup.events'), 'populated 0\nfrozen 0\n');
      } else writeFileSync(join(dir, c.setting), `${c.to}\n`);
    }
    expect(existsSync(join(cg, 'kafka.slice/cpuset.cpus'))).toBe(true);
    const again = isolate([
      'plan',
      '--dry-run',
      '--json',
      '--detailed-exitcode',
      '--root',
      root,
      '--policy',
      policy,
    ]);
    expect(JSON.parse(again.stdout).changes).toEqual([]);
    expect(again.code).toBe(0);
  });
});
