// The Ansible role with the real ansible-playbook: check mode predicts the first run exactly, the
// second run changes nothing, --diff shows the plan, a bad policy fails its host and keeps the old
// policy, and a serial rollout stops at the failure threshold.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { expectDocSample } from '../support/doc-samples.js';
import { makeFakeHost } from '../support/fake-host.js';
import {
  CONVERGE,
  describeUnpackable,
  ensureAnsible,
  makeLab,
  parseJson,
  playbook,
  POLICY,
  type TestHost,
} from './support.js';
import { APT_WAIT_MS } from '../support/apt.js';

const read = (root: string, cg: string, file: string) =>
  readFileSync(join(root, 'sys/fs/cgroup', cg, file), 'utf8').trim();
const policyOf = (root: string) => join(root, 'etc/isolate/policy.yaml');
/** Output as on a real host: the fixture root becomes /, blank lines between tasks go. */
const tidy = (text: string, root = '') =>
  text
    .replaceAll(`${root}/`, '/')
    .replaceAll(root, '/')
    .replace(/\n{3,}/g, '\n\n')
    .trim();

beforeAll(() => ensureAnsible(), APT_WAIT_MS);
// Each test runs ansible-playbook once or twice over several hosts.
vi.setConfig({ testTimeout: 300_000 });

describe('role isolate over three host groups', () => {
  // The example group_vars' policies, each on a captured topology it fits.
  const hosts: TestHost[] = [
    {
      name: 'kafka-fy-01',
      group: 'kafka_flink_yarn',
      root: makeFakeHost('amd-epyc-l3'),
      vars: { isolate_kafka_nic: 'enp65s0f0np0' },
    },
    { name: 'kafka-st-01', group: 'kafka_storm', root: makeFakeHost('intel-2s-ht-split') },
    { name: 'kafka-2b-01', group: 'kafka_two_brokers', root: makeFakeHost('amd-epyc-l3') },
  ];
  const lab = makeLab(hosts);
  let predicted: ReturnType<typeof parseJson>;

  it('check mode changes nothing and predicts a change on every host', async () => {
    const run = await playbook(lab, ['--check'], { json: true });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    predicted = parseJson(run);
    for (const h of hosts) {
      const r = predicted.tasks.get(CONVERGE)?.[h.name];
      expect(r?.changed, h.name).toBe(true);
      expect(r?.changes?.length, h.name).toBeGreaterThan(0);
      expect(existsSync(policyOf(h.root)), h.name).toBe(false);
      expect(read(h.root, 'system.slice/kafka.service', 'cpuset.cpus')).toBe('');
    }
  });

  it('with --diff, check mode shows the plan of each host', async () => {
    const run = await playbook(lab, ['--check', '--diff', '--limit', 'kafka-st-01']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const kafka = predicted.tasks
      .get(CONVERGE)
      ?.['kafka-st-01']?.changes?.find(
        (c) => c.target === '/system.slice/kafka.service' && c.setting === 'cpuset.cpus',
      );
    expect(kafka?.to).toMatch(/^\d/);
    expect(run.stdout).toContain(`-cgroupfs /system.slice/kafka.service cpuset.cpus = ""`);
    expect(run.stdout).toContain(`+cgroupfs /system.slice/kafka.service cpuset.cpus = ${kafka?.to}`);
    expect(run.stdout).toContain(`+++ after: ${hosts[1]?.root}: isolate plan`);
    // The policy task's diff is the policy text.
    expect(run.stdout).toMatch(/^\+- name: kafka$/m);
    // docs/ansible.md's check-mode sample comes from a real systemd host: test/vm/role-systemd.test.ts.
  });

  it('the first run applies exactly what check mode predicted', async () => {
    const run = await playbook(lab, [], { json: true });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const applied = parseJson(run);
    for (const h of hosts) {
      const r = applied.tasks.get(CONVERGE)?.[h.name];
      expect(r?.changed, h.name).toBe(true);
      expect(r?.changes, h.name).toEqual(predicted.tasks.get(CONVERGE)?.[h.name]?.changes);
      expect(applied.tasks.get(POLICY)?.[h.name]?.changed, h.name).toBe(true);
      expect(applied.stats[h.name]?.failures).toBe(0);
      // Every predicted write is on disk.
      for (const c of r?.changes ?? [])
        expect(read(h.root, c.target, c.setting), `${h.name} ${c.target}`).toBe(c.to);
    }
    expect(read(hosts[0]?.root ?? '', 'kafka.slice', 'cpuset.mems')).not.toBe('');
    expect(readFileSync(policyOf(hosts[1]?.root ?? ''), 'utf8')).toContain('storm-supervisor.service');
  });

  it('the second run, and check mode after it, report changed=0', async () => {
    for (const args of [[], ['--check', '--diff']]) {
      const run = await playbook(lab, args, { json: true });
      expect(run.code, run.stdout + run.stderr).toBe(0);
      const again = parseJson(run);
      for (const h of hosts) {
        expect(again.stats[h.name]?.changed, `${h.name} ${args.join(' ')}`).toBe(0);
        expect(again.tasks.get(CONVERGE)?.[h.name]?.changes).toEqual([]);
      }
    }
  });
});

describe('a bad policy in a serial rollout', () => {
  const old =
    'apiVersion: isolate/v1\nkind: HostPolicy\nworkloads:\n  - {name: kafka, class: exclusive, cores: 1, match: {systemdUnit: kafka.service}}\n';
  // Batches of two in inventory order: [bad, ok1] then [ok2, ok3].
  const hosts: TestHost[] = ['bad', 'ok1', 'ok2', 'ok3'].map((name) => ({
    name,
    group: 'kafka_storm',
    root: makeFakeHost('qemu-2s-smt2'),
    vars: {
      isolate_policy: {
        apiVersion: 'isolate/v1',
        kind: 'HostPolicy',
        workloads: [
          // Two sockets of two cores each: nine cores on one node cannot fit.
          {
            name: 'kafka',
            class: 'exclusive',
            cores: name === 'bad' ? 9 : 1,
            match: { systemdUnit: 'kafka.service' },
          },
          { name: 'storm', class: 'batch', match: { systemdUnit: 'storm-supervisor.service' } },
        ],
      },
    },
  }));
  const lab = makeLab(hosts);

  it('fails the host with the validator message, keeps its old policy, and stops the rollout', async () => {
    const bad = hosts[0]?.root ?? '';
    mkdirSync(join(bad, 'etc/isolate'), { recursive: true });
    writeFileSync(policyOf(bad), old);
    const run = await playbook(lab, ['-e', 'isolate_serial=2']);
    const out = run.stdout + run.stderr;
    expect(run.code, out).toBe(2);
    expect(out).toMatch(
      /fatal: \[bad\]: FAILED!.*isolate policy validate rejected the new policy; .*policy\.yaml was left unchanged: .*cores/,
    );
    expect(readFileSync(policyOf(bad), 'utf8')).toBe(old);
    expect(read(bad, 'system.slice/kafka.service', 'cpuset.cpus')).toBe('');
    // The second batch never started.
    for (const h of hosts.slice(2)) {
      expect(existsSync(policyOf(h.root)), h.name).toBe(false);
      expect(read(h.root, 'system.slice/kafka.service', 'cpuset.cpus'), h.name).toBe('');
      expect(out).not.toMatch(new RegExp(`^${h.name} +:`, 'm'));
    }
    expect(out).toMatch(/^bad +: .*failed=1/m);
    const fatal = out.split('\n').filter((l) => l.startsWith('fatal: [bad]'));
    expectDocSample('docs/ansible.md', 'rejected-policy', tidy(fatal.join('\n'), bad));
  });
});

describe('check mode on hosts where isolate is not installed yet', () => {
  // The first rollout to a group (one host a batch: the bad one last): the install tasks only predict, so the role plans with the
  // package's own executable, unpacked into a temporary directory (here the artifact: the lab's
  // wrapper), and skips what needs the installed units.
  const kafka = { name: 'kafka', class: 'exclusive', cores: 1, match: { systemdUnit: 'kafka.service' } };
  const hosts: TestHost[] = ['fresh', 'fresh-bad'].map((name) => {
    const root = makeFakeHost('qemu-2s-smt2');
    return {
      name,
      group: 'kafka_storm',
      root,
      vars: {
        isolate_mode: 'agent',
        // The unit tasks are skipped because isolate is not installed yet, not by this switch.
        isolate_manage_units: true,
        isolate_install: 'artifact',
        isolate_bin: join(root, 'usr/bin/isolate'),
        isolate_policy: {
          apiVersion: 'isolate/v1',
          kind: 'HostPolicy',
          workloads: [
            // Two cores a node on this topology: nine cannot fit.
            { ...kafka, cores: name === 'fresh' ? 1 : 9 },
            { name: 'storm', class: 'batch', match: { systemdUnit: 'storm-supervisor.service' } },
          ],
        },
      },
    };
  });
  const lab = makeLab(hosts);

  it("shows each host's real plan, validates its policy, and leaves nothing behind", async () => {
    // The "artifact" is the lab's wrapper of dist/cli.js.
    const run = await playbook(
      lab,
      ['--check', '-e', 'isolate_serial=1', '-e', `isolate_artifact_src=${lab.bin}`],
      {
        json: true,
      },
    );
    const r = parseJson(run);
    const [fresh, bad] = hosts as [TestHost, TestHost];
    // The plan of the host as the package's isolate computes it: kafka.service gets one whole core.
    const plan = r.tasks.get(CONVERGE)?.[fresh.name];
    expect(plan?.changed, run.stdout).toBe(true);
    const cpus = plan?.changes?.find(
      (c) => c.target === '/system.slice/kafka.service' && c.setting === 'cpuset.cpus',
    );
    expect(cpus?.to, JSON.stringify(plan)).toMatch(/^\d+,\d+$|^\d+-\d+$/);
    expect(r.tasks.get(POLICY)?.[fresh.name]?.changed).toBe(true);
    // No unit to start on a host that has none yet.
    expect(r.tasks.get('Enable and start isolate.service')?.[fresh.name]?.skipped).toBe(true);
    expect(r.stats[fresh.name]?.failures).toBe(0);
    // The invalid policy is refused in check mode already, by the isolate that would be installed.
    expect(r.tasks.get(POLICY)?.[bad.name]?.failed).toBe(true);
    expect(r.tasks.get(POLICY)?.[bad.name]?.msg).toMatch(
      /isolate policy validate rejected the new policy; .*cores/,
    );
    expect(run.code).toBe(2);
    for (const h of hosts) {
      const stage = r.tasks.get('Make a staging directory for check mode')?.[h.name]?.path;
      expect(stage, h.name).toMatch(/isolate-check\./);
      expect(existsSync(stage ?? ''), `${h.name} ${stage}`).toBe(false);
      // Check mode: nothing installed, no policy written, no cgroup changed.
      expect(existsSync(join(h.root, 'usr/bin/isolate')), h.name).toBe(false);
      expect(existsSync(policyOf(h.root)), h.name).toBe(false);
      expect(read(h.root, 'system.slice/kafka.service', 'cpuset.cpus'), h.name).toBe('');
    }
  });
});

describeUnpackable({
  title: 'role isolate in check mode before the first install, when the package cannot be unpacked',
  host: 'fresh-badpkg',
  install: 'deb',
  srcVar: 'isolate_deb_src',
  message: /^cannot stage isolate for check mode: dpkg-deb.*not a Debian format archive/,
});
