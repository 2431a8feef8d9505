// Reading a file root then trusts (a policy, a saved plan): read once, and judge what was read. The
// path is judged first (sys/trust.ts: every directory on the way, every link and who may swap it),
// then the real path it leads to is opened without following a link, and the open descriptor itself
// must be the object judged (same device and inode), a regular file, owned by a trusted user and
// writable by no one else. The text comes from that descriptor: whatever the path names afterwards,
// what isolate parses is what it judged.
import { closeSync, constants, fstatSync, openSync, type Stats } from 'node:fs';
import { personText, type ReadOptions, ReadRefused, readOpen, refusedFromErrno } from './read.js';
import { judgePath, trustedOwners, type Untrusted } from './trust.js';
import { fileKind } from './write.js';

/** A file another user could have written or swapped: refused where root acts on it. */
export class TrustRefused extends Error {
  constructor(readonly untrusted: Untrusted) {
    super(untrusted.problem);
    this.name = 'TrustRefused';
  }
}

export interface TrustedReadOptions extends ReadOptions {
  /**
   * Read an untrusted file anyway and say so in the result (a dry run, which changes nothing);
   * otherwise it is refused with TrustRefused before it is opened.
   */
  allowUntrusted?: boolean;
  /** Tests only: runs between the judgement and the open, where a swap would land. */
  beforeOpen?: (real: string) => void;
}

export interface TrustedText {
  text: string;
  /** Why the file is not trusted; null when it is (only set with allowUntrusted). */
  untrusted: Untrusted | null;
}

const ERRNO_WORDS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  ENOTDIR: 'a parent is not a directory',
};

/**
 * The UTF-8 text of `file`, read from the very object that was judged trusted. A component that
 * cannot be examined at all (ENOENT, EACCES) is ReadRefused, as a failed read is; one another user
 * could have written or swapped is TrustRefused (unless allowUntrusted).
 */
export function readTrustedText(file: string, opts: TrustedReadOptions): TrustedText {
  const judged = judgePath(file);
  if (!judged.ok) {
    const u = judged.untrusted;
    if (u.code) throw new ReadRefused(u.code, ERRNO_WORDS[u.code] ?? `cannot be examined (${u.code})`);
    if (!opts.allowUntrusted) throw new TrustRefused(u);
    return { text: personText(readByPath(file, opts)), untrusted: u };
  }
  // lstat said what it is: a device or FIFO is never opened (opening some has side effects).
  if (!judged.stat.isFile()) {
    throw new ReadRefused('ENOTREG', `${fileKind(judged.stat)}, not a regular file`);
  }
  opts.beforeOpen?.(judged.real);
  const fd = openOrRefuse(judged.real, constants.O_NOFOLLOW);
  try {
    const changed = notTheJudged(judged.real, judged.stat, fstatSync(fd));
    if (changed) throw new TrustRefused(changed);
    return { text: personText(readOpenCopy(fd, opts)), untrusted: null };
  } finally {
    closeSync(fd);
  }
}

/** An untrusted file read for a warning only: links followed, still never a device or a FIFO. */
function readByPath(file: string, opts: ReadOptions): Buffer {
  const fd = openOrRefuse(file, 0);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new ReadRefused('ENOTREG', `${fileKind(st)}, not a regular file`);
    return readOpenCopy(fd, opts);
  } finally {
    closeSync(fd);
  }
}

function openOrRefuse(file: string, flags: number): number {
  try {
    return openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | flags);
  } catch (err) {
    throw refusedFromErrno(err);
  }
}

/** readOpen's bytes, copied out of its shared buffer. */
function readOpenCopy(fd: number, opts: ReadOptions): Buffer {
  return Buffer.from(readOpen(fd, opts));
}

/** Why the open descriptor is not the object judged, or is not one root may trust; null when it is. */
function notTheJudged(real: string, judged: Stats, open: Stats): Untrusted | null {
  const at = { path: real, uid: open.uid, mode: open.mode };
  if (open.dev !== judged.dev || open.ino !== judged.ino) {
    return {
      ...at,
      problem: 'was replaced between its check and its read',
      fix: 'run the command again; find what replaces the file',
    };
  }
  if (!open.isFile())
    return { ...at, problem: `is ${fileKind(open)}, not a regular file`, fix: 'check the path' };
  if (!trustedOwners().includes(open.uid)) {
    return { ...at, problem: `is owned by uid ${open.uid}, not root`, fix: `chown root:root ${real}` };
  }
  if ((open.mode & 0o022) !== 0) {
    return { ...at, problem: 'is writable by its group or others', fix: `chmod go-w ${real}` };
  }
  return null;
}
