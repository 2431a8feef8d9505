'use strict';
// Main script of the packaged executable (`npm run package`). It compiles the bundled CLI (the asset
// main.cjs) with V8's code cache (the asset main.cache), which scripts/package.mjs made with this same
// runtime after a dry-run plan: a start neither parses nor compiles the code a plan runs, and loads
// nothing else first. Lazy dependencies (pino, execa, ...) come from their own assets on first use.
//
// main.cjs is stored as it is compiled: already wrapped in its CommonJS function, and ASCII (package.mjs
// checks), so it is read without a copy of the asset (getRawAsset) and decoded as Latin-1, a plain copy
// into a V8 string: about half the launcher's own time beside getAsset's copy and UTF-8 decoding.
//
// Package time only: under the plain runtime (not as the executable), ISOLATE_SEA_BUILD_CACHE=DIR runs
// DIR/main.cjs the same way and writes DIR/main.cache when the process exits.
const sea = require('node:sea');
const vm = require('node:vm');
const { dirname } = require('node:path');

const buildDir = sea.isSea() ? undefined : process.env.ISOLATE_SEA_BUILD_CACHE;
if (!sea.isSea() && !buildDir)
  throw new Error('sea-launcher: set ISOLATE_SEA_BUILD_CACHE=DIR outside the executable');
const file = `${buildDir ?? process.execPath}/main.cjs`;
const source = buildDir
  ? require('node:fs').readFileSync(file, 'latin1')
  : Buffer.from(sea.getRawAsset('main.cjs')).toString('latin1');
// The asset's first byte is where the cache starts in it: there it is 8-byte aligned, and V8 uses it in
// place instead of copying it (package.mjs, alignCodeCache). 8 bytes of padding in all.
const cacheAsset = buildDir ? undefined : sea.getRawAsset('main.cache');
const cachedData =
  cacheAsset && Buffer.from(cacheAsset, new Uint8Array(cacheAsset, 0, 1)[0], cacheAsset.byteLength - 8);
const script = new vm.Script(source, { filename: file, cachedData });
if (buildDir) {
  // After the run: the cache then holds every function the plan compiled, not only the top level.
  process.on('exit', () =>
    require('node:fs').writeFileSync(`${buildDir}/main.cache`, script.createCachedData()),
  );
} else if (process.env.ISOLATE_SEA_DEBUG === '1') {
  process.stderr.write(`isolate sea: code cache ${script.cachedDataRejected ? 'rejected' : 'accepted'}\n`);
}
const mod = { exports: {} };
script.runInThisContext()(mod.exports, require, mod, file, dirname(file));
