// Types of what tests import from bundle-common.mjs (build scripts are plain JavaScript).
/** V8 flags of the packaged executable. */
export const EXEC_ARGV: readonly string[];
