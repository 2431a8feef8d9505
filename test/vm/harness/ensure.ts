/**
 * Makes sure everything a qemu guest needs is on this machine: qemu, a static busybox and a Debian
 * cloud kernel. Missing packages are installed with apt-get when we are root; otherwise we throw.
 * Never skips: CI that cannot boot VMs must fail loudly, not report green with the VM tests missing.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { aptGet, aptGetInstall } from '../../support/apt.js';
import { VM_CACHE } from './paths.js';

export interface KernelInfo {
  /** Path to the bzImage handed to qemu's -kernel. */
  vmlinuz: string;
  /** `uname -r` of the guest, e.g. `6.1.0-57-cloud-amd64`. */
  release: string;
  /** Debian package and version it came from, e.g. `linux-image-6.1.0-57-cloud-amd64 6.1.192-3`. */
  source: string;
  /** `lib/modules/<release>` of the extracted package (the cloud kernel builds virtio as modules). */
  modulesDir: string;
}

export interface VmPrereqs {
  qemu: string;
  busybox: string;
  kernel: KernelInfo;
}

const QEMU = '/usr/bin/qemu-system-x86_64';
// busybox-static installs here; the dynamic `busybox` package uses the same path, so we also check it is static.
const BUSYBOX = '/bin/busybox';
const META_PACKAGE = 'linux-image-cloud-amd64';

let cached: VmPrereqs | undefined;

export class VmPrereqError extends Error {
  override name = 'VmPrereqError';
}

export function ensureVmPrereqs(): VmPrereqs {
  if (cached) return cached;
  const missing: string[] = [];
  if (!existsSync(QEMU)) missing.push('qemu-system-x86');
  if (!existsSync(BUSYBOX) || !isStatic(BUSYBOX)) missing.push('busybox-static');
  if (missing.length > 0) aptInstall(missing);
  if (!existsSync(QEMU)) throw new VmPrereqError(`${QEMU} still missing after installing qemu-system-x86`);
  if (!isStatic(BUSYBOX))
    throw new VmPrereqError(`${BUSYBOX} is not statically linked; install busybox-static`);
  cached = { qemu: QEMU, busybox: BUSYBOX, kernel: ensureKernel() };
  return cached;
}

function isStatic(path: string): boolean {
  if (!existsSync(path)) return false;
  // An ELF with a PT_INTERP segment names its dynamic loader; a static one has none. Checking for the
  // loader path string is enough for busybox and avoids depending on file(1).
  return !readFileSync(path).includes('/lib64/ld-linux');
}

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** Installs Debian packages (root only; otherwise throws with the command to run). */
export function aptInstall(pkgs: string[]): void {
  if (!isRoot()) {
    throw new VmPrereqError(
      `VM tests need ${pkgs.join(', ')} and we are not root to install them. ` +
        `Run: sudo apt-get install -y ${pkgs.join(' ')}`,
    );
  }
  try {
    aptGetInstall(pkgs);
  } catch (e) {
    throw new VmPrereqError(`apt-get install ${pkgs.join(' ')} failed: ${errText(e)}`);
  }
}

/**
 * The kernel is pinned by what is already in the cache (`kernel/current`), so every run boots the same
 * kernel until someone deletes `.vm-cache`. ISOLATE_VM_KERNEL_DEB points at a specific .deb instead.
 */
function ensureKernel(): KernelInfo {
  const kdir = join(VM_CACHE, 'kernel');
  const pointer = join(kdir, 'current');
  if (!process.env.ISOLATE_VM_KERNEL_DEB && existsSync(pointer)) {
    const info = readInfo(join(kdir, readFileSync(pointer, 'utf8').trim()));
    if (info) return info;
  }
  mkdirSync(kdir, { recursive: true });
  const deb = process.env.ISOLATE_VM_KERNEL_DEB ?? downloadKernelDeb();
  const key = createHash('sha256').update(readFileSync(deb)).digest('hex').slice(0, 16);
  const dir = join(kdir, key);
  let info = readInfo(dir);
  if (!info) {
    const tmp = `${dir}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    execFileSync('dpkg', ['-x', deb, join(tmp, 'root')], { stdio: 'pipe' });
    const boot = join(tmp, 'root', 'boot');
    const vmlinuz = readdirSync(boot).find((f) => f.startsWith('vmlinuz-'));
    if (!vmlinuz) throw new VmPrereqError(`no boot/vmlinuz-* in ${deb}`);
    const release = vmlinuz.slice('vmlinuz-'.length);
    const pkg = execFileSync('dpkg-deb', ['-f', deb, 'Package', 'Version'], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map((l) => l.replace(/^\w+: /, ''))
      .join(' ');
    writeFileSync(join(tmp, 'info.json'), JSON.stringify({ release, source: pkg, vmlinuz }, null, 2));
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
    info = readInfo(dir);
    if (!info) throw new VmPrereqError(`kernel extraction into ${dir} failed`);
  }
  if (!process.env.ISOLATE_VM_KERNEL_DEB) writeFileSync(pointer, `${key}\n`);
  return info;
}

function readInfo(dir: string): KernelInfo | undefined {
  const f = join(dir, 'info.json');
  if (!existsSync(f)) return undefined;
  const j = JSON.parse(readFileSync(f, 'utf8')) as { release: string; source: string; vmlinuz: string };
  const vmlinuz = join(dir, 'root', 'boot', j.vmlinuz);
  if (!existsSync(vmlinuz)) return undefined;
  return {
    vmlinuz,
    release: j.release,
    source: j.source,
    modulesDir: join(dir, 'root', 'lib', 'modules', j.release),
  };
}

function downloadKernelDeb(): string {
  const versioned = resolveVersionedKernel();
  const tmp = mkdtempSync(join(tmpdir(), 'isolate-kernel-'));
  try {
    // apt-get download needs no root; it only fetches into the cwd.
    execFileSync('apt-get', ['download', versioned], { cwd: tmp, stdio: 'pipe' });
  } catch (e) {
    throw new VmPrereqError(`apt-get download ${versioned} failed: ${errText(e)}`);
  }
  const deb = readdirSync(tmp).find((f) => f.endsWith('.deb'));
  if (!deb) throw new VmPrereqError(`apt-get download ${versioned} produced no .deb`);
  return join(tmp, deb);
}

function resolveVersionedKernel(): string {
  const query = () =>
    execFileSync('apt-cache', ['depends', META_PACKAGE], { encoding: 'utf8', stdio: 'pipe' });
  let out: string;
  try {
    out = query();
  } catch {
    if (!isRoot()) {
      throw new VmPrereqError(`apt-cache knows no ${META_PACKAGE}; run apt-get update as root`);
    }
    aptGet(['update']);
    out = query();
  }
  const m = /Depends: (linux-image-\S+-cloud-amd64)/.exec(out);
  if (!m) throw new VmPrereqError(`cannot find the versioned kernel ${META_PACKAGE} depends on:\n${out}`);
  return m[1]!;
}

function errText(e: unknown): string {
  const err = e as { stderr?: Buffer | string; message?: string };
  return (err.stderr?.toString() || err.message || String(e)).trim();
}
