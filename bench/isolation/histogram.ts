/**
 * The probe's latency histogram, as it prints it: log-linear buckets `[lowNs, highNs, count]` plus the
 * exact maximum. Percentiles are reported as the bucket's highest value, as HdrHistogram does, so a
 * reported p99 is never below the true one.
 */
export type Bucket = [lowNs: number, highNs: number, count: number];

export interface Histogram {
  buckets: Bucket[];
  maxNs: number;
}

export interface Percentiles {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

export const QUANTILES = { p50: 0.5, p90: 0.9, p99: 0.99, p999: 0.999 } as const;

export function totalCount(h: Histogram): number {
  return h.buckets.reduce((n, b) => n + b[2], 0);
}

/** Value at quantile q (0..1) in ns; 0 for an empty histogram. The max is exact, not a bucket bound. */
export function valueAt(h: Histogram, q: number): number {
  const total = totalCount(h);
  if (total === 0) return 0;
  if (q >= 1) return h.maxNs;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const [, high, count] of sorted(h)) {
    seen += count;
    if (seen >= rank) return Math.min(high, h.maxNs);
  }
  return h.maxNs;
}

export function percentiles(h: Histogram): Percentiles {
  return {
    count: totalCount(h),
    p50: valueAt(h, QUANTILES.p50),
    p90: valueAt(h, QUANTILES.p90),
    p99: valueAt(h, QUANTILES.p99),
    p999: valueAt(h, QUANTILES.p999),
    max: h.maxNs,
  };
}

function sorted(h: Histogram): Bucket[] {
  return [...h.buckets].sort((a, b) => a[0] - b[0]);
}

/** Checks the shape of a probe's buckets, so a garbled console line fails loudly, not as zeros. */
export function parseHistogram(buckets: unknown, maxNs: unknown): Histogram {
  if (!Array.isArray(buckets)) throw new Error('probe output: buckets is not an array');
  if (typeof maxNs !== 'number' || !Number.isFinite(maxNs) || maxNs < 0)
    throw new Error('probe output: maxNs is not a number');
  const out: Bucket[] = [];
  for (const b of buckets) {
    if (
      !Array.isArray(b) ||
      b.length !== 3 ||
      !b.every((x) => typeof x === 'number' && Number.isFinite(x) && x >= 0) ||
      b[0] > b[1]
    )
      throw new Error(`probe output: bad bucket ${JSON.stringify(b)}`);
    out.push([b[0], b[1], b[2]]);
  }
  return { buckets: out, maxNs };
}

/** The percentile spectrum HdrHistogram plots: (quantile, value) points from 0 to the max. */
export function spectrum(h: Histogram): Array<{ q: number; ns: number }> {
  const total = totalCount(h);
  if (total === 0) return [];
  const pts: Array<{ q: number; ns: number }> = [];
  let seen = 0;
  for (const [, high, count] of sorted(h)) {
    seen += count;
    pts.push({ q: seen / total, ns: Math.min(high, h.maxNs) });
  }
  return pts;
}
