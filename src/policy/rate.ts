// A write rate and a time window as operators write them when they size Kafka's page cache
// ("170MB/s for 10m"). Returns an error string instead of throwing so the caller attaches the
// field's location, as parseMemoryAmount does.
import { describe, MAX_EXACT } from './size.js';

/**
 * Bytes a second: a number, or a size per second. Disk tools print rates in both bases (fio:
 * "bw=162MiB/s (170MB/s)"), so both are taken, each as it is written: kB/s, MB/s, GB/s are base 1000
 * as fio, iostat's datasheets and vendors mean them; KiB/s, MiB/s, GiB/s and the bare K/s, M/s, G/s
 * of isolate's sizes and systemd's IO*BandwidthMax= are base 1024.
 */
export function parseRate(value: unknown): number | string {
  const expected =
    'expected bytes a second (e.g. 178257920) or a rate such as 170MB/s (base 1000), 162MiB/s or 162M/s (base 1024)';
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value <= 0) return `${expected}; got ${value}`;
    return value;
  }
  if (typeof value !== 'string') return `${expected}; got ${describe(value)}`;
  const m = /^(\d+(?:\.\d+)?)\s*(?:([kKMGT])(i?)B?|B)?\/s$/.exec(value.trim());
  if (!m) return `${expected}; got ${describe(value)}`;
  const [, n, unit, i] = m;
  const decimal = unit !== undefined && i === '' && /B\/s$/.test(value.trim());
  const power = unit === undefined ? 0 : 'KMGT'.indexOf(unit.toUpperCase()) + 1;
  const bytes = Number(n) * (decimal ? 1000 : 1024) ** power;
  if (!(bytes >= 1)) return `the rate must be at least 1 byte a second; got ${describe(value)}`;
  if (bytes > MAX_EXACT) return `${describe(value)} is too large; ${expected}`;
  return Math.round(bytes);
}

/** At most a day: a catch-up window longer than that is not a page cache's job. */
const MAX_WINDOW_SECONDS = 24 * 3600;

/** Seconds: a number of seconds, or a duration with unit s, m (or min) or h (`10m`, `90s`, `1.5h`). */
export function parseWindow(value: unknown): number | string {
  const expected = 'expected a duration such as 10m, 90s or 1h (s, m or min, h), or a number of seconds';
  let seconds: number;
  if (typeof value === 'number') seconds = value;
  else if (typeof value === 'string') {
    const m = /^(\d+(?:\.\d+)?)\s*(s|m|min|h)$/.exec(value.trim());
    if (!m) return `${expected}; got ${describe(value)}`;
    seconds = Number(m[1]) * { s: 1, m: 60, min: 60, h: 3600 }[m[2] as 's' | 'm' | 'min' | 'h'];
  } else return `${expected}; got ${describe(value)}`;
  if (!(seconds > 0) || seconds > MAX_WINDOW_SECONDS)
    return `the window must be above 0 and at most 24h; got ${describe(value)}`;
  return seconds;
}
