// Small filesystem helpers shared by the cgroup observer, the apply engine and `check`.
import { readdirSync, readlinkSync, statSync } from 'node:fs';
import { readTrimSync } from '../sys/read.js';
import path from 'node:path';
import { UNIT_CGROUP } from '../model/systemd.js';

/** The cgroup2 mount under `--root`. */
export function cgroupMount(root: string): string {
  return path.join(root, 'sys/fs/cgroup');
}

/** A cgroup path that needs no normalizing: absolute, no empty, `.` or `..` segment, no trailing `/`. */
const PLAIN_CG_PATH = /^(?:\/(?!\.\.?(?:\/|$))[^/]+)+$/;

/** Absolute directory of a cgroup path (`/kafka.slice`) under the mount. */
export function cgroupDir(root: string, cgPath: string): string {
  const mount = cgroupMount(root);
  if (cgPath === '/' || cgPath === '') return mount;
  return PLAIN_CG_PATH.test(cgPath) ? mount + cgPath : path.join(mount, cgPath);
}

// The kernel-file readers live in sys/read.ts (the systemd backend uses them too); re-exported for
// the cgroup observers and the audit.
export { readHeadSync, readTrimSync } from '../sys/read.js';

// The async helpers below do their work synchronously: cgroupfs, sysfs and procfs answer from kernel
// memory, and a round trip through libuv's thread pool costs more than the call itself — every round
// of the agent (bench/agent-idle.mjs) and in a short `isolate plan` (bench/sea-startup.mjs).

/** readTrimSync for the observers' async call sites. */
export async function readTrim(file: string): Promise<string | null> {
  return readTrimSync(file);
}

export async function exists(file: string): Promise<boolean> {
  try {
    return statSync(file, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

export async function isDir(file: string): Promise<boolean> {
  try {
    return statSync(file, { throwIfNoEntry: false })?.isDirectory() ?? false;
  } catch {
    return false;
  }
}

/** The names in a directory; null when it is not a readable directory. */
export function listNames(dir: string): Set<string> | null {
  try {
    return new Set(readdirSync(dir));
  } catch {
    return null;
  }
}

/** A directory's names and, among them, its subdirectories, from one listing; null when unreadable. */
export function listEntries(dir: string): { names: Set<string>; dirs: string[] } | null {
  try {
    const names = new Set<string>();
    const dirs: string[] = [];
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      names.add(e.name);
      if (e.isDirectory()) dirs.push(e.name);
    }
    return { names, dirs };
  } catch {
    return null;
  }
}

export async function listDirs(dir: string): Promise<string[]> {
  return listEntries(dir)?.dirs.sort() ?? [];
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

/** True when cgroup `p` is `base` or lies below it (both normalised; every cgroup lies below "/"). */
export function cgroupUnder(p: string, base: string): boolean {
  return p === base || base === '/' || p.startsWith(`${base}/`);
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
