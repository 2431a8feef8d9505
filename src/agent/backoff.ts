// A change that keeps failing is retried less and less often: no hot loop, no log flood.

export interface Backoff {
  /** Consecutive failures. */
  failures: number;
  /** Epoch ms before which no retry is made. */
  nextAt: number;
}

export const NO_BACKOFF: Backoff = { failures: 0, nextAt: 0 };

/** After a failure: wait interval × 2^(failures-1), at most `maxMs`. */
export function afterFailure(b: Backoff, now: number, intervalMs: number, maxMs: number): Backoff {
  const failures = b.failures + 1;
  const wait = Math.min(maxMs, intervalMs * 2 ** Math.min(failures - 1, 30));
  return { failures, nextAt: now + wait };
}

export function due(b: Backoff, now: number): boolean {
  return now >= b.nextAt;
}
