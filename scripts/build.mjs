// Bundles the CLI into one ESM file so `isolate` starts fast: one file to read and compile,
// heavy modules (pino, execa, systeminformation) are imported lazily at their point of use.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

rmSync('dist', { recursive: true, force: true });
await build({
  entryPoints: ['src/cli.ts'],
  outfile: 'dist/cli.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  // commander and yaml run on every invocation: bundling them saves resolving and reading dozens of
  // files at start-up. The heavy, rarely needed ones stay external and are imported lazily.
  external: ['pino', 'execa', 'systeminformation'],
  // commander is CommonJS: give the ESM bundle a `require` for the node: built-ins it asks for.
  banner: {
    js: "#!/usr/bin/env node\nimport { createRequire as __isolateRequire } from 'node:module';\nconst require = __isolateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
