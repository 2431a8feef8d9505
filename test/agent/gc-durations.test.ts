// nodejs_gc_duration_seconds from V8's GCProfiler, against this Node's real GCs.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { DRAIN_MS, GC_DURATION_METRIC, gcDurations } from '../../src/agent/gc-durations.js';
import { compactHeap } from '../../src/agent/heap.js';
import { createMetrics } from '../../src/agent/metrics.js';

/** Allocate and drop young objects until V8 has scavenged at least once. */
function churn(): void {
  let keep: unknown[] = [];
  for (let i = 0; i < 400_000; i++) {
    keep.push({ i });
    if (keep.length > 1000) keep = [];
  }
}

describe('GC durations', () => {
  it('records each GC the profiler saw, by kind, in seconds, when drained', () => {
    const seen: { kind: string; seconds: number }[] = [];
    class Histogram {
      observe(labels: { kind: string }, seconds: number) {
        seen.push({ kind: labels.kind, seconds });
      }
    }
    const gc = gcDurations({ Histogram } as never, new Registry());
    churn();
    expect(compactHeap()).toBe(true);
    gc.drain();
    const kinds = new Set(seen.map((s) => s.kind));
    expect(kinds.has('minor')).toBe(true);
    expect(kinds.has('major')).toBe(true);
    // Microseconds in the profiler; seconds in the metric: a GC of this small heap is under a second.
    for (const s of seen) expect(s.seconds).toBeGreaterThan(0);
    for (const s of seen) expect(s.seconds).toBeLessThan(1);
    // Drained: the next drain has only what came after.
    const before = seen.length;
    gc.drain();
    expect(seen.length).toBe(before);
  });

  it('is drained every DRAIN_MS without a scrape, so the records never pile up', () => {
    let observed = 0;
    class Histogram {
      observe() {
        observed++;
      }
    }
    let now = 1_000;
    const gc = gcDurations({ Histogram } as never, new Registry(), () => now);
    expect(compactHeap()).toBe(true);
    now += DRAIN_MS - 1;
    gc.drainIfDue();
    expect(observed).toBe(0);
    now += 1;
    gc.drainIfDue();
    expect(observed).toBeGreaterThan(0);
    const after = observed;
    expect(compactHeap()).toBe(true);
    now += DRAIN_MS - 1;
    gc.drainIfDue();
    expect(observed).toBe(after);
    now += 1;
    gc.drainIfDue();
    expect(observed).toBeGreaterThan(after);
  });

  it("is the agent's metric, once, in the scrape (prom-client's own is replaced)", async () => {
    const m = await createMetrics();
    churn();
    expect(compactHeap()).toBe(true);
    const body = await m.registry.metrics();
    expect(body.match(new RegExp(`^# TYPE ${GC_DURATION_METRIC} histogram$`, 'gm'))).toHaveLength(1);
    const major = /^nodejs_gc_duration_seconds_count\{kind="major"\} (\d+)$/m.exec(body);
    expect(Number(major?.[1])).toBeGreaterThanOrEqual(1);
    expect(body).toMatch(/^nodejs_gc_duration_seconds_bucket\{le="0\.001",kind="minor"\} \d+$/m);
  });
});
