// Whether a path is one only root (or the user running isolate) can change. isolate runs as root:
// it executes a vendor tool, or lets a policy decide where every process runs, only when no other
// user can have written that file or swapped any directory on the way to it — sshd's StrictModes and
// sudo's secure_path are the models.
//
// Every directory walked (symbolic links followed by hand, so the directories a link leads through are
// judged too) and the file itself must be owned by a trusted user and not writable by group or
// others. One exception, as the kernel's own protected_* rules reason: a root-owned sticky directory
// (/tmp, /run/lock) lets others add names but never rename or remove one they do not own, so it is
// safe to pass through when the next component is itself trusted.
import { lstatSync, readlinkSync, type Stats } from 'node:fs';
import path from 'node:path';

export interface Untrusted {
  /** The component that fails: the file, or a directory above it. */
  path: string;
  uid: number;
  mode: number;
  /** What is wrong with it, in words ("is writable by others"). */
  problem: string;
  /** The commands that fix it. */
  fix: string;
  /** The errno when the component could not be examined at all (ENOENT, EACCES). */
  code?: string;
}

/** Root, and the user isolate runs as (an unprivileged `isolate check` trusts its own files). */
export function trustedOwners(): number[] {
  const me = process.geteuid?.() ?? 0;
  return me === 0 ? [0] : [0, me];
}

const MAX_LINKS = 40;

export interface TrustOptions {
  /**
   * `file` is a directory in which others may create names so long as they cannot replace the one
   * isolate uses (a lock in /run/lock): a root-owned sticky directory is accepted there too.
   */
  sharedDirectory?: boolean;
}

/**
 * The first component of `file` (an absolute path) that another user could have written or
 * replaced, or null when there is none. A missing or unreadable component is reported as such:
 * trust is never assumed from a failed look.
 */
export function untrustedPath(file: string, opts: TrustOptions = {}): Untrusted | null {
  const judged = judgePath(file, opts);
  return judged.ok ? null : judged.untrusted;
}

/** A path judged: its real path (no symbolic link left in it) and what lstat said of it then. */
export type Judged = { ok: true; real: string; stat: Stats } | { ok: false; untrusted: Untrusted };

/**
 * untrustedPath's walk, keeping what it found: the real path and the stat of the object judged, so a
 * caller can open that path without following links and check it opened that very object. Once
 * every component is judged, no other user can change any of them (see the header), so the real path
 * stays what was judged.
 */
export function judgePath(file: string, opts: TrustOptions = {}): Judged {
  const owners = trustedOwners();
  const shared = !!opts.sharedDirectory;
  const pending = path.resolve(file).split('/').filter(Boolean);
  const fail = (untrusted: Untrusted): Judged => ({ ok: false, untrusted });
  const top = examine('/', owners, pending.length === 0 && !shared);
  if ('problem' in top) return fail(top);
  if (top.isSymbolicLink()) return fail(unusable('/', 'is a symbolic link'));
  let current = '/';
  let currentStat = top;
  let links = 0;
  while (pending.length > 0) {
    const name = pending.shift() as string;
    if (name === '.') continue;
    // `current` is always a real, already-judged directory, so its parent was judged too.
    if (name === '..') {
      current = path.dirname(current);
      const st = examine(current, owners, false);
      if ('problem' in st) return fail(st);
      currentStat = st;
      continue;
    }
    const next = path.join(current, name);
    const st = examine(next, owners, pending.length === 0 && !shared);
    if ('problem' in st) return fail(st);
    if (!st.isSymbolicLink()) {
      current = next;
      currentStat = st;
      continue;
    }
    const swappable = linkSwappable(next, st, currentStat, owners);
    if (swappable) return fail(swappable);
    if (++links > MAX_LINKS) return fail(unusable(next, 'has too many levels of symbolic links'));
    // A symbolic link: walk on through its target, judging every directory it leads through.
    const target = readlinkSync(next);
    if (path.isAbsolute(target)) current = '/';
    pending.unshift(...target.split('/').filter(Boolean));
    if (path.isAbsolute(target)) {
      const root = examine('/', owners, false);
      if ('problem' in root) return fail(root);
      currentStat = root;
    }
  }
  return { ok: true, real: current, stat: currentStat };
}

/**
 * A symbolic link in a directory others may write (a sticky /tmp) is its owner's to replace at any
 * moment: followed only when a trusted user owns it, as the kernel's protected_symlinks follows one
 * there only for its owner or the directory's. Elsewhere only the directory's owner can replace it.
 */
function linkSwappable(link: string, st: Stats, dir: Stats, owners: readonly number[]): Untrusted | null {
  if ((dir.mode & 0o022) === 0 || owners.includes(st.uid)) return null;
  return {
    path: link,
    uid: st.uid,
    mode: st.mode,
    problem: `is a symbolic link owned by uid ${st.uid} in a directory others can write, so its owner can point it anywhere at any time`,
    fix: `point --policy/--plan/--tool-path at the file it leads to, or have root own the link (ln -sfn TARGET ${link} as root)`,
  };
}

/** The lstat of `p` when it is a symbolic link (to be followed) or trusted, else what is wrong. */
function examine(p: string, owners: readonly number[], last: boolean): Untrusted | Stats {
  let st: Stats;
  try {
    st = lstatSync(p);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
    return { ...unusable(p, `cannot be examined (${code})`), code };
  }
  if (st.isSymbolicLink()) return st;
  return verdict(p, st, owners, last) ?? st;
}

function unusable(p: string, problem: string): Untrusted {
  return { path: p, uid: -1, mode: 0, problem, fix: 'check the path' };
}

function verdict(p: string, st: Stats, owners: readonly number[], last: boolean): Untrusted | null {
  const owner = owners.includes(st.uid);
  const writable = (st.mode & 0o022) !== 0;
  const sticky = (st.mode & 0o1000) !== 0;
  if (!last && !st.isDirectory()) return unusable(p, 'is not a directory');
  if (!owner) {
    return {
      path: p,
      uid: st.uid,
      mode: st.mode,
      problem: `is owned by uid ${st.uid}, not root`,
      fix: `chown root:root ${p}${writable ? ` && chmod go-w ${p}` : ''}`,
    };
  }
  if (writable && !(st.isDirectory() && sticky && st.uid === 0 && !last)) {
    return {
      path: p,
      uid: st.uid,
      mode: st.mode,
      problem: `is writable by ${[st.mode & 0o020 ? 'its group' : '', st.mode & 0o002 ? 'others' : ''].filter(Boolean).join(' and ')}`,
      fix: `chmod go-w ${p}`,
    };
  }
  return null;
}

/** `0755`-style octal of a mode's permission bits. */
export function modeString(mode: number): string {
  return `0${(mode & 0o7777).toString(8).padStart(3, '0')}`;
}

/** One line for a refusal: what is wrong, where, owner and mode, and the fix. */
export function describeUntrusted(u: Untrusted): string {
  const shown = u.uid >= 0 ? ` (owner uid ${u.uid}, mode ${modeString(u.mode)})` : '';
  return `${u.path} ${u.problem}${shown}; fix: ${u.fix}`;
}
