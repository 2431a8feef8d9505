import type { MemoryAmount } from '../model/policy.js';
import { parseSize } from '../model/units.js';

/**
 * Parse a memory amount: bytes (`1073741824`), a size with a base-1024 unit as systemd writes them
 * (`512M`, `32G`, `1.5T`, also `32GiB`/`32GB`), a percentage (`25%`), or `max`/`infinity`.
 * Returns an error string instead of throwing so the caller can attach the field's location.
 */
export function parseMemoryAmount(value: unknown, allowUnlimited: boolean): MemoryAmount | string {
  const expected = `expected bytes (e.g. 34359738368), a size with unit K, M, G or T (e.g. 32G), a percentage (e.g. 25%)${allowUnlimited ? ' or "max"' : ''}`;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) return `${expected}; got ${value}`;
    return { bytes: value };
  }
  if (typeof value !== 'string') return `${expected}; got ${describe(value)}`;
  const s = value.trim();
  if (s === 'max' || s === 'infinity') {
    return allowUnlimited ? { unlimited: true } : `"${s}" is only allowed for high and max; ${expected}`;
  }
  const pct = /^(\d+(?:\.\d+)?)\s*%$/.exec(s);
  if (pct) {
    const p = Number(pct[1]);
    if (p <= 0 || p > 100) return `percentage must be above 0% and at most 100%; got ${s}`;
    return { percent: p };
  }
  if (!/^\d+(?:\.\d+)?\s*[KMGTP]?(?:i?B)?$/i.test(s)) return `${expected}; got "${s}"`;
  const bytes = parseSize(s);
  if (bytes === null) return `size ${s} is too large`;
  return { bytes };
}

export function describe(value: unknown): string {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return `"${value}"`;
  return `${typeof value} ${String(value)}`;
}
