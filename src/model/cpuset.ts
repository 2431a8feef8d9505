/**
 * A set of CPU (or NUMA node) ids in the kernel's list format, e.g. `0-3,8-11`.
 * Immutable; ids are kept sorted and unique so equality and printing are canonical.
 */
export class CpuSet {
  static readonly EMPTY = new CpuSet([]);
  readonly #ids: readonly number[];

  private constructor(sortedUnique: readonly number[]) {
    this.#ids = sortedUnique;
  }

  static of(ids: Iterable<number>): CpuSet {
    const arr = [...new Set(ids)];
    for (const id of arr) {
      if (!Number.isSafeInteger(id) || id < 0) throw new CpuSetParseError(`invalid cpu id ${id}`);
    }
    arr.sort((a, b) => a - b);
    return new CpuSet(arr);
  }

  /**
   * Parse the Linux list format (`cpuset.cpus`, `cpu/online`, `*_list` files). The kernel's stride
   * form (`0-15:2/4`) is never printed by sysfs, so it is rejected rather than guessed at. Stray NULs
   * and surrounding whitespace are tolerated because older kernels emit them (see sysfs quirks).
   */
  static parse(text: string): CpuSet {
    const s = text.replace(/\0/g, '').trim();
    if (s === '') return CpuSet.EMPTY;
    const ids: number[] = [];
    for (const part of s.split(',')) {
      const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
      if (!m) throw new CpuSetParseError(`malformed cpu list "${s}": bad element "${part}"`);
      const lo = Number(m[1]);
      const hi = m[2] === undefined ? lo : Number(m[2]);
      if (hi < lo) throw new CpuSetParseError(`malformed cpu list "${s}": range ${part} runs backwards`);
      if (hi > 1 << 20) throw new CpuSetParseError(`malformed cpu list "${s}": id ${hi} is out of range`);
      for (let i = lo; i <= hi; i++) ids.push(i);
    }
    return CpuSet.of(ids);
  }

  /** Parse the hex mask format (`thread_siblings`, `cpumap`): comma-separated 32-bit words, MSW first. */
  static parseMask(text: string): CpuSet {
    const s = text.replace(/\0/g, '').trim();
    if (s === '') return CpuSet.EMPTY;
    const words = s.split(',');
    const ids: number[] = [];
    for (let w = 0; w < words.length; w++) {
      const word = words[words.length - 1 - w]!;
      if (!/^[0-9a-fA-F]{1,8}$/.test(word)) throw new CpuSetParseError(`malformed cpu mask "${s}"`);
      const v = Number.parseInt(word, 16);
      for (let b = 0; b < 32; b++) if ((v >>> b) & 1) ids.push(w * 32 + b);
    }
    return CpuSet.of(ids);
  }

  get size(): number {
    return this.#ids.length;
  }
  get isEmpty(): boolean {
    return this.#ids.length === 0;
  }
  /** Lowest id, or undefined when empty. */
  get first(): number | undefined {
    return this.#ids[0];
  }
  has(id: number): boolean {
    // Binary search: sets can hold thousands of CPUs and this sits on the planner's hot path.
    let lo = 0;
    let hi = this.#ids.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const v = this.#ids[mid]!;
      if (v === id) return true;
      if (v < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }
  toArray(): number[] {
    return [...this.#ids];
  }
  [Symbol.iterator](): Iterator<number> {
    return this.#ids[Symbol.iterator]();
  }
  union(other: CpuSet): CpuSet {
    return CpuSet.of([...this.#ids, ...other.#ids]);
  }
  intersect(other: CpuSet): CpuSet {
    return new CpuSet(this.#ids.filter((id) => other.has(id)));
  }
  minus(other: CpuSet): CpuSet {
    return new CpuSet(this.#ids.filter((id) => !other.has(id)));
  }
  // Indexed loops, not every()/some() or for-of: the agent runs V8's interpreter and baseline
  // compiler only (cli/agent.ts), where a callback closing over `other` and each step of an iterator
  // are allocated, and its thread audit asks these of every cgroup and CPU list it meets.
  isSubsetOf(other: CpuSet): boolean {
    const ids = this.#ids;
    for (let i = 0; i < ids.length; i++) if (!other.has(ids[i]!)) return false;
    return true;
  }
  overlaps(other: CpuSet): boolean {
    const ids = this.#ids;
    for (let i = 0; i < ids.length; i++) if (other.has(ids[i]!)) return true;
    return false;
  }
  equals(other: CpuSet): boolean {
    return this.#ids.length === other.#ids.length && this.#ids.every((id, i) => id === other.#ids[i]);
  }
  /** Canonical Linux list format, ranges collapsed: `0-3,8-11`; empty set prints as "". */
  toString(): string {
    const out: string[] = [];
    let i = 0;
    const ids = this.#ids;
    while (i < ids.length) {
      let j = i;
      while (j + 1 < ids.length && ids[j + 1] === ids[j]! + 1) j++;
      out.push(j === i ? `${ids[i]}` : `${ids[i]}-${ids[j]}`);
      i = j + 1;
    }
    return out.join(',');
  }
  toJSON(): number[] {
    return this.toArray();
  }
}

export class CpuSetParseError extends Error {
  override name = 'CpuSetParseError';
}

/** Two CPU list files' contents name the same CPUs (`0-1,4` = `0,1,4`); unparsable text compares as text. */
export function sameCpuList(a: string, b: string): boolean {
  try {
    return CpuSet.parse(a).equals(CpuSet.parse(b));
  } catch {
    return a.trim() === b.trim();
  }
}

/**
 * `cpus` as the kernel prints a mask (32-bit hex words, most significant first, comma-separated),
 * as wide as `like` (the live value, whose width is the kernel's CPU count), so a value written
 * reads back byte for byte the same. Throws when a CPU does not fit in that width.
 */
export function formatMask(cpus: CpuSet, like: string | null): string {
  const liveWords = like?.trim() ? like.trim().split(',') : null;
  const highest = cpus.size === 0 ? 0 : cpus.toArray()[cpus.size - 1]!;
  const words = liveWords?.length ?? Math.floor(highest / 32) + 1;
  if (highest >= words * 32)
    throw new CpuSetParseError(`cpu ${highest} does not fit a ${words * 32}-bit mask`);
  const firstWidth = liveWords ? liveWords[0]!.length : 8;
  const out: string[] = [];
  for (let w = words - 1; w >= 0; w--) {
    let v = 0;
    for (const id of cpus) if (id >= w * 32 && id < w * 32 + 32) v |= 1 << (id - w * 32);
    out.push((v >>> 0).toString(16).padStart(w === words - 1 ? firstWidth : 8, '0'));
  }
  if (liveWords && firstWidth < 8 && out[0]!.length > firstWidth) {
    throw new CpuSetParseError(`cpus ${cpus} do not fit the mask width of ${JSON.stringify(like)}`);
  }
  return out.join(',');
}
