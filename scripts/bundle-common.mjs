// What scripts/build.mjs (dist/) and scripts/package.mjs (the executable) both do to the bundle.
import { join } from 'node:path';

const here = import.meta.dirname;

/**
 * esbuild options for dependency code isolate never runs but that its dependencies load, each replaced
 * by a stub that fails loudly if ever called (the stubs say what each saved): prom-client's
 * @opentelemetry/api (exemplars) and its Pushgateway.
 */
export const leftOut = {
  alias: { '@opentelemetry/api': join(here, 'otel-api-stub.cjs') },
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
