// Small filesystem helpers shared by the cgroup observer, the apply engine and `check`.
import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import path from 'node:path';

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

// The async helpers below do their work synchronously: cgroupfs, sysfs and procfs answer from kernel
// memory, and a round trip through libuv's thread pool (started on first use) costs more than the call
// itself, most of all in a short `isolate plan`, whose start-up is measured by bench/sea-startup.mjs.

/** readTrimSync for the observers' async call sites. */
export async function readTrim(file: string): Promise<string | null> {
  return readTrimSync(file);
}

export async function exists(file: string): Promise<boolean> {
  try {
    statSync(file);
    return true;
  } catch {
    return false;
  }
}

export async function isDir(file: string): Promise<boolean> {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}

export async function listDirs(dir: string): Promise<string[]> {
  try {
    const ents = readdirSync(dir, { withFileTypes: true });
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
    return readlinkSync(file);
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
  return cgPath
    .split('/')
    .some((s) => s.endsWith('.slice') || s.endsWith('.service') || s.endsWith('.scope'));
}

/** Parse `/proc/<pid>/cgroup` contents: the v2 line `0::/path`, or null. */
export function parseProcCgroup(text: string): string | null {
  for (const line of text.split('\n')) {
    if (line.startsWith('0::')) return normCgPath(line.slice(3).replace(/ \(deleted\)$/, ''));
  }
  return null;
}
