'use strict';
// Package time only: runs the bundle the way scripts/sea-main.cjs does inside the executable, under the
// executable's Node.js, and writes the V8 code cache of every function a representative run compiled.
const { readFileSync, writeFileSync } = require('node:fs');
const vm = require('node:vm');
const { dirname } = require('node:path');

const [bundle, out, ...args] = process.argv.slice(2);
process.argv = [process.argv[0], process.argv[0], ...args];
const source = readFileSync(bundle, 'utf8');
const file = process.execPath;
const wrapper = '(function (exports, require, module, __filename, __dirname, __isolateImport) {';
const script = new vm.Script(`${wrapper}${source}\n})`, { filename: file });
process.on('exit', () => writeFileSync(out, script.createCachedData()));
const mod = { exports: {} };
script.runInThisContext()(mod.exports, require, mod, file, dirname(file), () =>
  Promise.reject(new Error('no import')),
);
