/**
 * Debian tools a test needs (ansible-playbook, lintian, ...): installed with apt-get when missing and
 * we are root, as CI is; otherwise the test fails naming the packages. Never skips.
 *
 * Every apt-get the suite runs (these tools, the VM harness's qemu, kernel source and build tools,
 * javac, gcc) goes through aptGet: the suite's own callers queue on one lock (flock(1)), since two unit
 * workers and the background guest preparation (test/vm/harness/prepare.ts) may each install at once
 * and a second apt-get fails at once on dpkg's lock; DPkg::Lock::Timeout covers anything else holding it
 * (a CI image still finishing its own apt run).
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

// A fixed path, not os.tmpdir(): the vitest workers' TMPDIR is the run's own directory (support/build.ts).
const LOCK = existsSync('/run/lock') ? '/run/lock/isolate-test-apt.lock' : '/tmp/isolate-test-apt.lock';
/** How long a caller waits for another's install (the guest preparation installs ~500 MB cold). */
const WAIT_S = 1800;
/** A hook deadline for a test that installs: the lock wait and then its own install. */
export const APT_WAIT_MS = (WAIT_S + 600) * 1000;

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

function aptArgv(args: string[]): string[] {
  const apt = ['apt-get', '-o', `DPkg::Lock::Timeout=${WAIT_S}`, ...args];
  return existsSync('/usr/bin/flock') ? ['/usr/bin/flock', '-w', String(WAIT_S), LOCK, ...apt] : apt;
}
const APT_ENV = () => ({ ...process.env, DEBIAN_FRONTEND: 'noninteractive' });

/** `apt-get ARGS`, one at a time across the suite's processes; returns its stdout. */
export function aptGet(args: string[]): string {
  const argv = aptArgv(args);
  return execFileSync(argv[0]!, argv.slice(1), { env: APT_ENV(), stdio: 'pipe', encoding: 'utf8' });
}

/**
 * aptGet without blocking: a vitest worker whose event loop is blocked for minutes (apt waiting on
 * another install's lock) misses its RPC deadline ("Timeout calling onTaskUpdate") and fails the run.
 */
export async function aptGetAsync(args: string[]): Promise<void> {
  const argv = aptArgv(args);
  await promisify(execFile)(argv[0]!, argv.slice(1), { env: APT_ENV(), maxBuffer: 64 * 1024 * 1024 });
}

/** `apt-get install` of PKGS, with one `apt-get update` and a second try when the lists are stale or empty. */
export function aptGetInstall(pkgs: string[]): void {
  const install = () => aptGet(['install', '-y', '--no-install-recommends', ...pkgs]);
  try {
    install();
  } catch {
    // Usually a stale or empty package list (fresh containers ship without one).
    aptGet(['update']);
    install();
  }
}

/** `tools` maps an absolute path to the Debian package that installs it. */
export async function ensureDebianTools(tools: Record<string, string>): Promise<void> {
  const missing = Object.entries(tools).filter(([path]) => !existsSync(path));
  if (missing.length === 0) return;
  const pkgs = [...new Set(missing.map(([, pkg]) => pkg))];
  if (!isRoot()) {
    throw new Error(
      `${missing.map(([p]) => p).join(', ')} missing and we are not root to install them. Run: sudo apt-get install -y ${pkgs.join(' ')}`,
    );
  }
  const install = () => aptGetAsync(['install', '-y', '--no-install-recommends', ...pkgs]);
  try {
    await install();
  } catch {
    // Usually a stale or empty package list (fresh containers ship without one).
    await aptGetAsync(['update']);
    await install();
  }
  const still = missing.filter(([path]) => !existsSync(path));
  if (still.length > 0)
    throw new Error(`${still.map(([p]) => p).join(', ')} still missing after apt-get install`);
}
