/**
 * A real Debian userland (systemd as PID 1) for guests that test systemd's own behaviour. Built with
 * mmdebstrap from Debian's mirror once per set of inputs and cached under .vm-cache/rootfs/ as a newc
 * archive the kernel unpacks as initramfs: the cloud kernel has virtio-blk only as a module, and an
 * initramfs needs no disk image, no loop device and no root on the host.
 */
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CpioWriter } from './cpio.js';
import { aptInstall, VmPrereqError } from './ensure.js';
import { VM_CACHE } from './paths.js';

export interface RootfsInfo {
  /** The cached archive, to be the first part of the guest's initrd. */
  cpio: string;
  suite: string;
  /** `systemctl --version` first line in the tree, e.g. `systemd 252 (252.39-1~deb12u2)`. */
  systemdVersion: string;
  /** Top-level symlinks (merged /usr: `bin` → `usr/bin`, `lib` → `usr/lib`, ...). */
  topSymlinks: Record<string, string>;
  /** Names in /usr/lib/systemd/system-generators (systemd runs them all at boot and on every daemon-reload). */
  generators: string[];
  /** Seconds mmdebstrap + packing took when the cache entry was made. */
  buildSeconds: number;
  bytes: number;
}

const MMDEBSTRAP = '/usr/bin/mmdebstrap';
// Bump when the packing changes in a way the inputs below cannot see.
const ROOTFS_FORMAT = 2;
// The host's own release: the suite the CI image's apt already trusts (debian-archive-keyring).
const SUITE = 'bookworm';
const MIRROR = process.env.ISOLATE_VM_DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';
const INCLUDE = ['systemd', 'systemd-sysv', 'dbus', 'procps', 'util-linux'];
// Documentation and translations are a fifth of the tree and nothing in a guest reads them.
const MMDEBSTRAP_ARGS = [
  '--variant=minbase',
  // Symlinks for merged /usr made by a hook: the usrmerge package would pull in perl (~50 MB).
  '--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr',
  `--include=${INCLUDE.join(',')}`,
  '--aptopt=Acquire::Languages "none"',
  // No fsync per unpacked file: the tree is packed into the archive and removed right after.
  '--dpkgopt=force-unsafe-io',
  '--dpkgopt=path-exclude=/usr/share/man/*',
  '--dpkgopt=path-exclude=/usr/share/doc/*',
  '--dpkgopt=path-exclude=/usr/share/locale/*',
  '--dpkgopt=path-exclude=/usr/share/info/*',
];

const MAN1_HOOK = '--setup-hook=mkdir -p "$1/usr/share/man/man1"';

const cached = new Map<string, Promise<RootfsInfo>>();

/**
 * Finds the cached Debian systemd rootfs or builds it (35-120 s on the 2-core box, most of it
 * mmdebstrap). Async so a cold build does not stall the vitest worker's RPC for minutes.
 * `packages`: Debian packages on top of the base set (a variant with its own cache entry, e.g.
 * ansible-core for the role test); the base variant's cache key does not depend on this parameter.
 */
export function systemdRootfs(packages: readonly string[] = []): Promise<RootfsInfo> {
  const extra = [...new Set(packages)].sort();
  const id = extra.join(',');
  let p = cached.get(id);
  if (!p) {
    p = findOrBuild(extra);
    cached.set(id, p);
  }
  return p;
}

async function findOrBuild(extra: string[]): Promise<RootfsInfo> {
  const args = [...MMDEBSTRAP_ARGS, ...(extra.length > 0 ? [`--include=${extra.join(',')}`] : [])];
  // openjdk's postinst registers its man pages as update-alternatives slave links, which fails in a
  // tree whose /usr/share/man/* is excluded unless the directory itself is there.
  if (extra.some((p) => p.startsWith('openjdk-'))) args.push(MAN1_HOOK);
  const key = createHash('sha256')
    .update(JSON.stringify({ ROOTFS_FORMAT, SUITE, MIRROR, MMDEBSTRAP_ARGS: args }))
    .digest('hex')
    .slice(0, 16);
  const dir = join(VM_CACHE, 'rootfs', key);
  return readInfo(dir) ?? (await build(dir, args));
}

function readInfo(dir: string): RootfsInfo | undefined {
  const f = join(dir, 'info.json');
  if (!existsSync(f) || !existsSync(join(dir, 'rootfs.cpio'))) return undefined;
  return {
    ...(JSON.parse(readFileSync(f, 'utf8')) as Omit<RootfsInfo, 'cpio'>),
    cpio: join(dir, 'rootfs.cpio'),
  };
}

async function build(dir: string, args: string[]): Promise<RootfsInfo> {
  if (!existsSync(MMDEBSTRAP)) aptInstall(['mmdebstrap']);
  if (!existsSync(MMDEBSTRAP))
    throw new VmPrereqError(`${MMDEBSTRAP} still missing after installing mmdebstrap`);
  const started = Date.now();
  const tmp = `${dir}.tmp-${process.pid}`;
  const tree = join(tmp, 'tree');
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  try {
    try {
      // Root mode (we are root for apt anyway) writes real device nodes and owners into the tree.
      await promisify(execFile)(MMDEBSTRAP, ['--mode=root', ...args, SUITE, tree, MIRROR], {
        maxBuffer: 64 << 20,
      });
    } catch (e) {
      const err = e as { stderr?: string; message: string };
      throw new VmPrereqError(`mmdebstrap failed: ${err.stderr?.slice(-3000) ?? err.message}`);
    }
    const systemdVersion = execFileSync('chroot', [tree, 'systemctl', '--version'], { encoding: 'utf8' })
      .split('\n')[0]!
      .trim();
    const generators = readdirSync(join(tree, 'usr/lib/systemd/system-generators')).sort();
    const w = new CpioWriter();
    const topSymlinks: Record<string, string> = {};
    packTree(w, tree, '', topSymlinks);
    const data = w.finish();
    writeFileSync(join(tmp, 'rootfs.cpio'), data);
    const info = {
      suite: SUITE,
      systemdVersion,
      topSymlinks,
      generators,
      buildSeconds: Math.round((Date.now() - started) / 100) / 10,
      bytes: data.length,
    };
    writeFileSync(join(tmp, 'info.json'), `${JSON.stringify(info, null, 2)}\n`);
    rmSync(tree, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const info = readInfo(dir);
  if (!info) throw new VmPrereqError(`rootfs build into ${dir} left no archive`);
  return info;
}

/** Depth-first, parents before children; hard links become copies (a handful of small files). */
function packTree(w: CpioWriter, host: string, guest: string, topSymlinks: Record<string, string>): void {
  for (const name of readdirSync(host).sort()) {
    const h = join(host, name);
    const g = guest === '' ? name : `${guest}/${name}`;
    const st = lstatSync(h);
    const perm = st.mode & 0o7777;
    const owner = { uid: st.uid, gid: st.gid };
    if (st.isSymbolicLink()) {
      const target = readlinkSync(h);
      if (guest === '') topSymlinks[name] = target;
      w.symlink(g, target);
    } else if (st.isDirectory()) {
      w.dir(g, perm, owner);
      packTree(w, h, g, topSymlinks);
    } else if (st.isFile()) {
      w.file(g, readFileSync(h), perm, owner);
    } else if (st.isCharacterDevice()) {
      w.charDevice(
        g,
        Math.floor(st.rdev / 256) & 0xfff,
        (st.rdev & 0xff) | ((st.rdev >> 12) & 0xfff00),
        perm,
      );
    }
    // Sockets, fifos and block devices: mmdebstrap makes none, and /dev is devtmpfs at boot anyway.
  }
}

/**
 * Guest path as it must be written into a later archive layered on this rootfs: a directory entry
 * named `lib` would make the kernel's unpacker replace the merged-/usr symlink `lib → usr/lib` with an
 * empty directory (it unlinks an entry of a different type), taking /lib/systemd/systemd with it.
 */
export function guestPathIn(rootfs: Pick<RootfsInfo, 'topSymlinks'>, path: string): string {
  const m = /^\/?([^/]+)(\/.*)?$/.exec(path);
  if (!m) return path;
  const target = rootfs.topSymlinks[m[1]!];
  return target !== undefined && !target.startsWith('/') ? `/${target}${m[2] ?? ''}` : path;
}
