// Constants the bundler writes in (scripts/build.mjs, scripts/package.mjs, vitest.config.ts).

/**
 * True only in builds made for the test suite (`scripts/build.mjs --test-hooks`, vitest): the
 * fault-injection hooks of src/cli/test-hooks.ts. Release builds define it false, and the minifier
 * drops every branch it guards — the hooks are not in the product.
 */
declare const __ISOLATE_TEST_HOOKS__: boolean;
