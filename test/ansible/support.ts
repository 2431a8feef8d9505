// Drives the real ansible-playbook (Debian's ansible-core) against ansible/site.yml over the local
// connection. Every inventory host has its own fake host root (sysfs fixture + writable cgroup2
// stand-in) through the role's isolate_root, and runs the built CLI through a two-line wrapper.
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ensureDebianTools } from '../support/apt.js';
import { makeFakeHost } from '../support/fake-host.js';

export const REPO = resolve(import.meta.dirname, '../..');
export const ANSIBLE = join(REPO, 'ansible');

export function ensureAnsible(): Promise<void> {
  return ensureDebianTools({ '/usr/bin/ansible-playbook': 'ansible-core', '/usr/bin/python3': 'python3' });
}

export interface TestHost {
  name: string;
  group: string;
  root: string;
  vars?: Record<string, unknown>;
}

export interface Lab {
  dir: string;
  inventory: string;
  bin: string;
}

/** A temp inventory: the example group_vars (so the shipped policies are what is tested) + test hosts. */
export function makeLab(hosts: TestHost[]): Lab {
  const dir = mkdtempSync(join(tmpdir(), 'isolate-ansible-'));
  const bin = join(dir, 'isolate');
  writeFileSync(bin, `#!/bin/sh\nexec "${process.execPath}" "${join(REPO, 'dist/cli.js')}" "$@"\n`);
  chmodSync(bin, 0o755);
  const inventory = join(dir, 'inventory');
  mkdirSync(inventory);
  cpSync(join(ANSIBLE, 'inventory/group_vars'), join(inventory, 'group_vars'), { recursive: true });
  const groups: Record<string, { hosts: Record<string, unknown> }> = {};
  for (const h of hosts) {
    const group = groups[h.group] ?? { hosts: {} };
    groups[h.group] = group;
    group.hosts[h.name] = {
      ansible_connection: 'local',
      ansible_python_interpreter: '/usr/bin/python3',
      ansible_become: false,
      isolate_root: h.root,
      isolate_install: 'none',
      isolate_bin: bin,
      isolate_mode: 'apply-once',
      // isolate's units would be units of the machine itself: not for fixture hosts.
      isolate_manage_units: false,
      ...h.vars,
    };
  }
  writeFileSync(join(inventory, 'hosts.yml'), stringify({ isolate: { children: groups } }));
  return { dir, inventory, bin };
}

export interface PlaybookRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Asynchronous: a synchronous child that runs for seconds starves vitest's worker RPC. */
export async function playbook(
  lab: Lab,
  args: string[],
  opts: { json?: boolean } = {},
): Promise<PlaybookRun> {
  const r = await execa('ansible-playbook', ['-i', lab.inventory, join(ANSIBLE, 'site.yml'), ...args], {
    reject: false,
    cwd: lab.dir,
    env: {
      ...process.env,
      HOME: lab.dir,
      // ansible-core refuses to start without a UTF-8 locale; C.UTF-8 is always there on Debian.
      LC_ALL: 'C.UTF-8',
      ANSIBLE_LOCAL_TEMP: join(lab.dir, 'tmp'),
      ANSIBLE_REMOTE_TMP: join(lab.dir, 'tmp'),
      ANSIBLE_NOCOLOR: '1',
      ANSIBLE_FORCE_COLOR: '0',
      ANSIBLE_RETRY_FILES_ENABLED: '0',
      ANSIBLE_STDOUT_CALLBACK: opts.json ? 'isolate_test_json' : 'default',
      ANSIBLE_CALLBACK_PLUGINS: join(import.meta.dirname, 'callback'),
      ANSIBLE_DEPRECATION_WARNINGS: '0',
    },
    timeout: 300_000,
  });
  return { code: r.exitCode ?? null, stdout: r.stdout, stderr: r.stderr };
}

export interface HostResult {
  changed?: boolean;
  failed?: boolean;
  skipped?: boolean;
  msg?: string;
  /** A tempfile task's directory. */
  path?: string;
  changes?: Array<{ target: string; setting: string; from: string | null; to: string }>;
  diff?: unknown;
}

export interface JsonRun {
  stats: Record<string, { changed: number; failures: number; ok: number; skipped: number }>;
  /** Task name (without the role prefix) → host → result. */
  tasks: Map<string, Record<string, HostResult>>;
}

export function parseJson(run: PlaybookRun): JsonRun {
  let data: {
    stats: JsonRun['stats'];
    plays: Array<{ tasks: Array<{ task: { name: string }; hosts: Record<string, HostResult> }> }>;
  };
  try {
    data = JSON.parse(run.stdout.slice(run.stdout.indexOf('{')));
  } catch {
    throw new Error(`ansible-playbook printed no JSON (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
  const tasks = new Map<string, Record<string, HostResult>>();
  // With serial, each batch is a play of its own in the json callback.
  for (const play of data.plays)
    for (const t of play.tasks) {
      // "isolate : Converge ..." → "Converge ..."
      const name = t.task.name.replace(/^[\w.-]+ : /, '');
      tasks.set(name, { ...tasks.get(name), ...t.hosts });
    }
  return { stats: data.stats, tasks };
}

export const CONVERGE = "Converge the host with isolate's plan";
export const POLICY = 'Validate and install the policy';

/**
 * Check mode before the first install, with a file where the package should be that the host's tool
 * cannot unpack (dpkg-deb, rpm2cpio): the host fails with that tool's message, the staging directory is
 * removed, nothing is planned and no policy is written. One case per package kind.
 */
export function describeUnpackable(o: {
  title: string;
  host: string;
  install: 'deb' | 'rpm';
  /** The role variable naming the package file. */
  srcVar: string;
  message: RegExp;
}): void {
  describe(o.title, () => {
    const root = makeFakeHost('qemu-2s-smt2');
    const file = join(root, `isolate.${o.install}`);
    writeFileSync(file, `not a ${o.install} package\n`);
    const host: TestHost = {
      name: o.host,
      group: 'kafka_storm',
      root,
      vars: { isolate_install: o.install, [o.srcVar]: file, isolate_bin: join(root, 'usr/bin/isolate') },
    };
    const lab = makeLab([host]);

    it("fails the host with the unpacking tool's message and removes its staging directory", async () => {
      const run = await playbook(lab, ['--check'], { json: true });
      const r = parseJson(run);
      expect(run.code, run.stdout + run.stderr).toBe(2);
      const stage = r.tasks.get('Make a staging directory for check mode')?.[host.name]?.path;
      expect(stage).toMatch(/isolate-check\./);
      expect(existsSync(stage ?? ''), stage).toBe(false);
      const stop = r.tasks.get('Stop on the failure to stage the package')?.[host.name];
      expect(stop?.failed, JSON.stringify(stop)).toBe(true);
      expect(stop?.msg).toMatch(o.message);
      // Nothing planned with a package that is not there, nothing written.
      expect(r.tasks.get(CONVERGE)?.[host.name]).toBeUndefined();
      expect(existsSync(join(root, 'etc/isolate/policy.yaml'))).toBe(false);
    });
  });
}
