// The role's isolate_install: package picks the host's package by ansible_os_family: the .rpm on
// RedHat-family hosts (unpacked with rpm2cpio for check mode before the first install, and planned
// with), the .deb on Debian-family ones (facts gathered by the role, since site.yml gathers none), and
// a clear failure elsewhere. No RHEL-family host is available here: the RedHat hosts are fixture hosts
// that say they are, and the .rpm is a real one built with rpmbuild around the lab's isolate.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { APT_WAIT_MS, ensureDebianTools } from '../support/apt.js';
import { makeFakeHost } from '../support/fake-host.js';
import {
  CONVERGE,
  describeUnpackable,
  ensureAnsible,
  makeLab,
  parseJson,
  playbook,
  type TestHost,
} from './support.js';

beforeAll(async () => {
  await ensureAnsible();
  await ensureDebianTools({
    '/usr/bin/rpmbuild': 'rpm',
    '/usr/bin/rpm2cpio': 'rpm',
    '/usr/bin/cpio': 'cpio',
  });
}, APT_WAIT_MS);

/** A real .rpm whose /usr/bin/isolate runs dist/cli.js (as the lab's isolate does). */
function labRpm(): string {
  const top = mkdtempSync(join(tmpdir(), 'isolate-lab-rpm-'));
  const bin = join(top, 'isolate');
  const cli = resolve(import.meta.dirname, '../../dist/cli.js');
  writeFileSync(bin, `#!/bin/sh\nexec "${process.execPath}" "${cli}" "$@"\n`);
  const spec = join(top, 'isolate.spec');
  writeFileSync(
    spec,
    [
      'Name: isolate',
      'Version: 0.1.0',
      'Release: 1',
      'Summary: the lab isolate',
      'License: Apache-2.0',
      'BuildArch: noarch',
      '%description',
      'The lab isolate.',
      '%install',
      `install -D -m 0755 ${bin} %{buildroot}/usr/bin/isolate`,
      '%files',
      '/usr/bin/isolate',
      '',
    ].join('\n'),
  );
  execFileSync(
    'rpmbuild',
    ['-bb', '--quiet', '--define', `_topdir ${top}`, '--define', `_dbpath ${join(top, 'db')}`, spec],
    { stdio: 'pipe' },
  );
  return join(top, 'RPMS/noarch/isolate-0.1.0-1.noarch.rpm');
}

describe('isolate_install: package in check mode before the first install', () => {
  const policy = {
    apiVersion: 'isolate/v1',
    kind: 'HostPolicy',
    workloads: [
      { name: 'kafka', class: 'exclusive', cores: 1, match: { systemdUnit: 'kafka.service' } },
      { name: 'storm', class: 'batch', match: { systemdUnit: 'storm-supervisor.service' } },
    ],
  };
  const host = (name: string, vars: Record<string, unknown>): TestHost => {
    const root = makeFakeHost('qemu-2s-smt2');
    return {
      name,
      group: 'kafka_storm',
      root,
      vars: {
        isolate_install: 'package',
        isolate_mode: 'agent',
        isolate_manage_units: true,
        isolate_bin: join(root, 'usr/bin/isolate'),
        isolate_policy: policy,
        ...vars,
      },
    };
  };
  const task = (r: ReturnType<typeof parseJson>, name: string, h: TestHost) => r.tasks.get(name)?.[h.name];
  // A failed host stops the rollout (max_fail_percentage 0): each case has a playbook run of its own.
  const checkRun = async (h: TestHost) => {
    const run = await playbook(makeLab([h]), ['--check'], { json: true });
    return { run, r: parseJson(run) };
  };

  it('RedHat: stages the .rpm, plans with its isolate, and removes the staging directory', async () => {
    const el = host('el-9', { ansible_os_family: 'RedHat', isolate_rpm_src: labRpm() });
    const { run, r } = await checkRun(el);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(task(r, "Learn the host's OS family (isolate_install is package)", el)?.skipped).toBe(true);
    expect(task(r, 'Unpack the RPM', el)).toMatchObject({ changed: false });
    expect(task(r, 'Unpack the RPM', el)?.skipped).toBeUndefined();
    expect(task(r, 'Unpack the package', el)?.skipped).toBe(true);
    const plan = task(r, CONVERGE, el);
    expect(plan?.changed, run.stdout).toBe(true);
    expect(
      plan?.changes?.some((c) => c.target === '/system.slice/kafka.service' && c.setting === 'cpuset.cpus'),
      JSON.stringify(plan),
    ).toBe(true);
    // Check mode installs nothing; the install task is there, for the real run.
    expect(task(r, 'Install the RPM', el)?.skipped).toBe(true);
    expect(task(r, 'Install the package', el)?.skipped).toBe(true);
    // What the install would change, read from the .rpm itself (rpm -qp) and the host's rpm database.
    expect(task(r, 'Say which version the install changes', el)).toMatchObject({
      changed: true,
      msg: 'isolate (not installed) → 0.1.0-1: the install would change the host',
    });
    const stage = task(r, 'Make a staging directory for check mode', el)?.path;
    expect(stage).toMatch(/isolate-check\./);
    expect(existsSync(stage ?? ''), stage).toBe(false);
    expect(existsSync(join(el.root, 'usr/bin/isolate'))).toBe(false);
  });

  it('Debian, learned by the role itself (site.yml gathers no facts): the .deb is what it stages', async () => {
    const notADeb = join(makeFakeHost('qemu-2s-smt2'), 'isolate.deb');
    writeFileSync(notADeb, 'not a package\n');
    const debian = host('debian', { isolate_deb_src: notADeb });
    const { run, r } = await checkRun(debian);
    expect(run.code).toBe(2);
    expect(
      task(r, "Learn the host's OS family (isolate_install is package)", debian)?.skipped,
    ).toBeUndefined();
    expect(task(r, 'Copy the RPM', debian)?.skipped).toBe(true);
    expect(task(r, 'Stop on the failure to stage the package', debian)?.msg).toMatch(
      /^cannot stage isolate for check mode: dpkg-deb.*not a Debian format archive/,
    );
  });

  it('another OS family: refused before anything is copied, naming the fix', async () => {
    const suse = host('suse', { ansible_os_family: 'Suse' });
    const { run, r } = await checkRun(suse);
    expect(run.code).toBe(2);
    expect(task(r, 'Require a package for this OS family', suse)?.failed).toBe(true);
    expect(task(r, 'Require a package for this OS family', suse)?.msg).toBe(
      'isolate_install is package, and isolate has packages for the Debian and RedHat OS families only (suse is Suse): set isolate_install to artifact for this host',
    );
    expect(r.tasks.get('Copy the package')).toBeUndefined();
    expect(r.tasks.get('Copy the RPM')).toBeUndefined();
  });
});

describeUnpackable({
  title: 'isolate_install: rpm in check mode, when the .rpm cannot be unpacked',
  host: 'el-badpkg',
  install: 'rpm',
  srcVar: 'isolate_rpm_src',
  message: /^cannot stage isolate for check mode: .*not an RPM package/,
});
