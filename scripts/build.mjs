// Bundles the CLI into one ESM file so `isolate` starts fast: one file to read and compile,
// heavy modules (pino, execa, systeminformation) are imported lazily at their point of use.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/cli.ts'],
  outfile: 'dist/cli.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  // Dependencies stay external: they are installed beside us and loaded only when needed.
  packages: 'external',
  banner: { js: '#!/usr/bin/env node' },
  logLevel: 'warning',
});
