// Files a long-running reader looks at again and again, each opened once and then read from offset 0,
// which makes the kernel print a cgroupfs, sysfs or procfs file afresh: an open and a close less per
// look. The open is what costs: a path walk of six or seven components, ~2/3 of a small file's read
// (open, read, close: ~12 µs against ~3 µs for the read alone on the bench VMs, Node 24).
//
// What a kept descriptor can no longer show, and how each case is caught:
// - a cgroup removed (a unit restarted into a fresh cgroup at the same path) or a controller disabled
//   (its files vanish): kernfs deactivates the removed files, and every read of a descriptor open on
//   one fails with ENODEV, so the file is opened again by its path — the new cgroup's file, or none;
// - a regular file (a fixture tree, the bench, a test) replaced by a rename, or its directory removed
//   and made again: its directory's inode number or change time differs, which one stat of the
//   directory a round shows, for all its files (on kernfs and procfs the read itself fails instead);
// - a cgroup renamed in place: cgroup v2 refuses rename(2), so a path keeps naming the same cgroup for
//   the cgroup's life.
// A reader of many files keeps at most `capacity` descriptors (the oldest is closed first), and one
// that reads in rounds closes after each round what that round did not read.
//
// It also keeps directory listings (`names`), listed again only when what decides a directory's
// entries changed: the caller's key (for a cgroup, its controllers and type: a cgroup's files follow
// from those and the kernel), and on a regular filesystem the directory's stamp. Listing a cgroup is
// five system calls (open, fstat, two getdents, close) against none for a remembered one.
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readdirSync,
  readSync,
  statfsSync,
  statSync,
} from 'node:fs';
import path from 'node:path';
import { readFromStart } from './read.js';

/** statfs magic numbers of the filesystems whose files fail to read once removed (see above). */
const KERNEL_FS = new Set([
  0x63677270, // cgroup2
  0x0027e0eb, // cgroup (v1)
  0x62656572, // sysfs
  0x9fa0, // proc
]);

interface Kept {
  fd: number;
  /** Null on cgroupfs, sysfs and procfs (a removed file fails to read); else its directory as opened. */
  dir: DirStamp | null;
  /** The round that last read it. */
  round: number;
}

/** A directory's identity and its last change of entries (any file created, removed or renamed). */
interface DirStamp {
  path: string;
  ino: number;
  ctimeMs: number;
  /** Taken within RACY_MS of the change it shows: a change in the same clock tick would not show. */
  racy: boolean;
  /** The round it was last looked at (a directory found gone is kept as null until the round ends). */
  round: number;
}

interface Listing {
  names: Set<string>;
  key: string;
  /** Null on a kernel filesystem (its entries follow from the key); else the directory as listed. */
  dir: DirStamp | null;
  round: number;
}

export class KeptFiles {
  private readonly kept = new Map<string, Kept>();
  /** st_dev → whether that filesystem is a kernel one (one statfs per filesystem, not per file). */
  private readonly kernelDevs = new Map<number, boolean>();
  /** Directories of the kept regular files, each looked at once a round. */
  private readonly dirs = new Map<string, DirStamp | null>();
  private readonly listings = new Map<string, Listing>();
  private round = 0;
  private readonly buffer: Buffer;

  constructor(
    private readonly capacity: number,
    bufferBytes = 64 * 1024,
  ) {
    this.buffer = Buffer.allocUnsafe(bufferBytes);
  }

  /**
   * The file's text from its start, whole or its first `maxBytes`; null when it cannot be read. Only
   * regular files are opened (kernel files are regular files): never a FIFO or a device, whose open
   * alone can block or act. A file longer than the buffer (a long mountinfo) is read on through the
   * same descriptor, not cut short.
   */
  read(file: string, maxBytes = Number.POSITIVE_INFINITY, encoding: BufferEncoding = 'utf8'): string | null {
    let k = this.kept.get(file);
    let n = k ? this.readFrom(k, maxBytes, true) : -1;
    if (k && n < 0) this.drop(file, k);
    if (n < 0) {
      k = this.open(file) ?? undefined;
      if (!k) return null;
      n = this.readFrom(k, maxBytes, false);
      if (n < 0) {
        this.drop(file, k);
        return null;
      }
    }
    k!.round = this.round;
    if (n === this.buffer.length && maxBytes > n) return this.readRest(k!, maxBytes, encoding);
    return this.buffer.toString(encoding, 0, n);
  }

  /**
   * A file longer than the buffer: the rest read through the same descriptor (never the path again,
   * which could name something else by now), up to `maxBytes`; null when a read fails.
   */
  private readRest(k: Kept, maxBytes: number, encoding: BufferEncoding): string | null {
    const chunks = [Buffer.from(this.buffer)];
    let at = this.buffer.length;
    try {
      while (at < maxBytes) {
        const chunk = Buffer.allocUnsafe(Math.min(this.buffer.length, maxBytes - at));
        const r = readSync(k.fd, chunk, 0, chunk.length, at);
        if (r === 0) break;
        chunks.push(chunk.subarray(0, r));
        at += r;
      }
    } catch {
      return null;
    }
    return Buffer.concat(chunks).toString(encoding);
  }

  /**
   * The names in `dir`, listed again only when `key` differs from the last listing's or, on a regular
   * filesystem, the directory's entries changed since; null when it is not a readable directory. The
   * caller must `forget` a listing that proved wrong (a listed file that no longer reads).
   */
  names(dir: string, key: string): Set<string> | null {
    const known = this.listings.get(dir);
    if (known && known.key === key) {
      const d = known.dir && this.dirNow(dir);
      if (!known.dir || (d && sameDir(d, known.dir))) {
        known.round = this.round;
        return known.names;
      }
    }
    this.listings.delete(dir);
    let st: ReturnType<typeof statSync>;
    let names: Set<string>;
    try {
      st = statSync(dir, { throwIfNoEntry: false });
      if (!st?.isDirectory()) return null;
      names = new Set(readdirSync(dir));
    } catch {
      return null;
    }
    // The stamp is the stat before the listing: an entry made after that stat changes the
    // directory's change time, so the next round lists it again.
    const kernel = this.kernelDevs.get(st.dev) ?? this.judgeDev(dir, st.dev);
    const stamp = kernel ? null : stampOf(dir, st, this.round);
    this.listings.set(dir, { names, key, dir: stamp, round: this.round });
    return names;
  }

  /** The names of the last listing of `dir`, unchecked (undefined: none kept). */
  lastNames(dir: string): ReadonlySet<string> | undefined {
    return this.listings.get(dir)?.names;
  }

  /** Drop a listing found wrong: the next `names` lists the directory again. */
  forget(dir: string): void {
    this.listings.delete(dir);
  }

  /** A round is over: what it did not read is closed (a cgroup gone, a workload removed). */
  endRound(): void {
    for (const [dir, l] of this.listings) if (l.round !== this.round) this.listings.delete(dir);
    for (const [file, k] of this.kept) if (k.round !== this.round) this.drop(file, k);
    for (const [dir, d] of this.dirs) if (!d || d.round !== this.round) this.dirs.delete(dir);
    this.round++;
  }

  /** How many descriptors are open (tests, metrics of the reader's footprint). */
  get size(): number {
    return this.kept.size;
  }

  closeAll(): void {
    for (const [file, k] of this.kept) this.drop(file, k);
  }

  private open(file: string): Kept | null {
    let fd: number;
    try {
      // A missing file is common (a workload not started yet): no exception for it.
      if (!statSync(file, { throwIfNoEntry: false })?.isFile()) return null;
      fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch {
      return null;
    }
    let dir: DirStamp | null = null;
    try {
      // What was opened must still be the regular file that was checked.
      const st = fstatSync(fd);
      if (!st.isFile()) throw new Error('not a regular file');
      if (!(this.kernelDevs.get(st.dev) ?? this.judgeDev(file, st.dev))) {
        dir = this.dirNow(path.dirname(file));
        if (!dir) throw new Error('its directory is gone');
      }
    } catch {
      closeQuietly(fd);
      return null;
    }
    if (this.kept.size >= this.capacity) {
      const [oldest, old] = this.kept.entries().next().value as [string, Kept];
      this.drop(oldest, old);
    }
    const k = { fd, dir, round: this.round };
    this.kept.set(file, k);
    return k;
  }

  private judgeDev(file: string, dev: number): boolean {
    const kernel = KERNEL_FS.has(statfsSync(file).type);
    this.kernelDevs.set(dev, kernel);
    return kernel;
  }

  /** The directory as it is this round: looked at once a round, however many of its files are read. */
  private dirNow(dir: string): DirStamp | null {
    const known = this.dirs.get(dir);
    if (known !== undefined && (known === null || known.round === this.round)) return known;
    const st = statSync(dir, { throwIfNoEntry: false });
    const now = st ? stampOf(dir, st, this.round) : null;
    this.dirs.set(dir, now);
    return now;
  }

  /**
   * Bytes read into the buffer from the file's start; -1 when it must be opened again (or cannot).
   * A descriptor `kept` from an earlier round is checked against its directory first; one just opened
   * is what the path names now.
   */
  private readFrom(k: Kept, maxBytes: number, kept: boolean): number {
    try {
      if (kept && k.dir) {
        // Entries created, removed or renamed there since it was opened: open the path again.
        const d = this.dirNow(k.dir.path);
        if (!d || !sameDir(d, k.dir)) return -1;
      }
      return readFromStart(k.fd, this.buffer, Math.min(maxBytes, this.buffer.length));
    } catch {
      return -1;
    }
  }

  private drop(file: string, k: Kept): void {
    this.kept.delete(file);
    closeQuietly(k.fd);
  }
}

/**
 * A file's times advance by the kernel's clock tick (1-10 ms), so a stamp taken in the tick of a
 * change cannot show a second change in that tick; it is trusted once older than this (git's "racily
 * clean" entries, the same rule).
 */
const RACY_MS = 100;

function stampOf(dir: string, st: { ino: number; ctimeMs: number }, round: number): DirStamp {
  return { path: dir, ino: st.ino, ctimeMs: st.ctimeMs, racy: Date.now() - st.ctimeMs < RACY_MS, round };
}

/** The directory as it was stamped before: the same inode, no entry changed since, not racy then. */
function sameDir(now: DirStamp, then: DirStamp): boolean {
  return !then.racy && now.ino === then.ino && now.ctimeMs === then.ctimeMs;
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed: nothing to release
  }
}

/** The few kernel files the agent polls several times a second (the PID counter, the online lists). */
const polled = new KeptFiles(16, 4096);

/**
 * A kernel-generated file (procfs, sysfs) that a long-running reader polls, through one descriptor
 * (KeptFiles): at most `maxBytes` (≤ 4 KiB); null when it cannot be read. A reader of many roots
 * (tests, a tool run over fixture trees) keeps only the latest 16 files open.
 */
export function readKernelFileAgain(file: string, maxBytes: number): string | null {
  return polled.read(file, maxBytes, 'latin1');
}
