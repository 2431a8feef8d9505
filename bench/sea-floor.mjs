// What the start-up of `isolate plan --dry-run` is made of, against the ≤ 1.2× `node -e 0` target of
// issue 11: single executables built exactly as out/isolate is (scripts/sea-build.mjs: the launcher, a
// minified bundle, its code cache after a warm-up run, aligned), each holding one part of the CLI:
//   launcher         the launcher with an empty bundle (reading the assets, compiling with a code cache)
//   yaml             yaml only, parsing the policy as src/policy/load.ts does
//   commanderAlone   commander only, an empty program, `--version`
//   commander        the CLI's program (src/cli/program.ts: commander, every command and option, and in
//                    the bundle every module the commands import when they run), `--version`
//   programOnly      the same without the modules the commands import when they run
// timed interleaved with `node -e 0` and out/isolate. Each part's cost is its time above `launcher`.
// (Node's SEA with an empty main script and no launcher starts as fast as `node -e 0`: 72.6 against
// 72.5 ms, 30 interleaved runs, 2026-12-04.)
//   npm run build && npm run package && node bench/sea-floor.mjs [runs]
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { DEFERRED_HELPER, deferBuiltins, LAZY, leftOut, RUNTIME } from '../scripts/bundle-common.mjs';
import { seaExecutable } from '../scripts/sea-build.mjs';
import { readThrough } from './page-cache.mjs';
import { printTimes, quantile, timeInterleaved } from './startup-timing.mjs';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const runs = Number(process.argv[2] ?? 40);
const node = join(repo, '.cache/node-runtime', RUNTIME.version, 'node');
const exe = join(repo, 'out/isolate');
const root = join(repo, 'test/fixtures/sysfs/qemu-2s-smt2');
const policy = join(repo, 'policies/default.yaml');
const plan = ['plan', '--dry-run', '--root', root, '--policy', policy];

// The CLI's program, as `isolate --version` runs it.
const PROGRAM = `import { main } from ${JSON.stringify(join(repo, 'src/cli/program.ts'))};
main(['isolate', 'isolate', '--version']);`;
const ENTRIES = {
  launcher: '',
  // The parse options of src/policy/load.ts (parsePolicyUnguarded), written out: importing that module
  // would bring the policy validator's modules into this row. Change them together.
  yaml: `import { readFileSync, writeSync } from 'node:fs';
import { LineCounter, parseDocument } from 'yaml';
const doc = parseDocument(readFileSync(${JSON.stringify(policy)}, 'utf8'), {
  lineCounter: new LineCounter(), prettyErrors: false, uniqueKeys: true, logLevel: 'error',
});
writeSync(1, JSON.stringify(doc.toJS()));`,
  commanderAlone: `import { Command } from 'commander';
import { writeSync } from 'node:fs';
new Command('isolate').version('0.1.0').configureOutput({ writeOut: (s) => writeSync(1, s) }).exitOverride(() => {}).parse(['isolate', 'isolate', '--version']);`,
  commander: PROGRAM,
  programOnly: PROGRAM,
};

// The program without the modules its commands import when they run (left out of its bundle).
const DYNAMIC_LEFT_OUT = ['programOnly'];
const leaveOutDynamic = {
  name: 'leave-out-dynamic-imports',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) =>
      args.kind === 'dynamic-import' ? { path: args.path, external: true } : undefined,
    );
  },
};

const work = mkdtempSync(join(tmpdir(), 'isolate-sea-floor-'));
try {
  const exes = {};
  for (const [name, source] of Object.entries(ENTRIES)) {
    const dir = join(work, name);
    mkdirSync(dir);
    const main = join(dir, 'main.cjs');
    // As scripts/package.mjs bundles the CLI: minified, yaml's ES module build, the built-ins a dry run
    // never calls loaded on first use, wrapped, ASCII.
    await build({
      stdin: { contents: source, resolveDir: repo, loader: 'ts' },
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: `node${RUNTIME.version.split('.')[0]}`,
      minify: true,
      charset: 'ascii',
      alias: leftOut.alias,
      plugins: DYNAMIC_LEFT_OUT.includes(name) ? [leaveOutDynamic] : [],
      external: LAZY,
      define: { 'import.meta.url': '""' },
      banner: { js: DEFERRED_HELPER },
      outfile: main,
      logLevel: 'error',
    });
    writeFileSync(
      main,
      `(function (exports, require, module, __filename, __dirname) {${deferBuiltins(readFileSync(main, 'utf8'), name)}\n})`,
    );
    exes[name] = join(dir, 'isolate');
    seaExecutable({ node, work: dir, main, warmup: [], target: exes[name] });
  }
  const named = {
    node: [`node -e 0 (${RUNTIME.version})`, node, ['-e', '0']],
    launcher: ['launcher, empty bundle', exes.launcher, []],
    yaml: ['yaml: parse the policy', exes.yaml, []],
    commanderAlone: ['commander alone: an empty program, --version', exes.commanderAlone, []],
    commander: ['commander: the CLI program, --version', exes.commander, []],
    programOnly: ["the same, its commands' modules left out", exes.programOnly, []],
    version: ['out/isolate --version', exe, ['--version']],
    plan: ['out/isolate plan --dry-run', exe, plan],
  };
  const rows = Object.values(named);
  for (const [, cmd] of rows) readThrough(cmd);
  const samples = timeInterleaved(rows, runs, { ISOLATE_LOG: 'off' });
  printTimes(rows, samples, runs);
  const med = (key) => quantile(samples[Object.keys(named).indexOf(key)].wall, 0.5);
  // The program as a dry run pays for it: without the other commands' modules, whose code cache is
  // what makes `commander` dearer (a dry run's cache holds its own code, not theirs).
  const parts = med('yaml') - med('launcher') + (med('programOnly') - med('launcher'));
  const without = med('plan') - parts;
  console.log(
    `plan --dry-run without yaml and the CLI program (${parts.toFixed(1)} ms): ${without.toFixed(1)} ms, ` +
      `${(without / med('node')).toFixed(2)}× node -e 0 (target ≤ 1.20×)`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
