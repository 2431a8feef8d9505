// The lock harness runs its children as plain node processes: bundle the TypeScript worker (and the
// lock module it imports) into one ESM file first.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export async function bundleLockWorker(): Promise<string> {
  const { build } = await import('esbuild');
  const out = join(mkdtempSync(join(tmpdir(), 'isolate-lock-worker-')), 'lock-worker.mjs');
  await build({
    entryPoints: [join(dirname(fileURLToPath(import.meta.url)), 'lock-worker.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: out,
    logLevel: 'error',
  });
  return out;
}
