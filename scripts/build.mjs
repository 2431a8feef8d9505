// Builds dist/: main.cjs (the whole CLI in one CommonJS bundle), cli.js (the launcher `bin` points at)
// and main.cache (V8 code cache for main.cjs). Start-up cost is what this optimises: one file, no ESM
// loader, commander and yaml bundled in, heavy dependencies (pino, execa, systeminformation) external
// and imported lazily where used, and compiled code taken from the cache.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';
import { DEFERRED_HELPER, deferBuiltins, leftOut } from './bundle-common.mjs';

// `--test-hooks`: the fault-injection hooks the test suite drives (src/cli/test-hooks.ts); without it
// (npm ci, npm run build) they are compiled out, as in the released executable.
const testHooks = process.argv.includes('--test-hooks');
rmSync('dist', { recursive: true, force: true });
mkdirSync('dist');
await build({
  entryPoints: ['src/cli.ts'],
  outfile: 'dist/main.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // The default, relied on below: non-ASCII characters of code are escaped.
  charset: 'ascii',
  sourcemap: 'linked',
  // prom-client is bundled (evaluated lazily, like every import() here) so that what it loads but
  // isolate never uses (exemplars' @opentelemetry/api, the Pushgateway) can be replaced by stubs.
  external: ['pino', 'execa', 'systeminformation'],
  ...leftOut,
  define: { 'import.meta.url': '__isolateModuleUrl', __ISOLATE_TEST_HOOKS__: String(testHooks) },
  banner: {
    js: [
      'var __isolateModuleUrl = require("node:url").pathToFileURL(__filename).href;',
      // Code compiled by vm.Script cannot call import() itself; the launcher hands in its own.
      'var __isolateDynamicImport = typeof __isolateImport === "function" ? __isolateImport : (s) => import(s);',
      DEFERRED_HELPER,
    ].join('\n'),
  },
  logLevel: 'warning',
});
const bundle = readFileSync('dist/main.cjs', 'utf8');
const lazy = bundle.match(/\bawait import\("[^"]+"\)/g) ?? [];
if (lazy.length === 0) throw new Error('build: expected lazy imports in dist/main.cjs');
// With charset 'ascii' esbuild escapes every non-ASCII character of code, so any left are in the
// comments it keeps. One of them makes V8 hold the whole source (kept for the process's life) as a
// two-byte string: 1.8 MB of heap instead of 0.9. Each becomes '?' (one UTF-16 unit each: columns stay).
writeFileSync(
  'dist/main.cjs',
  deferBuiltins(bundle, 'build')
    .replace(/\bawait import\(("[^"]+")\)/g, 'await __isolateDynamicImport($1)')
    .replace(/[^\x00-\x7f]/g, '?'),
);
if (/[^.\w]import\(/.test(readFileSync('dist/main.cjs', 'utf8').replace(/\(s\) => import\(s\)/, ''))) {
  throw new Error('build: a dynamic import() is left in dist/main.cjs that the code cache loader cannot run');
}
// The package is ESM ("type": "module"); dist/ holds CommonJS.
writeFileSync('dist/package.json', '{ "type": "commonjs" }\n');
copyFileSync('scripts/launcher.cjs', 'dist/cli.js');
chmodSync('dist/cli.js', 0o755);

// Fill the code cache with a representative run: a dry-run plan on a captured two-socket tree.
const fixture = 'test/fixtures/sysfs/qemu-2s-smt2';
const args = existsSync(fixture)
  ? ['plan', '--dry-run', '--root', fixture, '--policy', 'policies/default.yaml']
  : ['--help'];
const run = spawnSync(process.execPath, ['dist/cli.js', ...args], {
  env: { ...process.env, ISOLATE_BUILD_CODE_CACHE: '1', ISOLATE_LOG: 'off' },
  stdio: 'ignore',
});
if (!existsSync('dist/main.cache')) {
  process.stderr.write(
    `build: no code cache was written (exit ${run.status}); isolate still works, only slower to start\n`,
  );
}
