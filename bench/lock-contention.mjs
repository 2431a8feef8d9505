// Host lock under heavy contention: N real processes × M trials, with and without a stale lock left
// by a SIGKILLed holder in every trial; prints sections, overlaps and time. `--naive` runs the lock
// isolate used before issue 8 through the same harness, for comparison.
//   node bench/lock-contention.mjs [N] [M] [--naive]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const naive = args.includes('--naive');
const [n = 16, m = 100] = args.filter((a) => !a.startsWith('--')).map(Number);
const out = mkdtempSync(join(tmpdir(), 'isolate-lock-bench-'));
const common = { bundle: true, platform: 'node', format: 'esm', target: 'node20', logLevel: 'error' };
await build({
  ...common,
  entryPoints: [join(here, '../test/sys/lock-worker.ts')],
  outfile: join(out, 'worker.mjs'),
});
await build({
  ...common,
  entryPoints: [join(here, '../test/sys/lock-harness.ts')],
  outfile: join(out, 'harness.mjs'),
});
const { runContention } = await import(pathToFileURL(join(out, 'harness.mjs')).href);
try {
  for (const stale of [false, true]) {
    const r = await runContention({
      workerScript: join(out, 'worker.mjs'),
      n,
      m,
      stale,
      impl: naive ? 'naive' : 'sys',
    });
    console.log(
      `${r.impl} lock, N=${r.n} processes × M=${r.m} trials, ${stale ? `stale lock of a killed holder in ${r.staleTrials}/${r.m} trials` : 'no stale lock'}: ` +
        `${r.sections} sections, ${r.overlaps} overlaps, ${r.clashes} clashes, ${(r.ms / 1000).toFixed(1)} s`,
    );
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}
