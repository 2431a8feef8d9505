'use strict';
// Main script of the packaged executable (`npm run package`). It compiles the bundled CLI (the asset
// main.cjs) with V8's code cache (the asset main.cache), which scripts/sea-build.mjs made with this same
// runtime after a dry-run plan: a start neither parses nor compiles the code a plan runs. The bundle's
// `require` is the executable's (built-ins only), except `./DEP.cjs`: a dependency bundled on its own
// (LAZY in scripts/bundle-common.mjs), run from its asset the first time it is required.
//
// Package time only: under the plain runtime (not as the executable), ISOLATE_SEA_BUILD_CACHE=DIR runs
// DIR/main.cjs the same way and writes DIR/main.cache when the process exits.
const sea = require('node:sea');
const vm = require('node:vm');

const buildDir = sea.isSea() ? undefined : process.env.ISOLATE_SEA_BUILD_CACHE;
if (!sea.isSea() && !buildDir)
  throw new Error('sea-launcher: set ISOLATE_SEA_BUILD_CACHE=DIR outside the executable');
const dir = buildDir ?? process.execPath;

/** The asset `name` compiled as the body of a CommonJS module. */
function compile(name, cachedData) {
  const code = buildDir
    ? require('node:fs').readFileSync(`${buildDir}/${name}`, 'utf8')
    : sea.getAsset(name, 'utf8');
  const source = `(function (exports, require, module, __filename, __dirname) {${code}\n})`;
  return new vm.Script(source, { filename: `${dir}/${name}`, cachedData });
}

function exec(script, name) {
  const mod = { exports: {} };
  script.runInThisContext()(mod.exports, bundleRequire, mod, `${dir}/${name}`, dir);
  return mod.exports;
}

const bundled = new Map();
function bundleRequire(id) {
  if (!id.startsWith('./')) return require(id);
  const name = id.slice(2);
  if (!bundled.has(name)) bundled.set(name, exec(compile(name), name));
  return bundled.get(name);
}

const main = compile('main.cjs', buildDir ? undefined : new Uint8Array(sea.getRawAsset('main.cache')));
if (buildDir) {
  // After the run: the cache then holds every function the plan compiled, not only the top level.
  process.on('exit', () =>
    require('node:fs').writeFileSync(`${buildDir}/main.cache`, main.createCachedData()),
  );
} else if (process.env.ISOLATE_SEA_DEBUG === '1') {
  process.stderr.write(`isolate sea: code cache ${main.cachedDataRejected ? 'rejected' : 'accepted'}\n`);
}
exec(main, 'main.cjs');
