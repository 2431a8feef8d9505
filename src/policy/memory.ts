// A workload's memory (`memory:`): min, low (an amount, or the page cache a write rate fills in a
// window), high and max, and the NUMA nodes it takes memory from.
import type { FieldErrors, FieldPath } from '../model/field.js';
import type { MemoryAmount, MemorySpec } from '../model/policy.js';
import { formatBytes } from '../model/units.js';
import { cpuList } from './placement.js';
import { parseRate, parseWindow } from './rate.js';
import { describe, parseMemoryAmount } from './size.js';
import { allowOnly, mapping } from './validate.js';

export function parseMemory(value: unknown, path: FieldPath, errors: FieldErrors): MemorySpec {
  if (value === undefined) return { mems: 'local' };
  const m = mapping(value, path, errors, 'a mapping with min, low, high, max and/or mems', [
    'min',
    'low',
    'high',
    'max',
    'mems',
  ]);
  const spec: MemorySpec = { mems: 'local' };
  for (const key of ['min', 'low', 'high', 'max'] as const) {
    if (m[key] === undefined) continue;
    const amount =
      key === 'low' && m.low !== null && typeof m.low === 'object' && !Array.isArray(m.low)
        ? parseCacheWindow(m.low as Record<string, unknown>, [...path, 'low'], errors)
        : parseMemoryAmount(m[key], key === 'high' || key === 'max');
    if (typeof amount === 'string') errors.fail([...path, key], amount);
    spec[key] = amount;
  }
  const { high, max } = spec;
  if (high && max && 'bytes' in high && 'bytes' in max && max.bytes < high.bytes) {
    errors.fail(
      [...path, 'max'],
      `max (${formatBytes(max.bytes)}) is below high (${formatBytes(high.bytes)}); max must be at least high`,
    );
  }
  if (high && max && 'unlimited' in high && !('unlimited' in max)) {
    errors.fail([...path, 'max'], 'max is below high (high is "max"); max must be at least high');
  }
  if (m.mems !== undefined) {
    if (m.mems === 'local' || m.mems === 'all') spec.mems = m.mems;
    else if (typeof m.mems === 'string' || typeof m.mems === 'number')
      spec.mems = cpuList(m.mems, [...path, 'mems'], errors, 'node');
    else
      errors.fail(
        [...path, 'mems'],
        `expected "local", "all" or a node list like "0-1"; got ${describe(m.mems)}`,
      );
  }
  return spec;
}

/** `low: { writeRate: 170MB/s, window: 10m }`: the page cache that holds `window` of Kafka's writes. */
function parseCacheWindow(m: Record<string, unknown>, path: FieldPath, errors: FieldErrors): MemoryAmount {
  allowOnly(m, path, ['writeRate', 'window'], errors);
  const rate = parseRate(m.writeRate);
  const window = parseWindow(m.window);
  if (m.writeRate === undefined)
    errors.fail([...path, 'writeRate'], 'missing: the rate the workload writes at, e.g. writeRate: 170MB/s');
  else if (typeof rate === 'string') errors.fail([...path, 'writeRate'], rate);
  if (m.window === undefined)
    errors.fail(
      [...path, 'window'],
      'missing: how many minutes of writes the cache should hold, e.g. window: 10m',
    );
  else if (typeof window === 'string') errors.fail([...path, 'window'], window);
  return {
    writeRate: typeof rate === 'number' ? rate : 0,
    windowSeconds: typeof window === 'number' ? window : 0,
    written: { writeRate: String(m.writeRate), window: String(m.window) },
  };
}
