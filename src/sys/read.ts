// The one way isolate reads an input file (sysfs, /proc, policies, saved plans, journals): never
// blocking and never unbounded. A FIFO or a terminal where a file is expected would block a read
// forever, a device may never end, and a 50 MB "policy" runs V8 out of memory; all are refused with a
// reason the caller turns into a one-line error naming the file.
import { isUtf8 } from 'node:buffer';
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  type Stats,
  statSync,
} from 'node:fs';
import { fileKind } from './write.js';

/** Why an input file was not read. `code` is an errno (ENOENT, EACCES, ...) or one of ours. */
export class ReadRefused extends Error {
  constructor(
    readonly code: string,
    readonly reason: string,
  ) {
    super(reason);
    this.name = 'ReadRefused';
  }
}

export interface ReadOptions {
  /** Largest size accepted, in bytes. sysfs and /proc files report size 4096 or 0, so it is enforced on the bytes read. */
  maxBytes: number;
}

const ERRNO_WORDS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'is a directory',
  ENOTDIR: 'a parent is not a directory',
  ELOOP: 'too many symbolic links',
};

export function refusedFromErrno(err: unknown): ReadRefused {
  const e = err as NodeJS.ErrnoException;
  const code = e.code ?? 'EIO';
  return new ReadRefused(code, ERRNO_WORDS[code] ?? e.message);
}

/** Human size for limits: 1 MiB, 64 KiB. */
export function sizeWords(bytes: number): string {
  if (bytes >= 1024 ** 2 && bytes % 1024 ** 2 === 0) return `${bytes / 1024 ** 2} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

// One read buffer for every call (each gets a copy of its bytes): a fresh 64 KiB per sysfs file was
// most of what the agent's rounds allocated. Safe to share: the reads here are synchronous.
const SCRATCH = Buffer.allocUnsafe(64 * 1024);

/**
 * The bytes of a regular file, at most `maxBytes`. Symlinks are followed (a policy may be managed
 * by configuration tools through one), but what they lead to must be a regular file.
 */
export function readBoundedBytes(file: string, opts: ReadOptions): Buffer {
  const bytes = readRegular(file, statOrRefuse(file), opts);
  return bytes.buffer === SCRATCH.buffer ? Buffer.from(bytes) : bytes;
}

/** UTF-8 text of a regular file, at most `maxBytes`. */
export function readBounded(file: string, opts: ReadOptions): string {
  return readRegular(file, statOrRefuse(file), opts).toString('utf8');
}

/**
 * readBounded, or null when the file or one of its parents does not exist (ENOENT, ENOTDIR) — the
 * answer sysfs readers expect for an optional file, and without an exception: a thrown error costs
 * a stack trace, tens of them per topology read of a host whose kernel lacks a file.
 */
export function readBoundedIfPresent(file: string, opts: ReadOptions): string | null {
  let st: Stats | undefined;
  try {
    st = statSync(file, { throwIfNoEntry: false });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw refusedFromErrno(err);
  }
  return st === undefined ? null : readRegular(file, st, opts).toString('utf8');
}

function statOrRefuse(file: string): Stats {
  try {
    return statSync(file);
  } catch (err) {
    throw refusedFromErrno(err);
  }
}

/**
 * The bytes of `file`, whose stat is `st`: stat first so a device is never even opened (opening some
 * has side effects), then fstat the descriptor so a swap between the two is caught. A file read in
 * one chunk (every sysfs and /proc file) comes back as a view of SCRATCH, valid until the next read.
 */
function readRegular(file: string, st: Stats, opts: ReadOptions): Buffer {
  if (!st.isFile()) throw new ReadRefused('ENOTREG', `${fileKind(st)}, not a regular file`);
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw refusedFromErrno(err);
  }
  try {
    const fst = fstatSync(fd);
    if (!fst.isFile()) throw new ReadRefused('ENOTREG', `${fileKind(fst)}, not a regular file`);
    return readOpen(fd, opts);
  } finally {
    closeSync(fd);
  }
}

/**
 * The bytes of an open regular file, at most `maxBytes`, from where its offset is. A file read in one
 * chunk comes back as a view of SCRATCH, valid until the next read.
 */
export function readOpen(fd: number, opts: ReadOptions): Buffer {
  // Reads alternate between SCRATCH's halves, so the chunk before is intact when another follows
  // and is copied out only then: a file read in one chunk stays in SCRATCH.
  const size = Math.min(opts.maxBytes + 1, SCRATCH.length / 2);
  const chunks: Buffer[] = [];
  let last: Buffer | undefined;
  let total = 0;
  for (let at = 0; ; at = size - at) {
    let n: number;
    try {
      n = readSync(fd, SCRATCH, at, size, null);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') throw new ReadRefused('EAGAIN', 'would block');
      throw refusedFromErrno(err);
    }
    if (n === 0) break;
    total += n;
    if (total > opts.maxBytes) {
      throw new ReadRefused('EFBIG', `larger than ${sizeWords(opts.maxBytes)}`);
    }
    if (last) chunks.push(Buffer.from(last));
    last = SCRATCH.subarray(at, at + n);
  }
  if (!last) return SCRATCH.subarray(0, 0);
  if (chunks.length === 0) return last;
  chunks.push(Buffer.from(last));
  return Buffer.concat(chunks, total);
}

/**
 * UTF-8 text meant for a person to have written (a policy, a plan): refuses binary content and
 * other encodings instead of feeding them to a parser whose errors would echo them back.
 */
export function readTextFile(file: string, opts: ReadOptions): string {
  return personText(readBoundedBytes(file, opts));
}

/** The text of bytes a person wrote (readTextFile): UTF-8 without NUL bytes, or ReadRefused. */
export function personText(bytes: Buffer): string {
  if (
    bytes.length >= 2 &&
    ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))
  ) {
    throw new ReadRefused('EENCODING', 'UTF-16 text; save it as UTF-8');
  }
  if (bytes.includes(0)) throw new ReadRefused('EENCODING', 'binary content (NUL bytes), not a text file');
  // isUtf8, not a fatal TextDecoder: that one sets up ICU's converter on first use, ~2.5 ms of every
  // `isolate plan`. A byte order mark is dropped, as TextDecoder drops it.
  if (!isUtf8(bytes)) throw new ReadRefused('EENCODING', 'not valid UTF-8 text; save it as UTF-8');
  const text = bytes.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * A kernel-generated file (cgroupfs, sysfs, procfs), trimmed; null when it does not exist or cannot
 * be read. Synchronous on purpose: these files are generated in memory, and the thread-pool round
 * trips of async I/O (open, fstat, read, close) cost the agent more CPU than the reads themselves.
 */
export function readTrimSync(file: string): string | null {
  const head = readHeadSync(file, SCRATCH.length);
  if (head === null || head.length < SCRATCH.length) return head?.trim() ?? null;
  try {
    return readFileSync(file, 'utf8').trim(); // larger than one buffer: the rare long cgroup.procs
  } catch {
    return null;
  }
}

/**
 * Reads a kernel file from its start into `buffer`, at most `want` bytes, until its end (a read that
 * returns nothing); returns the bytes read. Throws like readSync.
 */
export function readFromStart(fd: number, buffer: Buffer, want: number): number {
  let n = 0;
  for (;;) {
    const r = readSync(fd, buffer, n, want - n, n);
    if (r === 0) break;
    n += r;
    if (n >= want) break;
  }
  return n;
}

/**
 * The first `max` bytes of a kernel file (at most 64 KiB), untrimmed; null when it cannot be read.
 * Enough to tell whether `cgroup.procs` is empty without having the kernel print every PID in it.
 * The agent's hot path: no stat before the open (readBoundedBytes has one), but O_NONBLOCK, so a FIFO
 * planted in a fixture tree (or anywhere under `--root`) can never hang a round.
 */
export function readHeadSync(file: string, max: number): string | null {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const n = readFromStart(fd, SCRATCH, Math.min(max, SCRATCH.length));
    return SCRATCH.toString('utf8', 0, n);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** The errors that say a file is not there, as opposed to there but unreadable. */
const ABSENT = new Set(['ENOENT', 'ENOTDIR']);

/** A failed read of a value isolate is about to change or restore: never taken for "absent". */
export class UnreadableError extends Error {
  override name = 'UnreadableError';
  constructor(
    readonly file: string,
    readonly code: string,
  ) {
    super(`cannot read ${file} (${code}): its value is unknown, so it is not changed`);
  }
}

const codeOf = (err: unknown) => (err as NodeJS.ErrnoException).code ?? 'EIO';

/** Values read for a write are cgroup and /proc files: a few KiB; cgroup.procs of a huge cgroup more. */
const LIVE_MAX_BYTES = 16 * 1024 * 1024;

/**
 * A kernel file's value, trimmed, for a change about to be made or undone: null only when it does
 * not exist; any other failure (EACCES, EIO, a FIFO that would block) throws UnreadableError. Where
 * "absent" means "nothing to restore", an unknown value must stop the step, not pass for absent.
 */
export function readLiveSync(file: string): string | null {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    if (ABSENT.has(codeOf(err))) return null;
    throw new UnreadableError(file, codeOf(err));
  }
  try {
    // Kernel files are regular files to stat: a FIFO or device planted at the name is not a value.
    if (!fstatSync(fd).isFile()) throw new UnreadableError(file, 'EFTYPE');
    const chunks: Buffer[] = [];
    let at = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(64 * 1024);
      const n = readSync(fd, chunk, 0, chunk.length, at);
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      at += n;
      if (at > LIVE_MAX_BYTES) throw new UnreadableError(file, 'EFBIG');
    }
    return Buffer.concat(chunks).toString('utf8').trim();
  } catch (err) {
    if (err instanceof UnreadableError) throw err;
    throw new UnreadableError(file, codeOf(err));
  } finally {
    closeSync(fd);
  }
}

/** Whether a directory exists, for a change about to be made or undone: false only when absent. */
export function isDirLiveSync(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch (err) {
    if (ABSENT.has(codeOf(err))) return false;
    throw new UnreadableError(dir, codeOf(err));
  }
}

/**
 * The fields of a `/proc/PID/stat` after the command name, so `[0]` is the state (field 3) and
 * `[19]` the start time (field 22); null when the process is gone. The name (field 2) may hold spaces
 * and parentheses: the fields are counted after its last ')'.
 */
export function procStatFields(procDir: string, pid: number): string[] | null {
  const stat = readHeadSync(`${procDir}/${pid}/stat`, 1024);
  return stat === null ? null : stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}
