// isolate_state: absent takes isolate off a host with the real ansible-playbook: check mode lists what
// the rollback would restore and changes nothing; the real run rolls back every change isolate made
// (the host's cgroup files as they were before the role first ran) and is a no-op when run again; a
// rollback that cannot complete fails the host with isolate's own message. Fixture hosts only (their
// isolate_root): no unit of this machine is started, stopped or removed.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { expectDocSample } from '../support/doc-samples.js';
import { makeFakeHost } from '../support/fake-host.js';
import { CONVERGE, ensureAnsible, makeLab, parseJson, playbook, type TestHost } from './support.js';
import { APT_WAIT_MS } from '../support/apt.js';

beforeAll(() => ensureAnsible(), APT_WAIT_MS);
vi.setConfig({ testTimeout: 300_000 });

const ROLLBACK = 'Roll back every change isolate made';
const RESTORES = 'What the rollback restores';

/** Every regular file under a fixture host's cgroup tree and isolate's state directory. */
function snapshot(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) out.set(p.slice(root.length), readFileSync(p, 'utf8'));
    }
  };
  for (const d of ['sys/fs/cgroup', 'var/lib/isolate']) {
    try {
      walk(join(root, d));
    } catch {}
  }
  return out;
}

/** The cgroup files' values (a real cgroupfs reads back a newline isolate does not write; the fake keeps what was written). */
const cgroupFiles = (snap: Map<string, string>) =>
  new Map([...snap].filter(([p]) => p.startsWith('/sys/fs/cgroup/')).map(([p, v]) => [p, v.trim()]));

describe('isolate_state: absent', () => {
  const host: TestHost = {
    name: 'kafka-st-01',
    group: 'kafka_storm',
    root: makeFakeHost('intel-2s-ht-split'),
  };
  const lab = makeLab([host]);
  // Absent needs no policy: the host's is taken away with the rest.
  const absent = ['-e', JSON.stringify({ isolate_state: 'absent', isolate_policy: {} })];
  let pristine: Map<string, string>;

  it('the role converges the host first (apply-once)', async () => {
    pristine = snapshot(host.root);
    const run = await playbook(lab, [], { json: true });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(parseJson(run).tasks.get(CONVERGE)?.[host.name]?.changed).toBe(true);
    expect(cgroupFiles(snapshot(host.root))).not.toEqual(cgroupFiles(pristine));
  });

  it('check mode lists what the rollback would restore and changes nothing', async () => {
    const before = snapshot(host.root);
    const run = await playbook(lab, ['--check', ...absent], { json: true });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const r = parseJson(run);
    expect(r.tasks.get(ROLLBACK)?.[host.name]?.changed).toBe(true);
    const lines = r.tasks.get(RESTORES)?.[host.name]?.msg as unknown as string[];
    expect(Array.isArray(lines), JSON.stringify(r.tasks.get(RESTORES))).toBe(true);
    expect(lines).toContainEqual(
      expect.stringMatching(/^\/system\.slice\/kafka\.service cpuset\.cpus: \S+ → ""$/),
    );
    expect(r.tasks.get(CONVERGE)).toBeUndefined();
    expect(snapshot(host.root)).toEqual(before);
    // As an operator reads it, for docs/ansible.md.
    const text = await playbook(lab, ['--check', ...absent]);
    expect(text.code, text.stdout + text.stderr).toBe(0);
    const from = text.stdout.indexOf('TASK [isolate : Roll back every change isolate made]');
    const to = text.stdout.indexOf('TASK [isolate : Stop on a rollback that did not complete]');
    expect(from).toBeGreaterThan(0);
    expectDocSample(
      'docs/ansible.md',
      'absent-check',
      text.stdout
        .slice(from, to)
        .replaceAll(host.root, '')
        .replace(/\n{3,}/g, '\n\n')
        .trim(),
    );
    expect(snapshot(host.root)).toEqual(before);
  });

  it('the real run rolls the host back to before the role; run again, it changes nothing', async () => {
    const run = await playbook(lab, absent, { json: true });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const r = parseJson(run);
    expect(r.tasks.get(ROLLBACK)?.[host.name]?.changed).toBe(true);
    expect(r.tasks.get(RESTORES)?.[host.name]?.skipped).toBe(true);
    expect(cgroupFiles(snapshot(host.root))).toEqual(cgroupFiles(pristine));
    const journal = JSON.parse(readFileSync(join(host.root, 'var/lib/isolate/journal.json'), 'utf8'));
    expect(journal.state).toBe('rolled-back');
    // isolate_install: none: the package is not the role's to remove, nor its state directory.
    expect(
      r.tasks.get("Remove isolate's state directory (rolled back; no package purge removes it)")?.[host.name]
        ?.skipped,
    ).toBe(true);

    const again = await playbook(lab, absent, { json: true });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(parseJson(again).stats[host.name]).toMatchObject({ changed: 0, failures: 0 });
  });

  it("a rollback that cannot complete fails the host with isolate's message; nothing is removed", async () => {
    const file = join(host.root, 'var/lib/isolate/journal.json');
    writeFileSync(file, '{ not json');
    const run = await playbook(lab, absent, { json: true });
    expect(run.code).toBe(2);
    const r = parseJson(run);
    expect(r.tasks.get('Stop on a rollback that did not complete')?.[host.name]?.msg).toBe(
      `isolate rollback failed (exit 1): journal ${file} is unreadable (not valid JSON); inspect it (it lists every value isolate changed), restore by hand, then move it aside; isolate stays installed: fix the cause and run the role again`,
    );
    expect(readFileSync(file, 'utf8')).toBe('{ not json');
  });
});

describe('isolate_state: absent of an artifact install, in check mode', () => {
  it('would remove the executable and the state directory after the rollback', async () => {
    const root = makeFakeHost('intel-2s-ht-split');
    const host: TestHost = { name: 'kafka-art-01', group: 'kafka_storm', root };
    const lab = makeLab([host]);
    expect((await playbook(lab, [])).code).toBe(0);
    // The lab's isolate, as if the role had copied it onto this host.
    const bin = join(root, 'usr/bin/isolate');
    mkdirSync(join(root, 'usr/bin'), { recursive: true });
    writeFileSync(bin, readFileSync(lab.bin), { mode: 0o755 });
    const before = snapshot(root);
    const run = await playbook(
      lab,
      [
        '--check',
        '-e',
        JSON.stringify({ isolate_state: 'absent', isolate_install: 'artifact', isolate_bin: bin }),
      ],
      { json: true },
    );
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const r = parseJson(run);
    expect(r.tasks.get(ROLLBACK)?.[host.name]?.changed).toBe(true);
    expect(r.tasks.get('Remove the executable and the units')?.[host.name]?.changed).toBe(true);
    expect(
      r.tasks.get("Remove isolate's state directory (rolled back; no package purge removes it)")?.[host.name]
        ?.changed,
    ).toBe(true);
    expect(snapshot(root)).toEqual(before);
    expect(statSync(bin).isFile()).toBe(true);
  });
});
