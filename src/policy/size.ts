import type { MemoryAmount } from '../model/policy.js';
import { parseSize } from '../model/units.js';

/** 2^53 − 1: the largest whole number a YAML (or JSON) number holds exactly, so the largest count or byte size. */
export const MAX_EXACT = Number.MAX_SAFE_INTEGER;

/** Above MAX_EXACT a number is rounded (99999999999999999999 reads as 100000000000000000000). */
export const TOO_LARGE = `got a number above ${MAX_EXACT} (2^53 − 1), the largest whole number a policy holds exactly`;

/**
 * Parse a memory amount: bytes (`1073741824`), a size with a base-1024 unit as systemd writes them
 * (`512M`, `32G`, `1.5T`, also `32GiB`; `32GB` is refused as ambiguous), a percentage (`25%`), or
 * `max`/`infinity`.
 * Returns an error string instead of throwing so the caller can attach the field's location.
 */
export function parseMemoryAmount(value: unknown, allowUnlimited: boolean): MemoryAmount | string {
  const expected = `expected bytes (e.g. 34359738368), a size with unit K, M, G or T (e.g. 32G), a percentage (e.g. 25%)${allowUnlimited ? ' or "max"' : ''}`;
  if (typeof value === 'number') {
    if (value > MAX_EXACT) return `${TOO_LARGE}; ${expected}`;
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
    if (p <= 0 || p > 100) return `percentage must be above 0% and at most 100%; got ${describe(s)}`;
    return { percent: p };
  }
  const decimal = /^(\d+(?:\.\d+)?)\s*([KMGTP])B$/i.exec(s);
  if (decimal) {
    // "GB" means 10^9 to disk vendors and 2^30 to many tools: reading one as the other silently
    // is a 7% surprise in a memory limit. Base 1024 is the only one isolate takes; say so.
    const [, n, u] = decimal;
    return `"${s}" is ambiguous (${u!.toUpperCase()}B is base 1000 to some tools, base 1024 to others); isolate sizes are base 1024: write ${n}${u!.toUpperCase()} or ${n}${u!.toUpperCase()}iB`;
  }
  if (!/^\d+(?:\.\d+)?\s*[KMGTP]?(?:iB)?$/i.test(s)) return `${expected}; got ${describe(s)}`;
  const bytes = parseSize(s);
  if (bytes === null) {
    return `size ${describe(s)} is too large: at most ${MAX_EXACT} bytes (just under 8P); write a smaller size${allowUnlimited ? ' or "max"' : ''}`;
  }
  return { bytes };
}

/** Longest piece of a user's value echoed back in an error. */
const ECHO_MAX = 60;

/**
 * A value quoted for an error message: at most ECHO_MAX characters and control bytes escaped, so a
 * 50 MB string or a binary blob in a policy gives one short line, not the blob.
 */
export function quote(text: string): string {
  const cut = text.length > ECHO_MAX ? `${text.slice(0, ECHO_MAX)}…` : text;
  const escaped = cut.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029"\\]/g, (c) =>
    c === '"' ? '\\"' : c === '\\' ? '\\\\' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return `"${escaped}"${text.length > ECHO_MAX ? ` (${text.length} characters)` : ''}`;
}

export function describe(value: unknown): string {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return quote(value);
  return `${typeof value} ${quote(String(value)).slice(1, -1)}`;
}
