// Check mode with isolate_install: deb says which version the install would change, not that a copy of
// the package would be made ("changed" with "diff skipped"): the installed version comes from the real
// dpkg database under the fixture host's root (a status file in dpkg's own format, read by the real
// dpkg-query), the package's from a real .deb (dpkg-deb). An up-to-date, converged host reports no
// change at all; an outdated one reports the version change; the package the role installed last, when
// it is the same file, is read where it lies and nothing is staged. Check mode only: the install task
// would run apt on this machine.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { makeFakeHost } from '../support/fake-host.js';
import { CONVERGE, ensureAnsible, makeLab, parseJson, playbook, type TestHost } from './support.js';
import { APT_WAIT_MS } from '../support/apt.js';

beforeAll(() => ensureAnsible(), APT_WAIT_MS);
vi.setConfig({ testTimeout: 300_000 });

const VERSION_TASK = 'Say which version the install changes';
const STAGE = 'Make a staging directory for check mode';

/** A real .deb named isolate whose /usr/bin/isolate runs dist/cli.js (as the lab's isolate does). */
function labDeb(version: string): string {
  const top = mkdtempSync(join(tmpdir(), 'isolate-lab-deb-'));
  const root = join(top, 'pkg');
  mkdirSync(join(root, 'DEBIAN'), { recursive: true });
  mkdirSync(join(root, 'usr/bin'), { recursive: true });
  const cli = resolve(import.meta.dirname, '../../dist/cli.js');
  writeFileSync(join(root, 'usr/bin/isolate'), `#!/bin/sh\nexec "${process.execPath}" "${cli}" "$@"\n`, {
    mode: 0o755,
  });
  writeFileSync(
    join(root, 'DEBIAN/control'),
    `Package: isolate\nVersion: ${version}\nArchitecture: all\nMaintainer: lab <lab@example.net>\nDescription: the lab isolate\n`,
  );
  const deb = join(top, `isolate_${version}_all.deb`);
  execFileSync('dpkg-deb', ['--root-owner-group', '--build', root, deb], { stdio: 'pipe' });
  return deb;
}

/** dpkg's status database under a fixture root, isolate in it at `status` (e.g. "install ok installed"). */
function dpkgStatus(root: string, entry?: { version: string; status: string }): void {
  const dir = join(root, 'var/lib/dpkg');
  mkdirSync(join(dir, 'info'), { recursive: true });
  mkdirSync(join(dir, 'updates'), { recursive: true });
  writeFileSync(join(dir, 'available'), '');
  writeFileSync(
    join(dir, 'status'),
    entry
      ? `Package: isolate\nStatus: ${entry.status}\nPriority: optional\nSection: admin\nMaintainer: lab <lab@example.net>\nArchitecture: amd64\nVersion: ${entry.version}\nDescription: the lab isolate\n\n`
      : '',
  );
}

describe('check mode with the .deb: the version the install changes', () => {
  let deb: string;
  beforeAll(() => {
    deb = labDeb('0.1.0');
  });
  const host = (name: string): TestHost => {
    const root = makeFakeHost('intel-2s-ht-split');
    return { name, group: 'kafka_storm', root, vars: { isolate_install: 'deb' } };
  };
  const check = async (h: TestHost, extra: string[] = []) => {
    const lab = makeLab([{ ...h, vars: { ...h.vars, isolate_deb_src: deb } }]);
    const run = await playbook(lab, ['--check', ...extra], { json: true });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    return { lab, run, r: parseJson(run) };
  };

  it('an up-to-date, converged host: no change at all, and nothing copied', async () => {
    const h = host('current');
    dpkgStatus(h.root, { version: '0.1.0', status: 'install ok installed' });
    // Converged first (isolate_install: none: apt would install on this machine).
    const converge = await playbook(makeLab([{ ...h, vars: { isolate_install: 'none' } }]), []);
    expect(converge.code, converge.stdout).toBe(0);
    const { r, run } = await check(h);
    const v = r.tasks.get(VERSION_TASK)?.[h.name];
    expect(v?.changed, JSON.stringify(v)).toBe(false);
    expect(v?.msg).toBe(
      'isolate 0.1.0 is installed, the version of the package: the install changes nothing',
    );
    expect(r.tasks.get('Copy the package')?.[h.name]?.skipped).toBe(true);
    expect(r.stats[h.name], run.stdout).toMatchObject({ changed: 0, failures: 0 });
    // The package was staged to read its version (the host has no copy of it), and removed again.
    const stage = r.tasks.get(STAGE)?.[h.name]?.path;
    expect(stage).toMatch(/isolate-check\./);
    expect(existsSync(stage ?? ''), stage).toBe(false);
    expect(r.tasks.get('Unpack the package')?.[h.name]?.skipped).toBe(true);
  });

  it('an outdated host: the version change, and --diff shows no "diff skipped"', async () => {
    const h = host('outdated');
    dpkgStatus(h.root, { version: '0.0.9', status: 'install ok installed' });
    const { r, run } = await check(h);
    const v = r.tasks.get(VERSION_TASK)?.[h.name];
    expect(v?.changed, JSON.stringify(v)).toBe(true);
    expect(v?.msg).toBe('isolate 0.0.9 → 0.1.0: the install would change the host');
    expect(r.tasks.get('Copy the package')?.[h.name]?.skipped).toBe(true);
    expect(r.tasks.get(CONVERGE)?.[h.name]?.changed).toBe(true);
    expect(run.stdout).not.toMatch(/diff skipped/);
    const text = await playbook(makeLab([{ ...h, vars: { ...h.vars, isolate_deb_src: deb } }]), [
      '--check',
      '--diff',
    ]);
    expect(text.code, text.stdout + text.stderr).toBe(0);
    expect(text.stdout).not.toMatch(/diff skipped/);
    expect(text.stdout).toMatch(
      /TASK \[isolate : Say which version the install changes\][^\n]*\nchanged: \[outdated\] => \{\n\s+"msg": "isolate 0\.0\.9 → 0\.1\.0: the install would change the host"/,
    );
  });

  it('removed with its configuration kept (dpkg "rc"): not installed', async () => {
    const h = host('removed');
    dpkgStatus(h.root, { version: '0.1.0', status: 'deinstall ok config-files' });
    const { r } = await check(h);
    expect(r.tasks.get(VERSION_TASK)?.[h.name]).toMatchObject({
      changed: true,
      msg: 'isolate (not installed) → 0.1.0: the install would change the host',
    });
  });

  it('the package the role installed last is the same file: read where it lies, nothing staged', async () => {
    const h = host('cached');
    dpkgStatus(h.root, { version: '0.0.9', status: 'install ok installed' });
    mkdirSync(join(h.root, 'var/cache'), { recursive: true });
    copyFileSync(deb, join(h.root, 'var/cache/isolate.deb'));
    const { r } = await check(h);
    expect(r.tasks.get(STAGE)).toBeUndefined();
    expect(r.tasks.get('Read the version of the package installed last')?.[h.name]?.changed).toBe(false);
    expect(r.tasks.get(VERSION_TASK)?.[h.name]).toMatchObject({
      changed: true,
      msg: 'isolate 0.0.9 → 0.1.0: the install would change the host',
    });
  });
});
