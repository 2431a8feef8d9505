/**
 * A file of a Debian package, unpacked without installing the package: for tools whose package
 * would also start a service on install (prometheus's promtool comes with the Prometheus server and
 * its unit). `apt-get download` and `dpkg-deb -x` into `.cache/deb/<package>/<version>/` (gitignored),
 * so the download happens once per version. Never skips: a tool that cannot be had fails the test
 * with what to do.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { aptGetAsync } from './apt.js';

const REPO = resolve(import.meta.dirname, '../..');
const CACHE = process.env.ISOLATE_DEB_CACHE ?? join(REPO, '.cache/deb');
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/**
 * Asynchronously: on a fresh machine `apt-get update` here waits on the suite's apt lock while the guest
 * preparation installs for minutes, and a vitest worker blocked that long misses its RPC deadline
 * ("Timeout calling onTaskUpdate"), which fails the whole run.
 */
async function run(cmd: string, args: string[], cwd?: string): Promise<string> {
  const r = await promisify(execFile)(cmd, args, { env, cwd, encoding: 'utf8', maxBuffer: 64 << 20 });
  return r.stdout;
}

function errorText(e: unknown): string {
  const x = e as { stderr?: string; message?: string };
  return (x.stderr || x.message || String(e)).trim().split('\n').slice(-3).join(' / ');
}

/** The version apt would install; lists are fetched first when empty (fresh containers). */
async function candidateVersion(pkg: string): Promise<string> {
  const read = async () => /^\s*Candidate:\s*(\S+)/m.exec(await run('apt-cache', ['policy', pkg]))?.[1];
  let version = await read();
  if (!version || version === '(none)') {
    if (!isRoot())
      throw new Error(`apt knows no version of ${pkg} and we are not root to run apt-get update: run it`);
    await aptGetAsync(['update']);
    version = await read();
  }
  if (!version || version === '(none)')
    throw new Error(`apt-get update ran and apt still has no version of ${pkg}: check the apt sources`);
  return version;
}

/** The absolute path of `file` (e.g. `usr/bin/promtool`) in `pkg` at apt's candidate version. */
export async function debianPackageFile(
  pkg: string,
  file: string,
): Promise<{ path: string; version: string }> {
  const version = await candidateVersion(pkg);
  const dir = join(CACHE, pkg, version.replaceAll(':', '%'));
  const path = join(dir, file);
  if (existsSync(path)) return { path, version };
  mkdirSync(join(CACHE, pkg), { recursive: true });
  const work = mkdtempSync(join(CACHE, pkg, '.download-'));
  try {
    try {
      await run('apt-get', ['download', `${pkg}=${version}`], work);
    } catch (e) {
      throw new Error(`apt-get download ${pkg}=${version} failed: ${errorText(e)}`);
    }
    const deb = (await run('find', [work, '-maxdepth', '1', '-name', '*.deb'])).trim();
    if (!deb) throw new Error(`apt-get download ${pkg}=${version} left no .deb in ${work}`);
    const tree = join(work, 'tree');
    await run('dpkg-deb', ['-x', deb, tree]);
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
