// Small filesystem helpers shared by the cgroup observer, the apply engine and `check`.
import { readFileSync } from 'node:fs';
import { readdir, readlink, stat } from 'node:fs/promises';
import path from 'node:path';
import { UNIT_CGROUP } from '../model/systemd.js';

/** The cgroup2 mount under `--root`. */
export function cgroupMount(root: string): string {
  return path.join(root, 'sys/fs/cgroup');
}

/** Absolute directory of a cgroup path (`/kafka.slice`) under the mount. */
export function cgroupDir(root: string, cgPath: string): string {
  return path.join(cgroupMount(root), cgPath);
}

/**
 * Read a file and trim it; null when it does not exist or cannot be read. Synchronous on purpose:
 * cgroupfs and /proc files are generated in memory, and the threadpool round trips of async I/O
 * (open, fstat, read, close) cost the agent more CPU than the reads themselves.
 */
export function readTrimSync(file: string): string | null {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
}

/** readTrimSync for the observers' async call sites. */
export async function readTrim(file: string): Promise<string | null> {
  return readTrimSync(file);
}

export async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}

export async function isDir(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isDirectory();
  } catch {
    return false;
  }
}

export async function listDirs(dir: string): Promise<string[]> {
  try {
    const ents = await readdir(dir, { withFileTypes: true });
    return ents
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

export async function readLinkOrNull(file: string): Promise<string | null> {
  try {
    return await readlink(file);
  } catch {
    return null;
  }
}

/** Normalise a cgroup path: leading `/`, no trailing `/`, `/` for the root. */
export function normCgPath(p: string): string {
  const parts = p.split('/').filter((s) => s !== '' && s !== '.');
  if (parts.some((s) => s === '..')) throw new Error(`cgroup path "${p}" must not contain ".."`);
  return `/${parts.join('/')}`;
}

/** True when systemd created the cgroup (any path element is a slice, service or scope). */
export function ownedBySystemd(cgPath: string): boolean {
  return cgPath.split('/').some((s) => UNIT_CGROUP.test(s));
}

/** Parse `/proc/<pid>/cgroup` contents: the v2 line `0::/path`, or null. */
export function parseProcCgroup(text: string): string | null {
  for (const line of text.split('\n')) {
    if (line.startsWith('0::')) return normCgPath(line.slice(3).replace(/ \(deleted\)$/, ''));
  }
  return null;
}
