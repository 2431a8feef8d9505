// `io:` on a workload: the cgroup io controller's settings on the exclusive workloads' disks, with the
// defaults an SRE gets by writing `disks:` alone (docs/disks.md says why these numbers).
import type { FieldErrors, FieldPath } from '../model/field.js';
import { parseRate } from './rate.js';
import { IO_LIMIT_KEYS, type IoLimitKey, type IoSpec } from '../model/policy.js';
import { describe } from './size.js';
import { exact, mapping } from './validate.js';

/** Kafka's weight on its disks by default: ten times a cgroup's default (100). */
export const EXCLUSIVE_IO_WEIGHT = 1000;
/** A batch workload's weight on Kafka's disks by default: a quarter of the default. */
export const BATCH_IO_WEIGHT = 25;
/** `latency: auto`: the io.latency target on a spinning (or unknown) disk, in microseconds. */
export const HDD_LATENCY_USEC = 25_000;
/** `latency: auto`: the io.latency target on a solid-state disk, in microseconds. */
export const SSD_LATENCY_USEC = 2_000;

/** What io.latency targets isolate accepts: below 100 µs no disk answers; above 10 s it protects nothing. */
const LATENCY_MIN_USEC = 100;
const LATENCY_MAX_USEC = 10_000_000;

const LATENCY_UNITS: Record<string, number> = { us: 1, ms: 1000, s: 1_000_000 };

/** `25ms`, `500us`, `1s` → microseconds; null when it is not one. */
export function parseLatency(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)\s*(us|ms|s)$/.exec(text.trim());
  if (!m) return null;
  const usec = Math.round(Number(m[1]) * LATENCY_UNITS[m[2]!]!);
  return Number.isSafeInteger(usec) ? usec : null;
}

/** The resolved io settings of one workload; undefined when it gets none. */
export function parseIo(
  value: unknown,
  cls: 'exclusive' | 'batch',
  hasDisks: boolean,
  path: FieldPath,
  errors: FieldErrors,
): IoSpec | undefined {
  if (value === undefined) {
    if (cls === 'exclusive') {
      return hasDisks ? { latency: 'auto', weight: EXCLUSIVE_IO_WEIGHT, max: {} } : undefined;
    }
    return { latency: 'off', weight: BATCH_IO_WEIGHT, max: {} };
  }
  const io = mapping(
    value,
    path,
    errors,
    cls === 'exclusive'
      ? 'a mapping like { latency: 25ms, weight: 1000 }'
      : 'a mapping like { weight: 25, max: { wbps: 80MB/s } }',
    cls === 'exclusive' ? ['latency', 'weight'] : ['weight', 'max'],
  );
  if (cls === 'exclusive' && !hasDisks) {
    errors.fail(
      path,
      "io acts on the disks under the workload's data; add disks: { paths: [...] } or disks: { kafkaConfig: ... } to this workload, or remove io:",
    );
  }
  const out: IoSpec =
    cls === 'exclusive'
      ? { latency: 'auto', weight: EXCLUSIVE_IO_WEIGHT, max: {} }
      : { latency: 'off', weight: BATCH_IO_WEIGHT, max: {} };
  if (io.latency !== undefined) out.latency = parseLatencyField(io.latency, [...path, 'latency'], errors);
  if (io.weight !== undefined) {
    const expected = 'a whole number from 1 to 10000 (cgroup io.weight), or off';
    if (io.weight === 'off') out.weight = 'off';
    else {
      exact(io.weight, [...path, 'weight'], errors, expected);
      if (!Number.isSafeInteger(io.weight) || (io.weight as number) < 1 || (io.weight as number) > 10000) {
        errors.fail([...path, 'weight'], `expected ${expected}; got ${describe(io.weight)}`);
      }
      out.weight = io.weight as number;
    }
  }
  if (io.max !== undefined) out.max = parseMax(io.max, [...path, 'max'], errors);
  return out;
}

function parseLatencyField(value: unknown, path: FieldPath, errors: FieldErrors): IoSpec['latency'] {
  if (value === 'auto' || value === 'off') return value;
  const usec = typeof value === 'string' ? parseLatency(value) : null;
  if (usec === null || usec < LATENCY_MIN_USEC || usec > LATENCY_MAX_USEC) {
    errors.fail(
      path,
      `expected a latency target from 100us to 10s like 25ms (io.latency), auto (25ms on spinning disks, 2ms on solid-state ones) or off; got ${describe(value)}`,
    );
  }
  return { usec };
}

function parseMax(value: unknown, path: FieldPath, errors: FieldErrors): IoSpec['max'] {
  const m = mapping(
    value,
    path,
    errors,
    'a mapping with rbps, wbps (like 80MB/s), riops and/or wiops (like 300)',
    [...IO_LIMIT_KEYS],
  );
  const out: Partial<Record<IoLimitKey, number>> = {};
  for (const key of IO_LIMIT_KEYS) {
    const v = m[key];
    if (v === undefined) continue;
    if (key === 'rbps' || key === 'wbps') {
      // One reading of a rate across the policy: MB/s is base 1000 here as in memory.low's writeRate.
      const rate = parseRate(v);
      if (typeof rate === 'string') errors.fail([...path, key], rate);
      out[key] = rate as number;
    } else {
      const expected = 'a whole number of I/Os per second, 1 or more (like 300)';
      exact(v, [...path, key], errors, expected);
      if (!Number.isSafeInteger(v) || (v as number) < 1) {
        errors.fail([...path, key], `expected ${expected}; got ${describe(v)}`);
      }
      out[key] = v as number;
    }
  }
  return out;
}
