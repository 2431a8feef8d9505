// The sysfs tree under a root, read synchronously: files as trimmed text, CPU lists and masks,
// integers and directory entries, each malformed file refused with its path (the tree looks
// damaged). Synchronous on purpose: a few hundred tiny files read in a tight loop is faster than as
// many promises, and `plan` must start fast.
import { readdirSync } from 'node:fs';
import { normalize } from 'node:path';
import { CpuSet, CpuSetParseError } from '../model/cpuset.js';
import { UserError } from '../model/errors.js';
import { ReadRefused, readBoundedIfPresent } from '../sys/read.js';

export const CPU_DIR = 'sys/devices/system/cpu';
export const NODE_DIR = 'sys/devices/system/node';

export class SysfsReader {
  /** `root` normalised once, with a trailing slash: every path is `base + rel`. */
  private readonly base: string;

  constructor(readonly root: string) {
    const r = normalize(root);
    this.base = r.endsWith('/') ? r : `${r}/`;
  }

  /**
   * Same as join(root, rel) for the paths built here (`rel` relative, made of constants and
   * directory entry names, never `.`, `..` or empty parts) without normalising each one: a
   * few hundred joins were a fifth of a cold topology read, and `plan` runs it cold.
   */
  path(rel: string): string {
    return this.base + rel;
  }

  /** File content with stray NULs removed (older kernels append them), or null when absent. */
  text(rel: string): string | null {
    return sysfsText(this.path(rel));
  }

  list(rel: string): CpuSet | null {
    return this.cpus(rel, CpuSet.parse);
  }

  mask(rel: string): CpuSet | null {
    return this.cpus(rel, CpuSet.parseMask);
  }

  /** A CPU file read and parsed; absent is null, a value that does not parse names the file. */
  private cpus(rel: string, parse: (text: string) => CpuSet): CpuSet | null {
    const t = this.text(rel);
    if (t === null) return null;
    try {
      return parse(t);
    } catch (err) {
      throw this.bad(rel, err);
    }
  }

  /** Prefer the `_list` form, fall back to the hex mask (older kernels only have masks). */
  listOrMask(relBase: string): CpuSet | null {
    return this.list(`${relBase}_list`) ?? this.mask(relBase);
  }

  int(rel: string): number | null {
    const t = this.text(rel);
    if (t === null || t === '') return null;
    if (!/^-?\d+$/.test(t)) throw this.bad(rel, new Error(`expected an integer, found "${t}"`));
    return Number(t);
  }

  entries(rel: string): string[] {
    try {
      return readdirSync(this.path(rel));
    } catch (err) {
      if (isMissing(err)) return [];
      throw new UserError(`${this.path(rel)}: cannot list (${(err as Error).message})`);
    }
  }

  bad(rel: string, err: unknown): UserError {
    const why = err instanceof CpuSetParseError || err instanceof Error ? err.message : String(err);
    return new UserError(
      `${this.path(rel)}: ${why}; the sysfs tree looks damaged — check that --root points at a real /sys capture`,
    );
  }
}

/** Largest sysfs or /proc file isolate reads: the kernel's are one page; a bigger one is not sysfs. */
const SYSFS_MAX_BYTES = 256 * 1024;

/** A sysfs file's text (stray NULs removed: older kernels append them), or null when absent. */
export function sysfsText(file: string): string | null {
  try {
    const text = readBoundedIfPresent(file, { maxBytes: SYSFS_MAX_BYTES });
    return text === null ? null : text.replace(/\0/g, '').trim();
  } catch (err) {
    if (err instanceof ReadRefused) {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null;
      throw new UserError(
        `${file}: cannot read (${err.reason}); the sysfs tree looks damaged — check that --root points at a real /sys capture`,
      );
    }
    throw err;
  }
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

export function numbered(names: string[], prefix: string): number[] {
  const re = new RegExp(`^${prefix}(\\d+)$`);
  const ids: number[] = [];
  for (const n of names) {
    const m = re.exec(n);
    if (m) ids.push(Number(m[1]));
  }
  return ids.sort((a, b) => a - b);
}
