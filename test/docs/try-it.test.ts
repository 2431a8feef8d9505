// docs/try-it.md: the walk a newcomer takes on a scratch host (scripts/scratch-host.mjs), plan → apply
// → check → rollback, each sample a real run of the script and the built CLI, shown under the
// /tmp/scratch the page names.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docText, expectDocSample, sampleIds } from '../support/doc-samples.js';
import { cli, normaliseRuns } from './host.js';

const DOC = 'docs/try-it.md';
const SCRIPT = resolve(import.meta.dirname, '../../scripts/scratch-host.mjs');
const checked = new Set<string>();

describe('docs/try-it.md', () => {
  const root = join(mkdtempSync(join(tmpdir(), 'isolate-try-')), 'scratch');
  const shown = (text: string) => normaliseRuns(text.replaceAll(root, '/tmp/scratch'));
  const sample = (id: string, text: string) => {
    checked.add(id);
    expectDocSample(DOC, id, shown(text));
  };
  const script = (...args: string[]) => {
    const r = spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    return `$ node scripts/scratch-host.mjs ${args.join(' ')}\n${r.stdout}`;
  };
  const run = (args: string[], pipe = '') => {
    const r = cli(null, [...args, '--root', root]);
    const out = pipe === '| head -1' ? `${r.stdout.split('\n')[0]}\n` : r.stdout;
    return {
      code: r.code,
      text: `$ isolate ${args.join(' ')} --root ${root}${pipe ? ` ${pipe}` : ''}\n${out}${r.stderr}`,
    };
  };

  it('plan → apply → check → rollback on a scratch host, as the page shows them', () => {
    sample('new', script('new', root));
    const plan = run(['plan', '--dry-run']);
    expect(plan.code).toBe(0);
    sample('plan', plan.text);
    const before = run(['check'], '| head -1');
    expect(before.code).toBe(2);
    const applied = cli(null, ['apply', '--yes', '--root', root]);
    expect(applied.code, applied.stderr).toBe(0);
    const last = applied.stdout.trim().split('\n').at(-1);
    // What the page says the files now hold.
    const file = (rel: string) => readFileSync(join(root, rel), 'utf8').trim();
    expect(file('sys/fs/cgroup/kafka.slice/cpuset.cpus')).toBe('2-3');
    expect(file('proc/irq/1/smp_affinity_list')).toBe('0-1,4-7');
    expect(docText(DOC)).toContain('`cat /tmp/scratch/sys/fs/cgroup/kafka.slice/cpuset.cpus`\nprints `2-3`');
    sample('apply', `${before.text}$ echo $?\n2\n$ isolate apply --yes --root ${root} | tail -1\n${last}\n`);
    // Without the kernel's part the check still sees every thread where it was.
    const stale = run(['check'], '| head -1');
    expect(stale.code).toBe(2);
    const settled = script('settle', root);
    const ok = run(['check']);
    expect(ok.code).toBe(0);
    sample('check', `${settled}${ok.text}$ echo $?\n0\n`);
    const rb = run(['rollback']);
    expect(rb.code).toBe(0);
    script('settle', root);
    const after = run(['check'], '| head -1');
    expect(after.code).toBe(2);
    sample('rollback', `${rb.text}${script('settle', root)}${after.text}`);
  });

  it('the script refuses a directory in use and an unknown fixture, in one line', () => {
    const again = spawnSync(process.execPath, [SCRIPT, 'new', root], { encoding: 'utf8' });
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/^scratch-host: .*: not empty; give a new or empty directory\n$/);
    const other = join(mkdtempSync(join(tmpdir(), 'isolate-try-')), 'x');
    const unknown = spawnSync(process.execPath, [SCRIPT, 'new', other, '--host', 'nope'], {
      encoding: 'utf8',
    });
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(
      /^scratch-host: --host nope: no such fixture; one of .*intel-2s-96cpu.*\n$/,
    );
  });

  it('every sample in the doc is produced by this file', () => {
    expect(sampleIds(DOC).filter((i) => !checked.has(i))).toEqual([]);
  });
});
