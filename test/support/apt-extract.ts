/**
 * A file of a Debian package, unpacked without installing the package: for tools whose package
 * would also start a service on install (prometheus's promtool comes with the Prometheus server and
 * its unit). `apt-get download` and `dpkg-deb -x` into `.cache/deb/<package>/<version>/` (gitignored),
 * so the download happens once per version. Never skips: a tool that cannot be had fails the test
 * with what to do.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { aptGet } from './apt.js';

const REPO = resolve(import.meta.dirname, '../..');
const CACHE = process.env.ISOLATE_DEB_CACHE ?? join(REPO, '.cache/deb');
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

function run(cmd: string, args: string[], cwd?: string): string {
  return execFileSync(cmd, args, { env, cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function errorText(e: unknown): string {
  const x = e as { stderr?: string; message?: string };
  return (x.stderr || x.message || String(e)).trim().split('\n').slice(-3).join(' / ');
}

/** The version apt would install; lists are fetched first when empty (fresh containers). */
function candidateVersion(pkg: string): string {
  const read = () => /^\s*Candidate:\s*(\S+)/m.exec(run('apt-cache', ['policy', pkg]))?.[1];
  let version = read();
  if (!version || version === '(none)') {
    if (!isRoot())
      throw new Error(`apt knows no version of ${pkg} and we are not root to run apt-get update: run it`);
    aptGet(['update']);
    version = read();
  }
  if (!version || version === '(none)')
    throw new Error(`apt-get update ran and apt still has no version of ${pkg}: check the apt sources`);
  return version;
}

/** The absolute path of `file` (e.g. `usr/bin/promtool`) in `pkg` at apt's candidate version. */
export function debianPackageFile(pkg: string, file: string): { path: string; version: string } {
  const version = candidateVersion(pkg);
  const dir = join(CACHE, pkg, version.replaceAll(':', '%'));
  const path = join(dir, file);
  if (existsSync(path)) return { path, version };
  mkdirSync(join(CACHE, pkg), { recursive: true });
  const work = mkdtempSync(join(CACHE, pkg, '.download-'));
  try {
    try {
      run('apt-get', ['download', `${pkg}=${version}`], work);
    } catch (e) {
      throw new Error(`apt-get download ${pkg}=${version} failed: ${errorText(e)}`);
    }
    const deb = run('find', [work, '-maxdepth', '1', '-name', '*.deb']).trim();
    if (!deb) throw new Error(`apt-get download ${pkg}=${version} left no .deb in ${work}`);
    const tree = join(work, 'tree');
    run('dpkg-deb', ['-x', deb, tree]);
    if (!existsSync(join(tree, file))) throw new Error(`${pkg} ${version} has no ${file}`);
    // Keep only the file asked for: the rest of a package (the Prometheus server here) is not needed.
    const keep = join(work, 'keep');
    mkdirSync(join(keep, file, '..'), { recursive: true });
    renameSync(join(tree, file), join(keep, file));
    try {
      renameSync(keep, dir);
    } catch (e) {
      // Another test file unpacked the same version meanwhile.
      if (!existsSync(path)) throw e;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return { path, version };
}
