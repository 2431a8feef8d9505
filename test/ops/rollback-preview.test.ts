// `isolate rollback --dry-run` says what `isolate rollback` would put back, changing nothing: after
// an apply and an agent-style correction (a baseline and a journal), its list names every setting with
// the value the rollback then really restores, and the host and isolate's files are untouched by it.
import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baselinePath, journalPath } from '../../src/apply/journal.js';
import { apply, rollback, rollbackPreview } from '../../src/ops/apply.js';
import { fakeCgroupHost } from '../support/cgroup-tree.js';

const POLICY = `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
workloads:
  - { name: kafka, class: exclusive, cores: 1, match: { cgroup: /kafka.slice } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn }, memory: { high: 1G } }
`;

/** Every file under a directory with its content: what a read-only command must leave as it was. */
function tree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) out.set(p, readFileSync(p, 'utf8'));
    }
  };
  walk(dir);
  return out;
}

describe('rollback --dry-run', () => {
  it('lists what the rollback restores, and the rollback then restores exactly that', async () => {
    const { root, cg } = fakeCgroupHost(['kafka.slice', 'hadoop-yarn']);
    const policyPath = join(root, 'policy.yaml');
    writeFileSync(policyPath, POLICY);
    const before = tree(cg);
    expect((await rollbackPreview({ root })).steps).toEqual([]);
    await apply({ root, policyPath });
    // Drift the agent would correct: the second apply folds the first into the baseline.
    writeFileSync(join(cg, 'hadoop-yarn/cpuset.cpus'), '0-7\n');
    await apply({ root, policyPath });
    expect(statSync(baselinePath(root)).isFile()).toBe(true);

    const state = join(root, 'var/lib/isolate');
    const host = [tree(cg), tree(state)];
    const p = await rollbackPreview({ root });
    expect([tree(cg), tree(state)]).toEqual(host);
    expect(p.journalId).toMatch(/^baseline-/);
    const files = p.steps.filter((s) => s.change.backend === 'cgroupfs' && s.change.setting.includes('.'));
    expect(files.length).toBeGreaterThanOrEqual(3);
    // The drifted value was "0-7" only between the applies: the rollback restores the first value,
    // the one before isolate, and the list says so.
    const yarn = p.steps.find(
      (s) => s.change.target === '/hadoop-yarn' && s.change.setting === 'cpuset.cpus',
    );
    expect(yarn?.restores).toBe(before.get(join(cg, 'hadoop-yarn/cpuset.cpus'))?.trim());
    expect(yarn?.description).toMatch(/^\/hadoop-yarn cpuset\.cpus: \S+ → /);
    expect(p.steps.some((s) => /^\/hadoop-yarn memory\.high: 1073741824 → /.test(s.description))).toBe(true);

    const r = await rollback({ root });
    expect(r.nothing).toBe(false);
    for (const s of files) {
      const live = readFileSync(join(cg, s.change.target, s.change.setting), 'utf8').trim();
      expect(live, s.description).toBe(s.restores);
    }
    expect((await rollbackPreview({ root })).steps).toEqual([]);
    expect(JSON.parse(readFileSync(journalPath(root), 'utf8')).state).toBe('rolled-back');
  });

  it('shows the value it would overwrite, read now, and marks what was changed since isolate wrote it', async () => {
    const { root, cg } = fakeCgroupHost(['kafka.slice', 'hadoop-yarn']);
    const policyPath = join(root, 'policy.yaml');
    writeFileSync(policyPath, POLICY);
    await apply({ root, policyPath });
    const step = (p: Awaited<ReturnType<typeof rollbackPreview>>, target: string, setting: string) =>
      p.steps.find((s) => s.change.target === target && s.change.setting === setting);
    const untouched = step(await rollbackPreview({ root }), '/hadoop-yarn', 'memory.high');
    expect(untouched).toMatchObject({ live: '1073741824', changedSince: false });
    expect(untouched?.description).toMatch(/^\/hadoop-yarn memory\.high: 1073741824 → \S+$/);

    // An operator's hand edit after the apply: the rollback would overwrite 2 GiB, not isolate's 1 GiB.
    writeFileSync(join(cg, 'hadoop-yarn/memory.high'), '2147483648\n');
    // And a value that cannot be read now: unknown, never taken for absent.
    const kafkaMems = step(await rollbackPreview({ root }), '/kafka.slice', 'cpuset.mems');
    expect(kafkaMems).toBeDefined();
    rmSync(join(cg, 'kafka.slice/cpuset.mems'));
    mkdirSync(join(cg, 'kafka.slice/cpuset.mems'));
    const p = await rollbackPreview({ root });
    const high = step(p, '/hadoop-yarn', 'memory.high');
    expect(high).toMatchObject({ live: '2147483648', changedSince: true });
    expect(high?.description).toMatch(
      /^\/hadoop-yarn memory\.high: 2147483648 → \S+ \(changed since isolate wrote 1073741824\)$/,
    );
    const mems = step(p, '/kafka.slice', 'cpuset.mems');
    expect(mems).toMatchObject({ live: null, changedSince: null });
    expect(mems?.liveUnreadable).toBeTruthy();
    expect(mems?.description).toMatch(/^\/kafka\.slice cpuset\.mems: unknown \(.+\) → /);
  });
});
