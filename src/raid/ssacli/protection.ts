// ssacli / hpssacli / hpacucli truth tables (raid-cli.md §5, §8.1): the battery/capacitor unit and the
// cache module's own status, which ssacli reports separately.
import type { Finding, Protection } from '../../model/raid.js';
import { Judgement, type WordTable } from '../protection.js';

/**
 * `Battery/Capacitor Status`: OK, Recharging, "Failed (Replace Batteries)"/"(Replace Capacitors)" —
 * libstoragemgmt's map [R8]; netdata-P400i-cache-disabled-battery-failed.txt prints the first.
 */
export const UNIT_STATUS: WordTable = {
  ok: 'healthy',
  recharging: 'charging',
  'failed (replace batteries)': 'replace',
  'failed (replace capacitors)': 'replace',
  'failed (replace batteries/capacitors)': 'replace',
};

/**
 * `Cache Status` of the cache module (raid-cli.md §5): only `OK` caches writes. `Temporarily
 * Disabled` is the controller protecting itself (e.g. "Cache disabled; low batteries."), so it is
 * INFO; `Permanently Disabled` needs a person; `Not Configured` is a cache nobody set up.
 */
export const CACHE_STATUS: Readonly<Record<string, Finding['severity'] | 'ok'>> = {
  ok: 'ok',
  'temporarily disabled': 'info',
  'permanently disabled': 'warning',
  'not configured': 'info',
};

export function judgeSsacliUnit(p: Protection, status: string | null, count: string | null): Protection {
  const j = new Judgement();
  if (count !== null && /^\d+$/.test(count) && Number(count) === 0)
    j.add('absent', `Battery/Capacitor Count: ${count}`);
  if (status !== null) j.word('Battery/Capacitor Status', status, UNIT_STATUS);
  else if (count === null || Number(count) > 0) j.unknownWithoutWord();
  return j.apply(p);
}

/** Findings about `Cache Status` (+ `Cache Status Details`): unknown words are quoted. */
export function cacheStatusFindings(
  status: string | null,
  details: string | null,
  target: string,
): Finding[] {
  if (status === null) return [];
  const meaning = CACHE_STATUS[status.trim().toLowerCase()];
  const why = details ? ` (${details})` : '';
  if (meaning === 'ok') return [];
  if (meaning === undefined) {
    return [
      {
        severity: 'warning',
        message: `Cache Status "${status}" is not a word isolate knows: the cache is treated as not caching writes safely${why}`,
        target,
      },
    ];
  }
  const text =
    meaning === 'info'
      ? `cache status ${status}${why}: the controller is not caching writes`
      : `cache status ${status}${why}: the cache module needs attention`;
  return [{ severity: meaning, message: text, target }];
}
