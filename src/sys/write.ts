// The one way isolate writes a file of its own (plans, journals, metrics, lock records): atomically
// and durably over a regular file or into a missing name (writeFileAtomic), or as a new file that must
// not exist yet (writeNewFile). isolate runs as root: a rename over a device
// node, a symlink or a FIFO would replace a system file (`--out /dev/stdout` replacing the link), so
// anything else at the path is refused before a byte is written.
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../model/errors.js';

export interface WriteOptions {
  /**
   * Create missing parent directories (mode 0700). Only for isolate's own state directory
   * (`<root>/var/lib/isolate`): a typo in a path the user gave must not grow a directory tree.
   */
  createParents?: boolean;
  /** File mode (default 0600). A systemd drop-in is 0644 like every other unit file. */
  mode?: number;
}

/** What an lstat result is, in words, for a refusal. */
export function fileKind(st: {
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
  isFIFO(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
  isSocket(): boolean;
}): string {
  if (st.isFile()) return 'a regular file';
  if (st.isDirectory()) return 'a directory';
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * Atomic, durable replace: write a temp file, fsync it, rename over, fsync the directory.
 * Refuses (UserError) unless `file` is a regular file or absent inside an existing directory;
 * the final component is never followed when it is a symlink.
 */
export async function writeFileAtomic(file: string, data: string, opts: WriteOptions = {}): Promise<void> {
  const dir = path.dirname(file);
  if (opts.createParents) await mkdir(dir, { recursive: true, mode: 0o700 });
  let dirStat: Awaited<ReturnType<typeof stat>>;
  try {
    dirStat = await stat(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UserError(
      `${file}: ${code === 'ENOENT' ? `directory ${dir} does not exist` : `cannot use directory ${dir} (${code})`}; create it first or choose another path`,
    );
  }
  if (!dirStat.isDirectory()) {
    throw new UserError(`${file}: ${dir} is not a directory; choose another path`);
  }
  try {
    const st = await lstat(file);
    if (!st.isFile()) {
      throw new UserError(
        `${file}: refusing to replace ${fileKind(st)}; isolate writes only regular files of its own — choose another path`,
      );
    }
  } catch (err) {
    if (err instanceof UserError) throw err;
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  // O_EXCL|O_NOFOLLOW: never write through a name someone else planted between our check and open.
  const tmp = path.join(dir, `.${path.basename(file)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  const fh = await open(
    tmp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    try {
      // After creation, so the umask cannot narrow it.
      if (opts.mode !== undefined) await fh.chmod(opts.mode);
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    // Checked again just before the rename: the window left is the rename itself.
    const again = await lstat(file).catch(() => null);
    if (again && !again.isFile()) {
      throw new UserError(`${file}: refusing to replace ${fileKind(again)}; choose another path`);
    }
    await rename(tmp, file);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
  const dh = await open(dir, constants.O_RDONLY);
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}

/**
 * Create `file`, which must not exist, holding `data` (the lock's private records, linked into place
 * afterwards). O_EXCL|O_NOFOLLOW: whatever is already at the name — a file, a symlink planted there
 * (even a dangling one), a FIFO, a device — fails the call with EEXIST instead of being written through
 * or opened. Not synced: a record that does not survive a crash belongs to a process that is gone.
 */
export async function writeNewFile(file: string, data: string, mode = 0o600): Promise<void> {
  const fh = await open(
    file,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    mode,
  );
  let written = false;
  try {
    // After creation, so the umask cannot narrow it.
    await fh.chmod(mode);
    await fh.writeFile(data);
    written = true;
  } finally {
    await fh.close().catch(() => {});
    // Never leave a half-written record behind under a name only this process knows.
    if (!written) await unlink(file).catch(() => {});
  }
}

/** A write isolate refused before opening the file: what is at the name is not a kernel interface file. */
export class WriteRefused extends Error {}

/**
 * One write(2) of `data` to an existing kernel interface file (a cgroupfs file; in a fixture tree a
 * plain file standing in for one). Those are regular files; a symbolic link, a FIFO or a device at
 * that name is not one, and opening a device for writing can already act on it (a tape rewinds), so
 * the name is lstat'ed first and refused (WriteRefused) unless it is a regular file. The open does not
 * follow a link or wait for a FIFO's reader (O_NOFOLLOW|O_NONBLOCK), and the opened file must be the
 * one lstat'ed (device and inode), or nothing is written. Truncated on open: a fixture's plain file
 * then holds the value alone, and the kernel ignores it. Errors of the open and the write (the
 * kernel's answer: EINVAL, ENOSPC, EBUSY...) are thrown as they are, with their errno code.
 */
export async function writeKernelFile(file: string, data: Buffer): Promise<void> {
  const st = await lstat(file);
  if (!st.isFile())
    throw new WriteRefused(`refusing to write to ${file}: it is ${fileKind(st)}, not a kernel file`);
  const fh = await open(
    file,
    constants.O_WRONLY | constants.O_TRUNC | constants.O_NOFOLLOW | constants.O_NONBLOCK,
  );
  try {
    const opened = await fh.stat();
    if (opened.dev !== st.dev || opened.ino !== st.ino) {
      throw new WriteRefused(`refusing to write to ${file}: it was replaced while being opened`);
    }
    // A single write(2): cgroupfs acts on each write call separately.
    await fh.write(data, 0, data.length, null);
  } finally {
    await fh.close().catch(() => {});
  }
}
