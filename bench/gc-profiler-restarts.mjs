// Why the agent does not time its GCs with V8's GCProfiler (src/agent/metrics.ts): a profiler that has
// been stopped goes on recording every GC until a full GC frees it, so a profiler stopped and replaced
// at each scrape piles up recordings. This times the same allocations (CPU of one churn) every 50
// stop-and-restart cycles, and prints the resident memory at the end, against no profiler at all.
// Run: node --max-semi-space-size=1 bench/gc-profiler-restarts.mjs [cycles]
// 2026-12-03, this 2-core VM, at cycle 299: no profiler 1.1 ms, 62 MB; restarts 119-182 ms, 1.7-1.9 GB
// (Node 24.22); Node 20.20: 1.1 ms against 107 ms, 1.4 GB.
import { GCProfiler } from 'node:v8';

const cycles = Number(process.argv[2] ?? 300);
/** Young garbage, enough for a few scavenges under a 1 MB semi-space. */
const churn = (n) => {
  let keep = [];
  for (let i = 0; i < n; i++) {
    keep.push({ i });
    if (keep.length > 1000) keep = [];
  }
};
for (const mode of ['none', 'restarts']) {
  let profiler = new GCProfiler();
  profiler.start();
  const times = [];
  for (let k = 0; k < cycles; k++) {
    const start = process.cpuUsage();
    churn(1e5);
    const used = process.cpuUsage(start);
    if (k % 50 === 0 || k === cycles - 1)
      times.push(`${k}: ${((used.user + used.system) / 1000).toFixed(1)} ms`);
    if (mode === 'none') continue;
    profiler.stop();
    profiler = new GCProfiler();
    profiler.start();
  }
  profiler.stop();
  console.log(`${mode}: ${times.join(', ')}; resident ${(process.memoryUsage.rss() / 1e6).toFixed(0)} MB`);
}
