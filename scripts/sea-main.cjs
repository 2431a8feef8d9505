'use strict';
// Entry point of the single executable (`npm run package`). The whole CLI travels inside the
// executable as the SEA asset main.cjs, with a V8 code cache (main.cache) filled at package time by a
// representative run under this same Node.js, so a start compiles almost nothing. SEA's own
// useCodeCache only covers this small file, and a startup snapshot would freeze process state
// (env, argv, cwd) read at module load, so the bundle goes through vm.Script like dist/cli.js does.
const sea = require('node:sea');
const vm = require('node:vm');
const { dirname } = require('node:path');

const source = sea.getAsset('main.cjs', 'utf8');
let cachedData;
try {
  cachedData = Buffer.from(sea.getAsset('main.cache'));
} catch {}
// The executable's own path: the bundle finds the default policy and the schemas from it
// (/usr/bin/isolate → /usr/share/isolate/).
const file = process.execPath;
const wrapper = '(function (exports, require, module, __filename, __dirname, __isolateImport) {';
const script = new vm.Script(`${wrapper}${source}\n})`, { filename: file, cachedData });
if (process.env.ISOLATE_SEA_DEBUG === '1') {
  process.stderr.write(
    `isolate sea: code cache ${cachedData ? (script.cachedDataRejected ? 'rejected' : 'accepted') : 'absent'}\n`,
  );
}
const mod = { exports: {} };
// Everything is bundled: nothing is left to import() at run time.
const noImport = (specifier) =>
  Promise.reject(new Error(`isolate: ${specifier} is not bundled in this executable`));
script.runInThisContext()(mod.exports, require, mod, file, dirname(file), noImport);
