/**
 * Debian tools a test needs (ansible-playbook, lintian, ...): installed with apt-get when missing and
 * we are root, as CI is; otherwise the test fails naming the packages. Never skips.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** `tools` maps an absolute path to the Debian package that installs it. */
export function ensureDebianTools(tools: Record<string, string>): void {
  const missing = Object.entries(tools).filter(([path]) => !existsSync(path));
  if (missing.length === 0) return;
  const pkgs = [...new Set(missing.map(([, pkg]) => pkg))];
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    throw new Error(
      `${missing.map(([p]) => p).join(', ')} missing and we are not root to install them. Run: sudo apt-get install -y ${pkgs.join(' ')}`,
    );
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () =>
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', ...pkgs], { env, stdio: 'pipe' });
  try {
    install();
  } catch {
    // Usually a stale or empty package list (fresh containers ship without one).
    execFileSync('apt-get', ['update'], { env, stdio: 'pipe' });
    install();
  }
  const still = missing.filter(([path]) => !existsSync(path));
  if (still.length > 0)
    throw new Error(`${still.map(([p]) => p).join(', ')} still missing after apt-get install`);
}
