// Builds dist/: main.cjs (the CLI in one CommonJS bundle), DEP.cjs for each dependency only some
// commands load (scripts/bundle-common.mjs), cli.js (the launcher `bin` points at) and main.cache (V8's
// code cache of main.cjs after a dry-run plan, which the launcher hands to V8).
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { bundle } from './bundle-common.mjs';

// `--test-hooks`: the fault-injection hooks the test suite drives (src/cli/test-hooks.ts); without it
// (npm ci, npm run build) they are compiled out, as in the released executable.
const testHooks = process.argv.includes('--test-hooks');
rmSync('dist', { recursive: true, force: true });
mkdirSync('dist');
await bundle('dist', {
  target: 'node20',
  // Whitespace only (names stay, with a source map beside): it drops the comments esbuild would keep,
  // which may be non-ASCII, so main.cjs is ASCII (esbuild escapes the rest) and V8 holds it one byte a
  // character.
  minifyWhitespace: true,
  sourcemap: 'linked',
  define: { __ISOLATE_TEST_HOOKS__: String(testHooks) },
});
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
