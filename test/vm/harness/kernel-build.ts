/**
 * A guest kernel built here from Debian's kernel source, for what no Debian kernel package has:
 * io.latency (CONFIG_BLK_CGROUP_IOLATENCY is not set in bookworm's and trixie's cloud and generic
 * kernels). `make tinyconfig` plus a committed fragment (kernel/iolatency.config), everything built in,
 * so a build takes minutes on 2 cores instead of Debian's full config's hour.
 *
 * Cached under .vm-cache/kernel-build/<key>, the key being the source package's version, the
 * fragment's bytes and BUILD_FORMAT: the same inputs are built once per cache. The build runs in a
 * directory of its own and its result is renamed into place only when complete, so an interrupted or
 * failed build leaves nothing that reads as a kernel (and its directory is removed by a later run
 * once it is hours old).
 */
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
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
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { aptInstall, type KernelInfo, VmPrereqError } from './ensure.js';
import { REPO_ROOT, VM_CACHE } from './paths.js';
import { waitForPreparation } from './prepare-state.js';

const run = promisify(execFile);

const SOURCE_PACKAGE = 'linux-source-6.1';
const SOURCE_TARBALL = `/usr/src/${SOURCE_PACKAGE}.tar.xz`;
export const IOLATENCY_FRAGMENT = join(REPO_ROOT, 'test/vm/harness/kernel/iolatency.config');
// Bump when the build steps change in a way the key's inputs cannot see.
const BUILD_FORMAT = 1;

/**
 * What the build runs, by the file that shows it is there and the Debian package that provides it
 * (the kernel's host tools are C; objtool links libelf; kconfig needs flex and bison; timeconst bc).
 */
const BUILD_TOOLS: [string, string][] = [
  ['/usr/bin/make', 'make'],
  ['/usr/bin/gcc', 'gcc'],
  ['/usr/include/stdio.h', 'libc6-dev'],
  ['/usr/bin/flex', 'flex'],
  ['/usr/bin/bison', 'bison'],
  ['/usr/bin/bc', 'bc'],
  ['/usr/include/libelf.h', 'libelf-dev'],
  ['/usr/bin/xz', 'xz-utils'],
  ['/usr/bin/perl', 'perl-base'],
];

/** A built kernel: KernelInfo (no modules: everything is `=y`) and its config, for /boot in the guest. */
export interface BuiltKernel extends KernelInfo {
  /** The final .config, which a real host has as /boot/config-RELEASE (isolate reads it). */
  config: string;
  /** Seconds `make bzImage` took when the cache entry was made, and on how many jobs. */
  buildSeconds: number;
  jobs: number;
  /** The bzImage's size in bytes. */
  bytes: number;
}

let pending: Promise<BuiltKernel> | undefined;

/**
 * The io.latency kernel: built on first use (minutes), from the cache afterwards. While the background
 * preparation's kernel lane builds it (prepare.ts), a caller waits for that build instead of starting
 * the same one beside it.
 */
export function ensureIoLatencyKernel(): Promise<BuiltKernel> {
  pending ??= waitForPreparation(['kernel']).then(() => buildOrReuse(IOLATENCY_FRAGMENT));
  return pending;
}

/**
 * The kernel a fragment gives (tinyconfig + the fragment), from the cache or built now. `base`: the
 * cache directory (a test's own, so that it never sees the kernel lane's build directories).
 */
export async function buildOrReuse(
  fragmentPath: string,
  base = join(VM_CACHE, 'kernel-build'),
): Promise<BuiltKernel> {
  const source = ensureKernelSource();

  const fragment = readFileSync(fragmentPath, 'utf8');
  const key = createHash('sha256')
    .update(`${BUILD_FORMAT}\n${SOURCE_PACKAGE} ${source}\n${fragment}`)
    .digest('hex')
    .slice(0, 16);
  const dir = join(base, key);
  const done = readBuilt(dir);
  if (done) return done;

  mkdirSync(base, { recursive: true });
  removeStaleBuilds(base);
  // The source tree (1.3 GB unpacked) and the objects live here only while building.
  const work = mkdtempSync(join(base, `build-${key}-`));
  try {
    const src = join(work, 'src');
    mkdirSync(src);
    await run('tar', ['-xJf', SOURCE_TARBALL, '-C', src, '--strip-components=1']);
    const make = (args: string[]) => run('make', ['-C', src, ...args], { maxBuffer: 256 * 1024 * 1024 });
    await make(['tinyconfig']);
    await run('scripts/kconfig/merge_config.sh', ['-m', '.config', fragmentPath], { cwd: src });
    await make(['olddefconfig']);
    const config = readFileSync(join(src, '.config'), 'utf8');
    const dropped = fragmentNotHonoured(fragment, config);
    if (dropped.length > 0) {
      throw new VmPrereqError(
        `${fragmentPath}: options the kernel's Kconfig did not keep (a dependency is missing): ${dropped.join(', ')}`,
      );
    }
    const jobs = availableParallelism();
    const started = Date.now();
    try {
      await make([`-j${jobs}`, 'bzImage']);
    } catch (e) {
      throw new VmPrereqError(`building ${SOURCE_PACKAGE} ${source} failed: ${tail(e)}`);
    }
    const buildSeconds = Math.round((Date.now() - started) / 1000);
    const release = (await make(['-s', 'kernelrelease'])).stdout.trim();

    const out = join(work, 'out');
    mkdirSync(out);
    copyFileSync(join(src, 'arch/x86/boot/bzImage'), join(out, 'bzImage'));
    writeFileSync(join(out, 'config'), config);
    writeFileSync(
      join(out, 'info.json'),
      JSON.stringify(
        {
          release,
          source: `${SOURCE_PACKAGE} ${source}`,
          fragment: relative(REPO_ROOT, fragmentPath),
          buildSeconds,
          jobs,
        },
        null,
        2,
      ),
    );
    try {
      renameSync(out, dir);
    } catch (e) {
      // Another run finished the same build first; its result is as good as ours.
      if (!readBuilt(dir)) throw e;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const built = readBuilt(dir);
  if (!built) throw new VmPrereqError(`kernel build into ${dir} left no kernel`);
  return built;
}

/** A build takes minutes; a build directory hours old is what a killed run left (1-2 GB each). */
const STALE_BUILD_MS = 6 * 3600_000;

function removeStaleBuilds(base: string): void {
  for (const name of readdirSync(base)) {
    if (!name.startsWith('build-')) continue;
    const p = join(base, name);
    if (Date.now() - statSync(p).mtimeMs > STALE_BUILD_MS) rmSync(p, { recursive: true, force: true });
  }
}

/** Installs what the build runs and Debian's kernel source, when missing; returns the source's version. */
export function ensureKernelSource(): string {
  const missing = BUILD_TOOLS.filter(([f]) => !existsSync(f)).map(([, pkg]) => pkg);
  if (sourceVersion() === null) missing.push(SOURCE_PACKAGE);
  if (missing.length > 0) aptInstall(missing);
  const source = sourceVersion();
  if (source === null || !existsSync(SOURCE_TARBALL))
    throw new VmPrereqError(`${SOURCE_TARBALL} still missing after installing ${SOURCE_PACKAGE}`);
  return source;
}

/** The installed source package's version, or null. */
function sourceVersion(): string | null {
  try {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's field syntax, not a JS template.
    const v = execFileSync('dpkg-query', ['-W', '-f=${Version}', SOURCE_PACKAGE], {
      encoding: 'utf8',
      stdio: 'pipe',
    }).trim();
    return v === '' ? null : v;
  } catch {
    return null;
  }
}

/**
 * The fragment's lines the final config does not hold: `CONFIG_X=v` must be there as written, and
 * `# CONFIG_X is not set` means no `CONFIG_X=` line (an option hidden by its dependencies has none).
 */
export function fragmentNotHonoured(fragment: string, config: string): string[] {
  const lines = new Set(config.split('\n'));
  const out: string[] = [];
  for (const line of fragment.split('\n').map((l) => l.trim())) {
    const off = /^# (CONFIG_\w+) is not set$/.exec(line);
    if (off) {
      if ([...lines].some((l) => l.startsWith(`${off[1]}=`))) out.push(line);
    } else if (/^CONFIG_\w+=/.test(line) && !lines.has(line)) out.push(line);
  }
  return out;
}

function readBuilt(dir: string): BuiltKernel | undefined {
  const f = join(dir, 'info.json');
  const vmlinuz = join(dir, 'bzImage');
  if (!existsSync(f) || !existsSync(vmlinuz)) return undefined;
  const j = JSON.parse(readFileSync(f, 'utf8')) as {
    release: string;
    source: string;
    buildSeconds: number;
    jobs: number;
  };
  return {
    vmlinuz,
    release: j.release,
    source: j.source,
    modulesDir: '',
    config: join(dir, 'config'),
    buildSeconds: j.buildSeconds,
    jobs: j.jobs,
    bytes: readFileSync(vmlinuz).length,
  };
}

function tail(e: unknown): string {
  const err = e as { stderr?: string; stdout?: string; message?: string };
  const text = `${err.stdout ?? ''}\n${err.stderr ?? ''}`.trim() || err.message || String(e);
  return text.split('\n').slice(-30).join('\n');
}
