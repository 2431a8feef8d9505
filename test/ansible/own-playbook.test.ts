// docs/ansible.md's "Using the role from your own playbook": its ansible.cfg, inventory and playbook,
// taken from the page as they are, run from a directory outside the repository in check mode. Only what
// no test machine can have is given on the command line: the hosts are reached over the local
// connection as fixture hosts, the paths are this checkout's, isolate is the lab's, already "installed"
// (the package would need `npm run package`), and the units are left alone (they would be this
// machine's own).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, expect, it } from 'vitest';
import { makeFakeHost } from '../support/fake-host.js';
import { CONVERGE, ensureAnsible, makeLab, parseJson, REPO } from './support.js';
import { APT_WAIT_MS } from '../support/apt.js';

beforeAll(() => ensureAnsible(), APT_WAIT_MS);

/** The section's code blocks, by the file name in their first line (`# hosts.yml`). */
function docFiles(): Map<string, string> {
  const doc = readFileSync(join(REPO, 'docs/ansible.md'), 'utf8');
  const section = doc.split('\n## Using the role from your own playbook\n')[1]?.split('\n## ')[0] ?? '';
  const files = new Map<string, string>();
  for (const [, body] of section.matchAll(/```(?:ini|yaml)\n([\s\S]*?)```/g)) {
    const name = body?.match(/^# (\S+)\n/)?.[1];
    if (name && body) files.set(name, body.replaceAll('/path/to/isolate', REPO));
  }
  return files;
}

it('the minimal playbook of docs/ansible.md plans each host in check mode with the role from roles_path', async () => {
  const files = docFiles();
  expect([...files.keys()].sort()).toEqual(['ansible.cfg', 'hosts.yml', 'isolate.yml']);
  const dir = mkdtempSync(join(tmpdir(), 'isolate-own-playbook-'));
  for (const [name, body] of files) writeFileSync(join(dir, name), body);
  const root = makeFakeHost('intel-2s-ht-split', ['system.slice/kafka.service', 'hadoop-yarn']);
  const lab = makeLab([]);
  const run = await execa(
    'ansible-playbook',
    [
      'isolate.yml',
      '--check',
      // JSON, so false is a boolean: -e k=false would be the string "false", which is true.
      '-e',
      JSON.stringify({
        ansible_connection: 'local',
        ansible_become: false,
        ansible_python_interpreter: '/usr/bin/python3',
        isolate_root: root,
        isolate_install: 'none',
        isolate_bin: lab.bin,
        isolate_manage_units: false,
      }),
    ],
    {
      cwd: dir,
      reject: false,
      env: {
        ...process.env,
        HOME: dir,
        LC_ALL: 'C.UTF-8',
        ANSIBLE_CONFIG: join(dir, 'ansible.cfg'),
        ANSIBLE_LOCAL_TEMP: join(dir, 'tmp'),
        ANSIBLE_REMOTE_TMP: join(dir, 'tmp'),
        ANSIBLE_STDOUT_CALLBACK: 'isolate_test_json',
        ANSIBLE_CALLBACK_PLUGINS: join(import.meta.dirname, 'callback'),
        ANSIBLE_DEPRECATION_WARNINGS: '0',
      },
      timeout: 300_000,
    },
  );
  const r = parseJson({ code: run.exitCode ?? null, stdout: run.stdout, stderr: run.stderr });
  expect(run.exitCode, run.stdout + run.stderr).toBe(0);
  for (const host of ['kafka-01.example.net', 'kafka-02.example.net']) {
    const plan = r.tasks.get(CONVERGE)?.[host];
    expect(plan?.changed, host).toBe(true);
    const cpus = plan?.changes?.find(
      (c) => c.target === '/system.slice/kafka.service' && c.setting === 'cpuset.cpus',
    );
    // The host's own plan, from the policy in the page.
    expect(cpus?.to, JSON.stringify(plan)).toMatch(/^[\d,-]+$/);
    expect(r.stats[host]?.failures).toBe(0);
  }
});
