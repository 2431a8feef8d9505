// `dpkg --purge` removes /var/lib/isolate only once nothing is left to undo: the .deb's postrm, run
// as dpkg runs it for another root (DPKG_ROOT), over state directories the real apply and rollback
// wrote on a fake host. After a rollback that failed or never ran, the journal is the one record of
// what isolate changed: purge keeps it and says why.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baselinePath, journalPath } from '../../src/apply/journal.js';
import { apply, rollback } from '../../src/ops/apply.js';
import { fakeCgroupHost } from '../support/cgroup-tree.js';
import { KAFKA_YARN_POLICY } from '../support/policies.js';

const POSTRM = resolve(import.meta.dirname, '../../packaging/deb/postrm');

const POLICY = KAFKA_YARN_POLICY;

async function host() {
  const { root, cg } = fakeCgroupHost(['kafka.slice', 'hadoop-yarn']);
  mkdirSync(join(root, 'etc/isolate'), { recursive: true });
  const policyPath = join(root, 'etc/isolate/policy.yaml');
  writeFileSync(policyPath, POLICY);
  await apply({ root, policyPath });
  return { root, cg, policyPath };
}

/** postrm ARG for the root `root`, as dpkg --root runs it. */
function postrm(root: string, arg: string) {
  const r = spawnSync('sh', [POSTRM, arg], {
    encoding: 'utf8',
    env: { PATH: '/usr/bin:/bin', DPKG_ROOT: root },
  });
  return { code: r.status, stderr: r.stderr, kept: existsSync(join(root, 'var/lib/isolate')) };
}

describe('postrm purge', () => {
  it('removes the state directory after a rollback', async () => {
    const { root } = await host();
    const r0 = await rollback({ root });
    expect(r0.undone).toBeGreaterThan(0);
    expect(JSON.parse(readFileSync(journalPath(root), 'utf8')).state).toBe('rolled-back');
    const r = postrm(root, 'purge');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.kept).toBe(false);
  });

  it('removes one holding only a saved plan (nothing was applied)', () => {
    const { root } = fakeCgroupHost(['kafka.slice']);
    mkdirSync(join(root, 'var/lib/isolate'), { recursive: true });
    writeFileSync(join(root, 'var/lib/isolate/plan.json'), '{}\n');
    expect(postrm(root, 'purge').kept).toBe(false);
  });

  it('keeps a journal whose changes are still in place, and says how to undo them', async () => {
    const { root } = await host();
    expect(JSON.parse(readFileSync(journalPath(root), 'utf8')).state).toBe('applied');
    const r = postrm(root, 'purge');
    expect(r.code).toBe(0);
    expect(r.kept).toBe(true);
    expect(r.stderr.trim()).toBe(
      `isolate: ${root}/var/lib/isolate kept: isolate's changes were not rolled back; reinstall isolate, run "isolate rollback", then remove it`,
    );
  });

  it('keeps the state after a rollback that failed', async () => {
    const { root } = await host();
    const file = journalPath(root);
    // What a rollback that stopped on an error leaves: the journal in rollback-failed.
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace('"state": "applied"', '"state": "rollback-failed"'),
    );
    expect(postrm(root, 'purge').kept).toBe(true);
  });

  it('keeps a baseline: the agent corrected drift, nothing was rolled back', async () => {
    const { root, cg, policyPath } = await host();
    writeFileSync(join(cg, 'hadoop-yarn/cpuset.cpus'), '0-7\n');
    await apply({ root, policyPath });
    expect(existsSync(baselinePath(root))).toBe(true);
    expect(postrm(root, 'purge').kept).toBe(true);
  });

  it('remove (without purge) keeps everything', async () => {
    const { root } = await host();
    await rollback({ root });
    expect(postrm(root, 'remove').kept).toBe(true);
  });
});
