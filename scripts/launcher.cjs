#!/usr/bin/env node
'use strict';
// `isolate` entry point. Runs the bundled CLI (main.cjs) through V8's code cache (main.cache, made by
// `npm run build` with this same Node.js after a dry-run plan), so a run neither parses nor compiles
// the code a plan runs. A cache from another Node.js version is rejected by V8 and the code is simply
// compiled as usual. Nothing is written at run time.
const { readFileSync, writeFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const { join } = require('node:path');
const vm = require('node:vm');

const file = join(__dirname, 'main.cjs');
const cacheFile = join(__dirname, 'main.cache');
let cachedData;
try {
  cachedData = readFileSync(cacheFile);
} catch {}
const wrapper = '(function (exports, require, module, __filename, __dirname) {';
const script = new vm.Script(`${wrapper}${readFileSync(file, 'utf8')}\n})`, { filename: file, cachedData });
if (process.env.ISOLATE_BUILD_CODE_CACHE === '1') {
  // Build time only: after the run, every function it compiled goes into the cache.
  process.on('exit', () => writeFileSync(cacheFile, script.createCachedData()));
}
const mod = { exports: {} };
script.runInThisContext()(mod.exports, createRequire(file), mod, file, __dirname);
