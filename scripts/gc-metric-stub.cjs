'use strict';
// Stands in for prom-client's GC-duration metric (lib/metrics/gc.js) inside isolate's builds: the
// agent registers nodejs_gc_duration_seconds itself, timed by V8's GCProfiler (src/agent/gc-durations.ts),
// because the 'gc' PerformanceObserver this module starts makes Node build an object graph for every
// GC that ends in the old generation (~5.9 KB a GC). collectDefaultMetrics calls it: it does nothing.
module.exports = () => {};
