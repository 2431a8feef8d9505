// Byte sizes as isolate reads and prints them. One parser for the policy (`32G`, `1.5T`) and the
// kernel's memory files (`max`, plain bytes); one formatter for every human message.

/** The page size memory limits are rounded to (x86-64, arm64 with 4K pages). */
export const PAGE_SIZE = 4096;

const UNITS: Record<string, number> = {
  '': 1,
  K: 1024,
  M: 1024 ** 2,
  G: 1024 ** 3,
  T: 1024 ** 4,
  P: 1024 ** 5,
};

/**
 * A size with an optional base-1024 unit as systemd and the kernel write them: `1073741824`, `512M`,
 * `1.5T`, `32GiB`, `32GB`. Null when it is not one; `max`/`infinity` are the caller's business.
 */
export function parseSize(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)\s*([KMGTP]?)(?:i?B)?$/i.exec(text.trim());
  if (!m) return null;
  const bytes = Math.floor(Number(m[1]) * UNITS[m[2]!.toUpperCase()]!);
  return Number.isSafeInteger(bytes) ? bytes : null;
}

/** A kernel memory value (`memory.max` and friends): bytes, or `max`. */
export function parseBytes(v: string): number | 'max' | null {
  const s = v.trim();
  if (s === 'max' || s === 'infinity') return 'max';
  return parseSize(s);
}

/** `34359738368` → `32G`, for human output. */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [
    ['T', 1024 ** 4],
    ['G', 1024 ** 3],
    ['M', 1024 ** 2],
    ['K', 1024],
  ] as const) {
    if (bytes < size) continue;
    return bytes % size === 0 ? `${bytes / size}${unit}` : `${(bytes / size).toFixed(1)}${unit}`;
  }
  return `${bytes}`;
}

/** Round down to whole pages, as the kernel stores memory limits. */
export function pageAlign(bytes: number): number {
  return Math.floor(bytes / PAGE_SIZE) * PAGE_SIZE;
}

/** "1 core", "2 cores": counts in messages read as English. */
export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}
