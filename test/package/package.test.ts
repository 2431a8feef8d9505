// `npm run package`: the single executable runs the CLI with no Node.js and no node_modules beside it
// (lazy pino, execa and systeminformation included); the .deb installs what the units and the
// Ansible role expect, never touches the operator's policy, and passes lintian; the .rpm carries the
// same files and scriptlets that behave as the .deb's, passes rpmlint, and installs with rpm --root.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { isolate as isolateDist } from '../cli/run.js';
import { fixturePath, HAVE_FIXTURES } from '../raid/fixtures.js';
import { CV_9270, CV_9270_DETAIL, makeHost } from '../raid/host.js';
import { APT_WAIT_MS, ensureDebianTools } from '../support/apt.js';
import { expectDocSample } from '../support/doc-samples.js';
import { makeFakeHost } from '../support/fake-host.js';

const REPO = resolve(import.meta.dirname, '../..');
const FIXTURE = join(REPO, 'test/fixtures/sysfs/qemu-2s-smt2');
const out = mkdtempSync(join(tmpdir(), 'isolate-package-'));
// A directory with nothing but the executable, and a PATH without node: nothing to fall back on.
const bare = mkdtempSync(join(tmpdir(), 'isolate-bare-'));
const exe = join(bare, 'isolate');
const deb = join(out, 'isolate_0.1.0_amd64.deb');
const rpmFile = join(out, 'isolate-0.1.0-1.x86_64.rpm');

function run(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(exe, args, {
    encoding: 'utf8',
    cwd: bare,
    // This machine has node in /usr/bin: a PATH with nothing on it proves nothing is looked up.
    env: { PATH: bare, ISOLATE_LOG: 'off', ...env },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(async () => {
  await ensureDebianTools({
    '/usr/bin/dpkg-deb': 'dpkg',
    '/usr/bin/strip': 'binutils',
    '/usr/bin/lintian': 'lintian',
    '/usr/bin/rpmbuild': 'rpm',
    '/usr/bin/rpmlint': 'rpmlint',
    // The shell of the scratch root the .rpm's scriptlets run in (rpm --root chroots into it).
    '/bin/busybox': 'busybox-static',
  });
  // Asynchronously: a minute-long synchronous child would starve vitest's worker RPC.
  await execa(process.execPath, ['scripts/package.mjs', '--out', out, '--fast-deb'], { cwd: REPO });
  copyFileSync(join(out, 'isolate'), exe);
  execFileSync('chmod', ['755', exe]);
}, APT_WAIT_MS);

describe('the single executable', () => {
  it('runs without Node.js: no node on PATH, no node_modules, its code cache accepted by its runtime', () => {
    expect(spawnSync('/bin/sh', ['-c', 'command -v node'], { env: { PATH: bare } }).status).not.toBe(0);
    const r = run(['--version'], { ISOLATE_SEA_DEBUG: '1' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).version);
    expect(r.stderr).toContain('isolate sea: code cache accepted');
    expect(r.stderr).not.toMatch(/ExperimentalWarning|single executable/i);
  });

  it('has no test hooks: none of their code is in it, and a bare change list is refused', () => {
    // The control: the test build of dist/ has them, so the search below can find them.
    expect(readFileSync(join(REPO, 'dist/main.cjs'), 'utf8')).toContain('ISOLATE_TEST_BARE_PLAN');
    const bundle = readFileSync(join(out, 'work/main.cjs'), 'utf8');
    const bytes = readFileSync(exe);
    for (const hook of [
      'ISOLATE_TEST_BARE_PLAN',
      'ISOLATE_TEST_CRASH_AT_STEP',
      'ISOLATE_TEST_PAUSE_AT_STEP',
      'testBareChanges',
    ]) {
      expect(bundle, hook).not.toContain(hook);
      expect(bytes.indexOf(hook), hook).toBe(-1);
    }
    const root = makeFakeHost('qemu-2s-smt2', ['kafka.slice']);
    const bareFile = join(bare, 'bare.json');
    writeFileSync(
      bareFile,
      JSON.stringify({
        changes: [
          { backend: 'cgroupfs', target: '/kafka.slice', setting: 'cpuset.cpus', from: '', to: '0-7' },
        ],
      }),
    );
    const r = run(['apply', '--yes', '--root', root, '--plan', bareFile], { ISOLATE_TEST_BARE_PLAN: '1' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--plan .*bare\.json: it does not embed its policy/);
    expect(readFileSync(join(root, 'sys/fs/cgroup/kafka.slice/cpuset.cpus'), 'utf8').trim()).toBe('');
  });

  it('topology and plan --dry-run --json print what dist/cli.js prints', () => {
    for (const args of [
      ['topology', '--json', '--root', FIXTURE],
      ['plan', '--dry-run', '--json', '--root', FIXTURE, '--policy', join(REPO, 'policies/default.yaml')],
    ]) {
      const sea = run(args);
      const dist = isolateDist(args);
      expect(sea.code, sea.stderr).toBe(0);
      expect(JSON.parse(sea.stdout)).toEqual(JSON.parse(dist.stdout));
    }
  });

  it('topology on this host reads the CPU model through systeminformation (a lazy import)', () => {
    const r = run(['topology']);
    expect(r.code, r.stderr).toBe(0);
    const model = readFileSync('/proc/cpuinfo', 'utf8').match(/^vendor_id\s*:\s*(\S+)/m);
    expect(r.stdout.split('\n')[0]).toMatch(/GiB$/);
    expect(model).not.toBeNull();
  });

  it('apply logs through pino (a lazy import), converges, and check audits the host', () => {
    const root = makeFakeHost('qemu-2s-smt2');
    mkdirSync(join(root, 'etc/isolate'), { recursive: true });
    writeFileSync(
      join(root, 'etc/isolate/policy.yaml'),
      'apiVersion: isolate/v1\nkind: HostPolicy\nworkloads:\n  - {name: kafka, class: exclusive, cores: 1, match: {cgroup: /kafka.slice}}\n  - {name: flink, class: batch, match: {cgroup: /hadoop-yarn}}\n',
    );
    const planned = run(['plan', '--dry-run', '--root', root]);
    expect(planned.code, planned.stderr).toBe(0);
    expectDocSample('docs/install.md', 'plan', planned.stdout.replaceAll(root, '').trim());
    const applied = run(['apply', '--yes', '--root', root], { ISOLATE_LOG: 'json' });
    expect(applied.code, applied.stderr).toBe(0);
    const logs = applied.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    expect(logs.some((l) => l.name === 'isolate' && typeof l.level === 'number')).toBe(true);
    expect(readFileSync(join(root, 'sys/fs/cgroup/kafka.slice/cpuset.cpus'), 'utf8').trim()).toMatch(/^\d/);
    const again = run(['plan', '--dry-run', '--detailed-exitcode', '--root', root]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    const check = run(['check', '--json', '--root', root]);
    expect([0, 1], check.stdout + check.stderr).toContain(check.code);
    expect(JSON.parse(check.stdout)).toBeTypeOf('object');
  });

  it.skipIf(!HAVE_FIXTURES)('raid show runs a vendor tool through execa (a lazy import)', () => {
    const host = makeHost({
      drivers: ['megaraid_sas'],
      tools: { storcli: { controllers: [{ showAll: CV_9270, cv: CV_9270_DETAIL }] } },
    });
    try {
      // The simulators are Node.js scripts standing in for storcli: they, not isolate, need node.
      const r = run(['raid', 'show', '--json', '--root', host.root], {
        PATH: `${resolve(process.execPath, '..')}:/usr/bin:/bin`,
        RAID_SIM_DIR: host.dir,
        ISOLATE_RAID_LOCK: join(host.dir, 'isolate-raid.lock'),
      });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.stringify(JSON.parse(r.stdout))).toContain('9270');
      expect(host.log().some((l) => l.startsWith('storcli'))).toBe(true);
      expect(fixturePath(CV_9270)).toContain('storcli');
    } finally {
      host.cleanup();
    }
  });
});

describe('the .deb', () => {
  const dpkgDeb = (...args: string[]) => execFileSync('dpkg-deb', [...args, deb], { encoding: 'utf8' });

  it('installs the executable, the units, schemas and policies, and an empty /etc/isolate', () => {
    const files = dpkgDeb('--contents')
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(/\s+/).slice(-1)[0]);
    expect(files).toEqual(
      expect.arrayContaining([
        './usr/bin/isolate',
        './lib/systemd/system/isolate.service',
        './lib/systemd/system/isolate-check.service',
        './lib/systemd/system/isolate-check.timer',
        './usr/share/isolate/schema/policy.schema.json',
        './usr/share/isolate/policies/default.yaml',
        './usr/share/isolate/policies/kafka-flink-yarn.yaml',
        './etc/isolate/',
        './usr/share/doc/isolate/copyright',
      ]),
    );
    expect(files.filter((f) => f?.startsWith('./etc/'))).toEqual(['./etc/', './etc/isolate/']);
    const control = dpkgDeb('--field');
    expect(control).toMatch(/^Package: isolate$/m);
    expect(control).toMatch(/^Architecture: amd64$/m);
    // The units run the path the package installs.
    const unit = readFileSync(join(REPO, 'systemd/isolate.service'), 'utf8');
    expect(unit).toContain('ExecStart=/usr/bin/isolate ');
  });

  it('installed (dpkg --root), finds the default policy under /usr/share/isolate', () => {
    const dir = mkdtempSync(join(tmpdir(), 'isolate-x-'));
    execFileSync('dpkg-deb', ['-x', deb, dir]);
    const r = spawnSync(join(dir, 'usr/bin/isolate'), ['plan', '--dry-run', '--root', FIXTURE], {
      encoding: 'utf8',
      env: { PATH: '/usr/bin:/bin' },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(`${dir}/usr/share/isolate/policies/default.yaml`);
  });

  it('upgrade and purge leave the operator policy alone; purge removes /var/lib/isolate rolled back', () => {
    const root = mkdtempSync(join(tmpdir(), 'isolate-dpkg-'));
    for (const d of ['var/lib/dpkg/info', 'var/lib/dpkg/updates', 'var/log'])
      mkdirSync(join(root, d), { recursive: true });
    writeFileSync(join(root, 'var/lib/dpkg/status'), '');
    const dpkg = (...args: string[]) =>
      execFileSync(
        'dpkg',
        [
          `--root=${root}`,
          '--force-script-chrootless',
          '--force-not-root',
          '--force-depends',
          '--log=/dev/null',
          ...args,
        ],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
      );
    dpkg('-i', deb);
    expect(existsSync(join(root, 'usr/bin/isolate'))).toBe(true);
    const policy = join(root, 'etc/isolate/policy.yaml');
    const mine = "# the operator's own policy\napiVersion: isolate/v1\n";
    writeFileSync(policy, mine);
    mkdirSync(join(root, 'var/lib/isolate'), { recursive: true });
    // What a rollback leaves (postrm purges only then: test/package/postrm.test.ts has the rest).
    writeFileSync(
      join(root, 'var/lib/isolate/journal.json'),
      `${JSON.stringify({ version: 1, state: 'rolled-back', entries: [] }, null, 1)}\n`,
    );
    dpkg('-i', deb); // reinstall = upgrade path
    expect(readFileSync(policy, 'utf8')).toBe(mine);
    dpkg('--purge', 'isolate');
    expect(existsSync(join(root, 'usr/bin/isolate'))).toBe(false);
    expect(readFileSync(policy, 'utf8')).toBe(mine);
    expect(existsSync(join(root, 'var/lib/isolate'))).toBe(false);
  });

  it('is lintian clean: every remaining tag is overridden with its reason', async () => {
    const r = await execa(
      'lintian',
      ['--pedantic', '--display-info', '--fail-on', 'error,warning,info,pedantic', deb],
      { reject: false, timeout: 600_000 },
    );
    const tags = r.stdout.split('\n').filter((l) => /^[EWIPX]: /.test(l));
    expect(tags, r.stdout + r.stderr).toEqual([]);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    const overrides = readFileSync(join(REPO, 'packaging/deb/lintian-overrides'), 'utf8').split('\n');
    // Each override line comes right after its comment.
    overrides.forEach((l, i) => {
      if (l.startsWith('isolate:')) expect(overrides[i - 1], l).toMatch(/^(#|isolate:)/);
    });
  }, 600_000);
});

describe('the .deb maintainer scripts', () => {
  // prerm runs with stand-ins for isolate and deb-systemd-invoke on PATH that record their calls.
  const prerm = (arg: string, rollbackExit = 0) => {
    const dir = mkdtempSync(join(tmpdir(), 'isolate-prerm-'));
    const calls = join(dir, 'calls');
    for (const [name, code] of [
      ['isolate', rollbackExit],
      ['deb-systemd-invoke', 0],
    ] as const) {
      writeFileSync(join(dir, name), `#!/bin/sh\necho "${name} $*" >> ${calls}\nexit ${code}\n`, {
        mode: 0o755,
      });
    }
    const r = spawnSync('sh', [join(REPO, 'packaging/deb/prerm'), arg], {
      encoding: 'utf8',
      env: { PATH: `${dir}:/usr/bin:/bin` },
    });
    return { code: r.status, stderr: r.stderr, calls: existsSync(calls) ? readFileSync(calls, 'utf8') : '' };
  };

  it('prerm remove stops the agent and rolls the host back; a failed rollback does not block removal', () => {
    const ok = prerm('remove');
    expect(ok.code).toBe(0);
    expect(ok.calls).toMatch(/^isolate rollback$/m);
    if (existsSync('/run/systemd/system')) {
      expect(ok.calls.indexOf('deb-systemd-invoke stop')).toBeLessThan(ok.calls.indexOf('isolate rollback'));
    }
    const failed = prerm('remove', 3);
    expect(failed.code).toBe(0);
    expect(failed.stderr).toMatch(/rollback on removal failed/);
  });

  it('prerm upgrade leaves the host as it is', () => {
    const r = prerm('upgrade');
    expect(r.code).toBe(0);
    expect(r.calls).toBe('');
  });
});

describe('the .rpm', () => {
  const rpmQuery = (...args: string[]) =>
    execFileSync('rpm', ['-qp', ...args, rpmFile], { encoding: 'utf8' });
  // mode, owner, group, sha256 and path of every file, from the package's header.
  const headerFiles = () =>
    rpmQuery('--qf', '[%{FILEMODES:perms} %{FILEUSERNAME} %{FILEGROUPNAME} %{FILEDIGESTS} %{FILENAMES}\n]')
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [perms, user, group, digest, path] = l.split(' ');
        return { perms, user, group, digest, path: path ?? '' };
      });

  it('carries the .deb’s files (units where RHEL keeps them), the same executable, all root-owned', () => {
    const files = headerFiles();
    const debFiles = execFileSync('dpkg-deb', ['--contents', deb], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.startsWith('-'))
      .map((l) => (l.split(/\s+/).slice(-1)[0] ?? '').replace(/^\./, ''))
      // Debian's own: its copyright format, changelog and lintian overrides.
      .filter((f) => !/^\/usr\/share\/(doc\/isolate\/(copyright|changelog\.gz)|lintian\/)/.test(f))
      .map((f) => f.replace(/^\/lib\/systemd\//, '/usr/lib/systemd/'))
      .sort();
    expect(debFiles.length).toBeGreaterThan(10);
    expect(
      files
        .filter((f) => f.perms?.startsWith('-'))
        .map((f) => f.path)
        .filter((f) => f !== '/usr/share/licenses/isolate/copyright')
        .sort(),
    ).toEqual(debFiles);
    const sha = createHash('sha256')
      .update(readFileSync(join(out, 'isolate')))
      .digest('hex');
    expect(files.find((f) => f.path === '/usr/bin/isolate')).toMatchObject({
      perms: '-rwxr-xr-x',
      digest: sha,
    });
    for (const f of files) {
      expect(`${f.user}:${f.group}`, f.path).toBe('root:root');
      if (f.path !== '/usr/bin/isolate') expect(f.perms, f.path).toMatch(/^(-rw-r--r--|drwxr-xr-x)$/);
    }
    // It owns its own directories only, and ships no policy: /etc/isolate is the operator's.
    expect(files.filter((f) => f.perms?.startsWith('d')).map((f) => f.path)).toEqual([
      '/etc/isolate',
      '/usr/share/doc/isolate',
      '/usr/share/isolate',
      '/usr/share/isolate/policies',
      '/usr/share/isolate/schema',
      '/usr/share/licenses/isolate',
    ]);
    expect(
      rpmQuery('-l')
        .split('\n')
        .filter((f) => f.startsWith('/etc/')),
    ).toEqual(['/etc/isolate']);
    // The license text points at no Debian path; the man page rpmlint cannot see (see its settings).
    expect(rpmQuery('--qf', '%{LICENSE}')).toBe('Apache-2.0 AND MIT AND ISC');
    expect(rpmQuery('-l')).toContain('/usr/share/man/man1/isolate.1.gz');
  });

  it('requires what the runtime links (glibc 2.28: RHEL 8 and later), found by rpm from the ELF itself', () => {
    const requires = rpmQuery('--requires').split('\n');
    expect(requires).toEqual(
      expect.arrayContaining([
        'libc.so.6(GLIBC_2.28)(64bit)',
        'libstdc++.so.6()(64bit)',
        'libgcc_s.so.1()(64bit)',
      ]),
    );
    // Nothing newer than RHEL 8's glibc 2.28.
    const glibc = requires
      .map((r) => r.match(/^libc\.so\.6\(GLIBC_2\.(\d+)/)?.[1])
      .filter((v) => v !== undefined)
      .map(Number);
    expect(Math.max(...glibc)).toBe(28);
    expect(rpmQuery('--qf', '%{ARCH}')).toBe('x86_64');
  });

  it('has the scriptlets of packaging/rpm, preun guarded to an erase and post’s restart to an upgrade', () => {
    const scripts = rpmQuery('--scripts');
    const body = (name: string) => readFileSync(join(REPO, 'packaging/rpm', name), 'utf8').trimEnd();
    expect(scripts).toBe(
      `postinstall scriptlet (using /bin/sh):\n${body('post')}\n` +
        `preuninstall scriptlet (using /bin/sh):\n${body('preun')}\n` +
        `postuninstall scriptlet (using /bin/sh):\n${body('postun')}\n`,
    );
    expect(body('preun')).toMatch(/^if \[ "\$1" -eq 0 \]; then$/m);
    expect(body('post')).toMatch(/if \[ "\$1" -ge 2 \]; then\n\t\tsystemctl try-restart isolate\.service/);
    // As small as the .deb's: the three scriptlets are no longer than prerm, postinst and postrm.
    const lines = (dir: string, names: string[]) =>
      names.reduce((n, f) => n + readFileSync(join(REPO, 'packaging', dir, f), 'utf8').split('\n').length, 0);
    expect(lines('rpm', ['post', 'preun', 'postun'])).toBeLessThanOrEqual(
      lines('deb', ['postinst', 'prerm', 'postrm']),
    );
  });

  it('is rpmlint clean (--strict): every filter and setting comes with its reason', async () => {
    const config = join(REPO, 'packaging/rpm/rpmlint.toml');
    const r = await execa('rpmlint', ['--strict', '-c', config, rpmFile], {
      reject: false,
      timeout: 300_000,
    });
    expect(r.stdout, r.stdout + r.stderr).toMatch(/1 packages and 0 specfiles checked; 0 errors, 0 warnings/);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    // Each filter and setting comes right after its comment.
    const lines = readFileSync(config, 'utf8').split('\n');
    lines.forEach((l, i) => {
      if (/^\s*'/.test(l) || /^(?!Filters)\w+ = /.test(l)) expect(lines[i - 1], l).toMatch(/^\s*(#|')/);
      if (/^Filters = \[$/.test(l)) expect(lines[i + 1], l).toMatch(/^\s*#/);
    });
    // The control: without the settings, rpmlint does find something to say (the filters work).
    const bare = await execa('rpmlint', ['--strict', rpmFile], { reject: false, timeout: 300_000 });
    expect(bare.stdout).toMatch(/E: no-signature/);
    expect(bare.exitCode).not.toBe(0);
  }, 600_000);

  describe('installed with rpm --root into a scratch root', () => {
    // The scratch root: busybox as /bin/sh, /dev/null, stand-ins for systemctl and isolate in /usr/sbin
    // (first on the PATH rpm gives scriptlets) that record their calls in /calls, and
    // /run/systemd/system as on a host booted with systemd. rpm chroots into it for the scriptlets:
    // nothing runs on, or is written to, this machine's own root.
    function scratchRoot(rollbackExit = 0) {
      const root = mkdtempSync(join(tmpdir(), 'isolate-rpm-root-'));
      for (const d of ['bin', 'dev', 'usr/sbin', 'run/systemd/system'])
        mkdirSync(join(root, d), { recursive: true });
      expect(readFileSync('/bin/busybox').includes('/lib64/ld-linux'), '/bin/busybox is not static').toBe(
        false,
      );
      copyFileSync('/bin/busybox', join(root, 'bin/sh'));
      execFileSync('chmod', ['755', join(root, 'bin/sh')]);
      execFileSync('mknod', ['-m', '666', join(root, 'dev/null'), 'c', '1', '3']);
      for (const [name, code] of [
        ['systemctl', 0],
        ['isolate', rollbackExit],
      ] as const)
        writeFileSync(
          join(root, 'usr/sbin', name),
          `#!/bin/sh\necho "${name} $*" >> /calls\nexit ${code}\n`,
          {
            mode: 0o755,
          },
        );
      const rpm = (...args: string[]) => {
        const r = spawnSync('rpm', ['--root', root, '--dbpath', '/var/lib/rpm', ...args], {
          encoding: 'utf8',
        });
        // Debian's rpm says so on every install; it is not the package's message.
        const stderr = r.stderr.replace(/^rpm: (RPM should not be used directly|However assuming).*\n/gm, '');
        expect(r.status, `rpm ${args.join(' ')}: ${r.stderr}`).toBe(0);
        return { stdout: r.stdout, stderr };
      };
      const calls = () => {
        const f = join(root, 'calls');
        const text = existsSync(f) ? readFileSync(f, 'utf8') : '';
        writeFileSync(f, '');
        return text.split('\n').filter(Boolean);
      };
      rpm('--initdb');
      return { root, rpm, calls };
    }

    it('installs with the header’s modes and owners; the executable runs and finds the default policy', () => {
      const { root, rpm, calls } = scratchRoot();
      expect(rpm('-i', '--nodeps', rpmFile).stderr).toBe('');
      // A first install enables and starts nothing.
      expect(calls()).toEqual(['systemctl daemon-reload']);
      for (const f of headerFiles()) {
        const st = statSync(join(root, f.path));
        expect(st.uid === 0 && st.gid === 0, f.path).toBe(true);
        const mode = (st.mode & 0o7777).toString(8);
        expect(mode, f.path).toBe(f.perms?.startsWith('d') || f.path === '/usr/bin/isolate' ? '755' : '644');
      }
      expect(rpm('-q', 'isolate').stdout.trim()).toBe('isolate-0.1.0-1.x86_64');
      const r = spawnSync(join(root, 'usr/bin/isolate'), ['plan', '--dry-run', '--root', FIXTURE], {
        encoding: 'utf8',
        env: { PATH: '/usr/bin:/bin' },
      });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toContain(`${root}/usr/share/isolate/policies/default.yaml`);
    });

    it('upgrade restarts a running agent and rolls nothing back; erase disables, rolls back, keeps the policy', () => {
      const { root, rpm, calls } = scratchRoot();
      rpm('-i', '--nodeps', rpmFile);
      calls();
      const policy = join(root, 'etc/isolate/policy.yaml');
      const mine = "# the operator's own policy\napiVersion: isolate/v1\n";
      writeFileSync(policy, mine);
      mkdirSync(join(root, 'var/lib/isolate'), { recursive: true });
      writeFileSync(join(root, 'var/lib/isolate/journal.json'), '{}');
      // An upgrade in rpm's terms (the same package again: post gets 2, the old preun and postun 1).
      expect(rpm('-U', '--replacepkgs', '--nodeps', rpmFile).stderr).toBe('');
      expect(calls()).toEqual([
        'systemctl daemon-reload',
        'systemctl try-restart isolate.service',
        'systemctl daemon-reload',
      ]);
      expect(readFileSync(policy, 'utf8')).toBe(mine);
      expect(rpm('-e', 'isolate').stderr).toBe('');
      expect(calls()).toEqual([
        'systemctl --no-reload disable --now isolate-check.timer isolate.service',
        'isolate rollback',
        'systemctl daemon-reload',
      ]);
      expect(existsSync(join(root, 'usr/bin/isolate'))).toBe(false);
      expect(readFileSync(policy, 'utf8')).toBe(mine);
      // RPM has no purge: the journal stays (docs/install.md says how to remove it).
      expect(existsSync(join(root, 'var/lib/isolate/journal.json'))).toBe(true);
    });

    it('a rollback that fails on erase is reported and does not block the erase', () => {
      const { root, rpm, calls } = scratchRoot(3);
      rpm('-i', '--nodeps', rpmFile);
      calls();
      const { stderr } = rpm('-e', 'isolate');
      expect(stderr).toMatch(/^isolate: rollback on removal failed; the host keeps isolate's settings$/m);
      expect(calls()).toContain('isolate rollback');
      expect(existsSync(join(root, 'usr/bin/isolate'))).toBe(false);
    });
  });
});
