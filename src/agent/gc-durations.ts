// nodejs_gc_duration_seconds as prom-client's default metric defines it (name, help, `kind` label,
// buckets), timed by V8's GCProfiler instead of a 'gc' PerformanceObserver. For every GC such an
// observer is sent, Node builds a PerformanceEntry with the deprecated accessors of DEP0152 (a Map,
// closures, deprecate() wrappers), and those objects end in the old generation: a script churning
// young objects under the agent's --max-semi-space-size=1 grew its old space by 420 KB in 71
// scavenges with a no-op observer (~5.9 KB a GC), by 5 KB without one, and by 30 KB with this profiler
// (Node 24). In the agent that was ~1 KB/s of garbage only a full GC frees (its allocations sampled
// through the inspector). The profiler keeps its records in native memory until stopped: they are
// taken when the metrics are scraped, and at least every DRAIN_MS.
import { GCProfiler } from 'node:v8';
import type * as Prom from 'prom-client';

export const GC_DURATION_METRIC = 'nodejs_gc_duration_seconds';

/** prom-client's own buckets for this metric (lib/metrics/gc.js). */
const BUCKETS = [0.001, 0.01, 0.1, 1, 2, 5];

/** The profiler's GC types (Node's names for V8's GCType) → prom-client's `kind` values. */
const KINDS: Record<string, string> = {
  Scavenge: 'minor',
  MinorMarkSweep: 'minor',
  MarkSweepCompact: 'major',
  IncrementalMarking: 'incremental',
  ProcessWeakCallbacks: 'weakcb',
};

/** The records are taken at least this often without a scrape (each GC's is ~1.5 KB of JSON). */
export const DRAIN_MS = 60_000;

export interface GcDurations {
  /** Move what the profiler recorded into the histogram now. */
  drain(): void;
  /** `drain` when DRAIN_MS have passed since the last one (called by the agent each round). */
  drainIfDue(): void;
}

export function gcDurations(
  prom: Pick<typeof Prom, 'Histogram'>,
  registry: Prom.Registry,
  // Monotonic: a wall clock stepped back would hold the drains (and let the records pile up).
  now: () => number = () => performance.now(),
): GcDurations {
  let profiler = new GCProfiler();
  profiler.start();
  let drainedAt = now();
  const drain = () => {
    drainedAt = now();
    const result = profiler.stop();
    profiler = new GCProfiler();
    profiler.start();
    for (const s of result?.statistics ?? []) {
      const kind = KINDS[s.gcType];
      // cost: microseconds.
      if (kind) histogram.observe({ kind }, s.cost / 1e6);
    }
  };
  const histogram = new prom.Histogram({
    name: GC_DURATION_METRIC,
    help: 'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
    labelNames: ['kind'],
    buckets: BUCKETS,
    registers: [registry],
    collect: drain,
  });
  return {
    drain,
    drainIfDue: () => {
      if (now() - drainedAt >= DRAIN_MS) drain();
    },
  };
}
