/**
 * Minimal writer for the `newc` cpio format the kernel unpacks as initramfs.
 *
 * Written here rather than shelling out to cpio(1) because an initramfs needs a /dev/console device
 * node (without it init has no stdout and we would see nothing on the serial port), and creating device
 * nodes on disk for cpio to pick up would need mknod on the host. Building the archive in memory also
 * makes it byte-for-byte reproducible, which the content-keyed cache relies on.
 */

const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;
const S_IFCHR = 0o020000;

function hex8(n: number): string {
  return n.toString(16).padStart(8, '0');
}

function pad4(len: number): Buffer {
  const r = len % 4;
  return Buffer.alloc(r === 0 ? 0 : 4 - r);
}

/** Numeric owner; a Debian userland has a few group-owned files (shadow, the journal directory). */
export interface Owner {
  uid: number;
  gid: number;
}

export class CpioWriter {
  readonly #chunks: Buffer[] = [];
  readonly #dirs = new Set<string>(['']);
  // The kernel only treats entries with nlink >= 2 as hard links, so unique inode numbers are enough.
  #ino = 1;
  #finished = false;

  /**
   * A directory an earlier archive made: no entry, but no implicit one either. An archive layered on
   * another must not repeat a directory it did not change: the kernel applies the entry's mode and owner
   * to the existing directory (an implicit one is 0755 root: /tmp would lose its sticky bit).
   */
  existing(path: string): this {
    this.#dirs.add(norm(path));
    return this;
  }

  /** Paths are guest paths; a leading slash is optional. Parent directories are created implicitly. */
  dir(path: string, mode = 0o755, owner?: Owner): this {
    const p = norm(path);
    if (this.#dirs.has(p)) return this;
    this.#parents(p);
    this.#dirs.add(p);
    this.#entry(p, S_IFDIR | mode, Buffer.alloc(0), 2, 0, 0, owner);
    return this;
  }

  file(path: string, data: Buffer | string, mode = 0o644, owner?: Owner): this {
    const p = norm(path);
    this.#parents(p);
    this.#entry(p, S_IFREG | mode, typeof data === 'string' ? Buffer.from(data) : data, 1, 0, 0, owner);
    return this;
  }

  symlink(path: string, target: string): this {
    const p = norm(path);
    this.#parents(p);
    this.#entry(p, S_IFLNK | 0o777, Buffer.from(target), 1);
    return this;
  }

  charDevice(path: string, major: number, minor: number, mode = 0o600): this {
    const p = norm(path);
    this.#parents(p);
    this.#entry(p, S_IFCHR | mode, Buffer.alloc(0), 1, major, minor);
    return this;
  }

  /** Appends the trailer; the result can be concatenated with other archives (the kernel reads them in order). */
  finish(): Buffer {
    if (!this.#finished) {
      this.#entry('TRAILER!!!', 0, Buffer.alloc(0), 1);
      this.#finished = true;
    }
    return Buffer.concat(this.#chunks);
  }

  #parents(p: string): void {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) this.dir(parts.slice(0, i).join('/'));
  }

  #entry(
    name: string,
    mode: number,
    data: Buffer,
    nlink: number,
    rdevMajor = 0,
    rdevMinor = 0,
    owner: Owner = { uid: 0, gid: 0 },
  ): void {
    if (this.#finished) throw new Error('cpio archive already finished');
    const nameBuf = Buffer.from(`${name}\0`);
    const header =
      '070701' +
      hex8(this.#ino++) +
      hex8(mode) +
      hex8(owner.uid) +
      hex8(owner.gid) +
      hex8(nlink) +
      hex8(0) + // mtime: fixed so archives are reproducible
      hex8(data.length) +
      hex8(0) +
      hex8(0) +
      hex8(rdevMajor) +
      hex8(rdevMinor) +
      hex8(nameBuf.length) +
      hex8(0);
    const h = Buffer.from(header, 'ascii');
    this.#chunks.push(h, nameBuf, pad4(h.length + nameBuf.length), data, pad4(data.length));
  }
}

function norm(path: string): string {
  const p = path.replace(/^\/+/, '').replace(/\/+$/, '');
  if (p === '' || p.split('/').some((s) => s === '..' || s === '.' || s === '')) {
    throw new Error(`bad guest path "${path}"`);
  }
  return p;
}
