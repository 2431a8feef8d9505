/**
 * Builds the initramfs pieces. The expensive parts (busybox + tools, and node + the project) are built
 * once per content hash and cached under .vm-cache/initramfs/; each run only adds a small scenario
 * archive, which the kernel unpacks on top of the cached ones (concatenated cpio archives are allowed).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import { basename, join, relative } from 'node:path';
import { buildDist } from '../../support/build.js';
import { CpioWriter } from './cpio.js';
import type { VmPrereqs } from './ensure.js';
import { REPO_ROOT, VM_CACHE } from './paths.js';

/** Guest directory holding the built project (dist/, package.json, policies/, node_modules/). */
export const GUEST_PROJECT_DIR = '/opt/isolate';

// Bump when the layout of the base archive changes in a way the content hash cannot see.
const BASE_FORMAT = 3;

/** What PID 1 of every guest (here, and systemd.ts) prints just before it runs the scenario. */
export const READY_MARKER = '=====HARNESS-READY=====';

/**
 * PID 1. Mounts what the scenario needs, runs it, prints its exit status between markers, powers off.
 * `poweroff -f` skips init scripts (there are none) and makes qemu exit because of -no-reboot.
 * Before it, `stty` (an unchanged mode, set with tcsetattr(TCSADRAIN)) waits until the serial port has
 * sent all it holds: poweroff does not wait, and the last kilobytes of the console, the exit marker
 * with them, were lost whenever qemu's output was read late (harness.test.ts, "reads it late").
 */
const INIT = `#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /tmp /run /root /bin /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t cgroup2 none /sys/fs/cgroup
export PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME=/root TERM=dumb
cd /root
[ -f /harness/modules.sh ] && . /harness/modules.sh
echo ${READY_MARKER}
sh /harness/scenario.sh
rc=$?
sync
echo
echo "=====EXIT $rc====="
stty onlcr 0<&1 2>/dev/null
poweroff -f
`;

interface HostFile {
  guest: string;
  host?: string;
  data?: Buffer;
  mode: number;
  symlink?: string;
}

/** Shared libraries a dynamically linked binary needs, as ldd reports them (guest path = host path). */
function libsOf(binary: string): HostFile[] {
  const out = execFileSync('ldd', [binary], { encoding: 'utf8' });
  const files: HostFile[] = [];
  for (const line of out.split('\n')) {
    const m = /=>\s+(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    // ldd prints symlink paths (libc.so.6 -> libc-2.36.so); we store the content under the linked name.
    if (m) files.push({ guest: m[1]!, host: m[1]!, mode: 0o755 });
  }
  return files;
}

function cachedArchive(kind: string, files: HostFile[], extra: string): string {
  const hash = createHash('sha256').update(`${kind}:${BASE_FORMAT}:${extra}\n`);
  const loaded = files.map((f) => {
    const data =
      f.data ?? (f.host !== undefined && f.symlink === undefined ? readFileSync(f.host) : Buffer.alloc(0));
    hash.update(`${f.guest}\0${f.mode}\0${f.symlink ?? ''}\0${data.length}\0`).update(data);
    return { ...f, data };
  });
  const key = hash.digest('hex').slice(0, 20);
  const dir = join(VM_CACHE, 'initramfs');
  const path = join(dir, `${kind}-${key}.cpio`);
  if (existsSync(path)) return path;
  mkdirSync(dir, { recursive: true });
  const w = new CpioWriter();
  for (const f of loaded) {
    if (f.symlink !== undefined) w.symlink(f.guest, f.symlink);
    else w.file(f.guest, f.data, f.mode);
  }
  if (kind === 'base') w.charDevice('/dev/console', 5, 1).charDevice('/dev/null', 1, 3, 0o666);
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, w.finish());
  renameSync(tmp, path);
  return path;
}

/** busybox, /init, and lscpu (the sysfs fixtures record its view as the expected answer). */
export function baseArchive(pre: VmPrereqs): string {
  const files: HostFile[] = [
    { guest: '/init', data: Buffer.from(INIT), mode: 0o755 },
    { guest: '/bin/busybox', host: pre.busybox, mode: 0o755 },
  ];
  const lscpu = '/usr/bin/lscpu';
  if (existsSync(lscpu)) files.push({ guest: lscpu, host: lscpu, mode: 0o755 }, ...libsOf(lscpu));
  return cachedArchive('base', files, pre.kernel.release);
}

let built = false;

/**
 * Node, its libraries, and the project as it would be installed: dist/, package.json, policies/ and the
 * production dependencies only (devDependencies such as vitest or esbuild would triple the archive).
 * `mapPath` rewrites guest paths for a userland the archive is layered on (see rootfs.ts guestPathIn).
 */
export function projectArchive(mapPath?: (guestPath: string) => string): string {
  if (!built && process.env.ISOLATE_VM_SKIP_BUILD !== '1') {
    buildDist('pipe');
    built = true;
  }
  if (!existsSync(join(REPO_ROOT, 'dist')))
    throw new Error(`${REPO_ROOT}/dist missing: build the project first`);
  const node = process.execPath;
  const files: HostFile[] = [
    { guest: '/usr/bin/node', host: node, mode: 0o755 },
    ...libsOf(node),
    { guest: `${GUEST_PROJECT_DIR}/package.json`, host: join(REPO_ROOT, 'package.json'), mode: 0o644 },
  ];
  addTree(files, join(REPO_ROOT, 'dist'), `${GUEST_PROJECT_DIR}/dist`, false);
  if (existsSync(join(REPO_ROOT, 'policies'))) {
    addTree(files, join(REPO_ROOT, 'policies'), `${GUEST_PROJECT_DIR}/policies`, false);
  }
  for (const pkgDir of prodPackageDirs()) {
    addTree(files, pkgDir, `${GUEST_PROJECT_DIR}/${relative(REPO_ROOT, pkgDir)}`, true);
  }
  const cli = join(REPO_ROOT, 'dist', 'cli.js');
  if (existsSync(cli))
    files.push({ guest: '/usr/local/bin/isolate', symlink: `${GUEST_PROJECT_DIR}/dist/cli.js`, mode: 0o777 });
  if (mapPath)
    return cachedArchive(
      'project',
      files.map((f) => ({ ...f, guest: mapPath(f.guest) })),
      'mapped',
    );
  return cachedArchive('project', files, '');
}

function prodPackageDirs(): string[] {
  let out: string;
  try {
    out = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (e) {
    // npm ls exits non-zero on peer-dependency or extraneous warnings but still prints the tree.
    out = String((e as { stdout?: string }).stdout ?? '');
  }
  const dirs = out
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && l !== REPO_ROOT && l.startsWith(join(REPO_ROOT, 'node_modules')));
  if (dirs.length === 0) throw new Error('npm ls --omit=dev listed no production packages; run npm ci');
  return dirs;
}

/** Nested node_modules are skipped when `skipNested`: npm ls lists the ones production needs separately. */
function addTree(files: HostFile[], hostDir: string, guestDir: string, skipNested: boolean): void {
  for (const ent of readdirSync(hostDir, { withFileTypes: true })) {
    const h = join(hostDir, ent.name);
    const g = `${guestDir}/${ent.name}`;
    if (ent.isDirectory()) {
      if (skipNested && ent.name === 'node_modules') continue;
      addTree(files, h, g, skipNested);
    } else if (ent.isSymbolicLink()) {
      files.push({ guest: g, symlink: readlinkSync(h), mode: 0o777 });
    } else if (ent.isFile()) {
      files.push({ guest: g, host: h, mode: lstatSync(h).mode & 0o111 ? 0o755 : 0o644 });
    }
  }
}

/**
 * Kernel modules (with their dependencies, in load order) plus a script that insmods them. The cloud
 * kernel has virtio-net and virtio-blk as modules, and there is no modules.dep in the package (depmod
 * runs at install time), so dependencies are read from each module's own `.modinfo` `depends=` field.
 */
export function moduleFiles(
  pre: VmPrereqs,
  names: string[],
): { files: Record<string, Buffer>; script: string } {
  const index = new Map<string, string>();
  const walk = (d: string) => {
    for (const ent of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, ent.name);
      if (ent.isDirectory()) walk(p);
      else if (ent.name.endsWith('.ko')) index.set(basename(ent.name, '.ko').replace(/-/g, '_'), p);
    }
  };
  walk(join(pre.kernel.modulesDir, 'kernel'));
  const order: string[] = [];
  const seen = new Set<string>();
  const visit = (raw: string) => {
    const name = raw.replace(/-/g, '_');
    if (seen.has(name)) return;
    seen.add(name);
    const path = index.get(name);
    if (!path) throw new Error(`kernel module ${raw} not found in ${pre.kernel.modulesDir}`);
    const m = /\0depends=([^\0]*)\0/.exec(readFileSync(path).toString('latin1'));
    for (const dep of (m?.[1] ?? '').split(',').filter(Boolean)) visit(dep);
    order.push(name);
  };
  names.forEach(visit);
  const files: Record<string, Buffer> = {};
  const lines: string[] = [];
  for (const name of order) {
    const guest = `/lib/modules/${pre.kernel.release}/${name}.ko`;
    files[guest] = readFileSync(index.get(name)!);
    lines.push(`insmod ${guest} || echo "harness: insmod ${name} failed"`);
  }
  return { files, script: `${lines.join('\n')}\n` };
}
