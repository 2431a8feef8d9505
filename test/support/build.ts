// Vitest global setup, shared by the unit and vm projects: tests that run the real `isolate` binary need
// dist/ built from the current source, and every temporary tree a test makes (fixture hosts, packages,
// guests' files: ~1 GB a run) goes into one directory removed when the run ends, so no run leaves its
// trees behind in /tmp, whether a test cleaned up after itself or not.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const REPO = join(import.meta.dirname, '../..');

/**
 * dist/ from the current source, with the fault-injection hooks (src/cli/test-hooks.ts) the crash
 * tests drive; releases have none. Every test that builds dist/ builds it this way.
 */
export function buildDist(stdio: 'inherit' | 'pipe' = 'inherit'): void {
  execFileSync(process.execPath, ['scripts/build.mjs', '--test-hooks'], { cwd: REPO, stdio });
}

export default function setup(): (() => void) | undefined {
  // Every project runs this setup, in the same process: dist/ is built by the first.
  if (process.env.ISOLATE_TEST_DIST_BUILT !== '1') buildDist();
  process.env.ISOLATE_TEST_DIST_BUILT = '1';
  // The workers inherit it: dist/ was just built from this run's source, so the guests' harness
  // (vm/harness/initramfs.ts) does not build it a second time in its fork.
  process.env.ISOLATE_VM_SKIP_BUILD = '1';
  // Both projects run this setup in the same process: the first one makes the directory.
  if (process.env.ISOLATE_TEST_TMPDIR) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'isolate-test-run-'));
  // mkdtemp makes it 0700: tests that run isolate as an unprivileged user (an EACCES from a cgroup
  // file) need to reach their trees inside it, as in /tmp.
  chmodSync(dir, 0o755);
  // Workers start after the global setups and inherit this environment: os.tmpdir() reads TMPDIR.
  process.env.ISOLATE_TEST_TMPDIR = dir;
  process.env.TMPDIR = dir;
  return () => {
    if (process.env.ISOLATE_KEEP_TMP === '1') return;
    rmSync(dir, { recursive: true, force: true });
  };
}
