// The CPU one heap compaction of the agent (src/agent/heap.ts compactHeap, bundled from the source
// here: the same gc and the same flavor per V8 version) costs, against its wall time: with V8's
// parallel and concurrent GC helpers (the default) or without them (`--single-threaded-gc`, which the
// packaged executable runs with: scripts/bundle-common.mjs). process.cpuUsage() counts every thread of
// the process, the helpers included.
//   node bench/gc-cpu.mjs                          # V8's default
//   node --single-threaded-gc bench/gc-cpu.mjs     # as out/isolate runs
// Prints the median of 15 compactions of a ~20 MB heap, each after some fresh garbage.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = mkdtempSync(join(tmpdir(), 'isolate-gc-bench-'));
const heapModule = join(out, 'heap.mjs');
await build({
  entryPoints: [join(repo, 'src/agent/heap.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'error',
  outfile: heapModule,
});
const { compactHeap } = await import(pathToFileURL(heapModule).href);
rmSync(out, { recursive: true, force: true });

const live = [];
for (let i = 0; i < 60_000; i++) live.push({ a: i, b: `s${i}`, c: [i, i + 1], d: new Map([[i, String(i)]]) });
const runs = [];
for (let r = 0; r < 15; r++) {
  let junk = [];
  for (let i = 0; i < 20_000; i++) junk.push({ x: `j${i}${r}`, y: [i] });
  // Some of the live objects replaced: old-generation garbage, as the agent's rounds leave.
  for (let i = 0; i < 3_000; i++) live[(i * 7 + r) % live.length] = { a: i, b: `t${i}`, c: [r], d: null };
  junk = null;
  await new Promise((resolve) => setTimeout(resolve, 50));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  if (!compactHeap()) throw new Error('V8 offers no gc here');
  const cpu = process.cpuUsage(cpu0);
  runs.push({ cpuMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - t0 });
}
const median = (k) => runs.map((x) => x[k]).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
const mode = process.execArgv.includes('--single-threaded-gc') ? 'single-threaded GC' : "V8's parallel GC";
console.log(
  `${mode}, Node ${process.version}: heap ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(1)} MiB; one compaction: CPU ${median('cpuMs').toFixed(1)} ms, wall ${median('wallMs').toFixed(1)} ms (medians of ${runs.length})`,
);
