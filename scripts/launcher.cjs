#!/usr/bin/env node
'use strict';
// `isolate` entry point. Loads the bundled CLI (main.cjs) through V8's code cache (main.cache, made by
// `npm run build` with this same Node.js), so a run skips parsing and compiling ~600 KB of JavaScript:
// `isolate plan --dry-run` must cost little more than starting Node itself. A cache from another Node.js
// version is rejected by V8 and the code is simply compiled as usual. Nothing is written at run time.
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
const source = readFileSync(file, 'utf8');
// The bundle's lazy import()s of pino, execa and systeminformation go through __isolateImport: code
// from vm.Script has no module loader of its own (and the vm's dynamic-import hook is experimental).
const wrapper = '(function (exports, require, module, __filename, __dirname, __isolateImport) {';
const script = new vm.Script(`${wrapper}${source}\n})`, { filename: file, cachedData });
if (process.env.ISOLATE_BUILD_CODE_CACHE === '1') {
  // Build time only: after a representative run, every function it compiled goes into the cache.
  process.on('exit', () => writeFileSync(cacheFile, script.createCachedData()));
}
const mod = { exports: {} };
const importer = (specifier) => import(specifier);
script.runInThisContext()(mod.exports, createRequire(file), mod, file, __dirname, importer);
