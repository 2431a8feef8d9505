/**
 * A real Debian userland (systemd as PID 1) for guests that test systemd's own behaviour. Built with
 * mmdebstrap from Debian's mirror once per set of inputs and cached under .vm-cache/rootfs/ as a newc
 * archive the kernel unpacks as initramfs: the cloud kernel has virtio-blk only as a module, and an
 * initramfs needs no disk image, no loop device and no root on the host. A variant (the base plus a
 * scenario's packages) is a second archive layered on the base's: a copy of the base tree, the packages
 * installed into it with apt in a chroot, and only what that added or changed packed. Each variant
 * used to be a whole mmdebstrap of its own, the base's work done four times over (issue 59).
 */
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  type BigIntStats,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  type Stats,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CpioWriter } from './cpio.js';
import { aptInstall, VmPrereqError } from './ensure.js';
import { VM_CACHE } from './paths.js';

export interface RootfsInfo {
  /** The cached archives, in order the first parts of the guest's initrd: the base's, a variant's layer. */
  layers: string[];
  suite: string;
  /** `systemctl --version` first line in the tree, e.g. `systemd 252 (252.39-1~deb12u2)`. */
  systemdVersion: string;
  /** Top-level symlinks (merged /usr: `bin` → `usr/bin`, `lib` → `usr/lib`, ...). */
  topSymlinks: Record<string, string>;
  /** Names in /usr/lib/systemd/system-generators (systemd runs them all at boot and on every daemon-reload). */
  generators: string[];
  /** Seconds mmdebstrap (a variant: apt) + packing took when the cache entry was made. */
  buildSeconds: number;
  /** The layers' size in all. */
  bytes: number;
}

/** What info.json holds: the layer's own facts (its cpio is rootfs.cpio beside it). */
type LayerInfo = Omit<RootfsInfo, 'layers'>;

const MMDEBSTRAP = '/usr/bin/mmdebstrap';
// Bump when the packing changes in a way the inputs below cannot see.
const ROOTFS_FORMAT = 3;
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
  if (extra.length === 0) return (await findOrBuildBase()).info;
  const b = await findOrBuildBase();
  const key = createHash('sha256')
    .update(JSON.stringify({ ROOTFS_FORMAT, base: b.key, extra }))
    .digest('hex')
    .slice(0, 16);
  const dir = join(VM_CACHE, 'rootfs', key);
  const layer = readInfo(dir) ?? (await buildLayer(dir, b.dir, extra));
  return { ...layer, layers: [...b.info.layers, ...layer.layers], bytes: b.info.bytes + layer.bytes };
}

type Base = { info: RootfsInfo; dir: string; key: string };
let base: Promise<Base> | undefined;

/** Once a process (variants built side by side wait for the one base). */
function findOrBuildBase(): Promise<Base> {
  base ??= baseEntry();
  return base;
}

/** The base tree is kept beside its archive: the variants are made from copies of it. */
async function baseEntry(): Promise<Base> {
  const key = createHash('sha256')
    .update(JSON.stringify({ ROOTFS_FORMAT, SUITE, MIRROR, MMDEBSTRAP_ARGS }))
    .digest('hex')
    .slice(0, 16);
  const dir = join(VM_CACHE, 'rootfs', key);
  const found = existsSync(join(dir, 'tree')) ? readInfo(dir) : undefined;
  return { info: found ?? (await build(dir)), dir, key };
}

function readInfo(dir: string): RootfsInfo | undefined {
  const f = join(dir, 'info.json');
  if (!existsSync(f) || !existsSync(join(dir, 'rootfs.cpio'))) return undefined;
  return { ...(JSON.parse(readFileSync(f, 'utf8')) as LayerInfo), layers: [join(dir, 'rootfs.cpio')] };
}

async function build(dir: string): Promise<RootfsInfo> {
  if (!existsSync(MMDEBSTRAP)) aptInstall(['mmdebstrap']);
  if (!existsSync(MMDEBSTRAP))
    throw new VmPrereqError(`${MMDEBSTRAP} still missing after installing mmdebstrap`);
  return intoCache(dir, async (tree) => {
    try {
      // Root mode (we are root for apt anyway) writes real device nodes and owners into the tree.
      await promisify(execFile)(MMDEBSTRAP, ['--mode=root', ...MMDEBSTRAP_ARGS, SUITE, tree, MIRROR], {
        maxBuffer: 64 << 20,
      });
    } catch (e) {
      const err = e as { stderr?: string; message: string };
      throw new VmPrereqError(`mmdebstrap failed: ${err.stderr?.slice(-3000) ?? err.message}`);
    }
    const w = new CpioWriter();
    packTree(w, tree, '');
    return { data: w.finish(), keepTree: true };
  });
}

/**
 * apt in a chroot of the copied base tree, in a mount namespace of its own (its /proc and /sys go when
 * it ends, whatever happens); the mirror and dpkg's excludes are mmdebstrap's, which it left in the
 * tree (/etc/apt/sources.list, apt.conf.d and dpkg.cfg.d/99mmdebstrap). No service starts (policy-rc.d);
 * the tree's resolv.conf is the host's meanwhile, and its own again after, as are apt's lists (none).
 */
const INSTALL = `set -e
t=$1; shift
mount -t proc proc "$t/proc"
mount -t sysfs sysfs "$t/sys"
cp -a "$t/etc/resolv.conf" "$t/etc/resolv.conf.isolate-base"
cat /etc/resolv.conf > "$t/etc/resolv.conf"
printf '#!/bin/sh\nexit 101\n' > "$t/usr/sbin/policy-rc.d"
chmod 755 "$t/usr/sbin/policy-rc.d"
chroot "$t" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 apt-get -q update
chroot "$t" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive apt-get -q -y --no-install-recommends install "$@"
chroot "$t" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin apt-get clean
rm -rf "$t"/var/lib/apt/lists/* "$t/usr/sbin/policy-rc.d"
mv "$t/etc/resolv.conf.isolate-base" "$t/etc/resolv.conf"
`;

async function buildLayer(dir: string, baseDir: string, extra: string[]): Promise<RootfsInfo> {
  return intoCache(dir, async (tree) => {
    const sh = promisify(execFile);
    try {
      await sh('cp', ['-a', join(baseDir, 'tree'), tree]);
      // openjdk's postinst registers its man pages as update-alternatives slave links, which fails in a
      // tree whose /usr/share/man/* is excluded unless the directory itself is there.
      if (extra.some((p) => p.startsWith('openjdk-')))
        mkdirSync(join(tree, 'usr/share/man/man1'), { recursive: true });
      await sh(
        'unshare',
        ['--mount', '--propagation', 'private', '--', 'sh', '-c', INSTALL, 'sh', tree, ...extra],
        {
          maxBuffer: 64 << 20,
        },
      );
    } catch (e) {
      const err = e as { stderr?: string; message: string };
      throw new VmPrereqError(
        `installing ${extra.join(' ')} into a copy of the base rootfs failed: ${err.stderr?.slice(-3000) ?? err.message}`,
      );
    }
    const w = new CpioWriter();
    packChanges(w, join(baseDir, 'tree'), tree, '');
    return { data: w.finish(), keepTree: false };
  });
}

/**
 * Builds a cache entry in a temporary directory (`make` fills `tree` and returns the archive) and moves
 * it into place whole: a failed build leaves nothing that reads as an entry.
 */
async function intoCache(
  dir: string,
  make: (tree: string) => Promise<{ data: Buffer; keepTree: boolean }>,
): Promise<RootfsInfo> {
  const started = Date.now();
  const tmp = `${dir}.tmp-${process.pid}`;
  const tree = join(tmp, 'tree');
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  try {
    const { data, keepTree } = await make(tree);
    const systemdVersion = execFileSync('chroot', [tree, 'systemctl', '--version'], { encoding: 'utf8' })
      .split('\n')[0]!
      .trim();
    const generators = readdirSync(join(tree, 'usr/lib/systemd/system-generators')).sort();
    const topSymlinks: Record<string, string> = {};
    for (const name of readdirSync(tree))
      if (lstatSync(join(tree, name)).isSymbolicLink()) topSymlinks[name] = readlinkSync(join(tree, name));
    writeFileSync(join(tmp, 'rootfs.cpio'), data);
    const info: LayerInfo = {
      suite: SUITE,
      systemdVersion,
      topSymlinks,
      generators,
      buildSeconds: Math.round((Date.now() - started) / 100) / 10,
      bytes: data.length,
    };
    writeFileSync(join(tmp, 'info.json'), `${JSON.stringify(info, null, 2)}\n`);
    if (!keepTree) rmSync(tree, { recursive: true, force: true });
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
function packTree(w: CpioWriter, host: string, guest: string): void {
  for (const name of readdirSync(host).sort()) {
    const g = guest === '' ? name : `${guest}/${name}`;
    const h = join(host, name);
    const st = lstatSync(h);
    packEntry(w, h, g, st);
    if (st.isDirectory()) packTree(w, h, g);
  }
}

/**
 * What `variant` added to or changed in `base`, depth-first: new entries, files whose size, mtime, mode
 * or owner differ (cp -a kept the base's), changed links and directories. A directory the variant did
 * not change is marked as existing (CpioWriter.existing), never repeated. A path the variant removed
 * stays in the guest (an archive cannot remove); apt adds packages here, it removes nothing.
 */
function packChanges(w: CpioWriter, base: string, variant: string, guest: string): void {
  for (const name of readdirSync(join(variant, guest)).sort()) {
    const g = guest === '' ? name : `${guest}/${name}`;
    const v = lstatSync(join(variant, g), { bigint: true });
    const b = lstatOrNull(join(base, g));
    if (v.isDirectory()) {
      if (b?.isDirectory() && sameMeta(b, v)) w.existing(g);
      else packEntry(w, join(variant, g), g, lstatSync(join(variant, g)));
      packChanges(w, base, variant, g);
      continue;
    }
    if (b && sameEntry(join(base, g), b, join(variant, g), v)) continue;
    // The kernel's unpacker replaces an entry of another type but will not overwrite a link with a
    // link: an empty file first makes it one of another type.
    if (b?.isSymbolicLink() && v.isSymbolicLink()) w.file(g, '');
    packEntry(w, join(variant, g), g, lstatSync(join(variant, g)));
  }
}

function lstatOrNull(p: string): BigIntStats | null {
  try {
    return lstatSync(p, { bigint: true });
  } catch {
    return null;
  }
}

function sameMeta(a: BigIntStats, b: BigIntStats): boolean {
  return a.mode === b.mode && a.uid === b.uid && a.gid === b.gid;
}

function sameEntry(ap: string, a: BigIntStats, bp: string, b: BigIntStats): boolean {
  if (!sameMeta(a, b)) return false;
  if (a.isSymbolicLink()) return readlinkSync(ap) === readlinkSync(bp);
  if (a.isFile()) return a.size === b.size && a.mtimeNs === b.mtimeNs;
  return a.rdev === b.rdev;
}

/** One entry of the archive for a path of the tree; sockets, fifos and block devices are skipped. */
function packEntry(w: CpioWriter, host: string, guest: string, st: Stats): void {
  const perm = st.mode & 0o7777;
  const owner = { uid: st.uid, gid: st.gid };
  if (st.isSymbolicLink()) w.symlink(guest, readlinkSync(host));
  else if (st.isDirectory()) w.dir(guest, perm, owner);
  else if (st.isFile()) w.file(guest, readFileSync(host), perm, owner);
  else if (st.isCharacterDevice())
    w.charDevice(
      guest,
      Math.floor(st.rdev / 256) & 0xfff,
      (st.rdev & 0xff) | ((st.rdev >> 12) & 0xfff00),
      perm,
    );
  // Sockets, fifos and block devices: mmdebstrap makes none, and /dev is devtmpfs at boot anyway.
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
