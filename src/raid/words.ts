import type { RaidController } from '../model/raid.js';
// Small, strict word readers shared by the adapters. Each returns null for anything it does not
// recognise: a surprising word must become "unknown", never a guess (raid-cli.md §8.8).

/** `Yes`/`No`, `True`/`False`, `On`/`Off`. */
export function yesNo(value: unknown): boolean | null {
  if (typeof value !== 'string') return null;
  const v = value.trim().toLowerCase();
  if (v === 'yes' || v === 'true' || v === 'on') return true;
  if (v === 'no' || v === 'false' || v === 'off') return false;
  return null;
}

/** A string value, trimmed; null for missing, empty, `NA`, `N/A`. */
export function text(value: unknown): string | null {
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string') return null;
  const v = value.trim();
  if (v === '' || v === 'NA' || v === 'N/A' || v === '-') return null;
  return v;
}

/** Keys compared case- and space-insensitively: vendors change `Next Learn time` vs `Next learn Time`. */
export function normKey(key: string): string {
  return key
    .toLowerCase()
    .replace(/[\s_]+/g, ' ')
    .trim();
}

/** Read `key : value` lines (MegaCli, ssacli, arcconf). Returns [key, value] or null. */
export function colonPair(line: string): [string, string] | null {
  const i = line.indexOf(':');
  if (i <= 0) return null;
  const key = line.slice(0, i).trim();
  if (key === '') return null;
  return [key, line.slice(i + 1).trim()];
}

/** The value under `key`, made by `make` and stored on first use: parsers merge facts per controller. */
export function getOrCreate<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

/**
 * A read that did not complete (non-zero exit, no completion marker, cut short): every value it would
 * have given is unknown, and nothing is changed on that controller.
 */
export function markIncomplete(c: RaidController, why: string, suffix = '; its values are unknown'): void {
  c.readOnlyReason = why;
  c.findings.push({ severity: 'unknown', message: `${why}${suffix}`, target: c.id });
}
