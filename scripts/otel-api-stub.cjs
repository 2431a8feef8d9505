'use strict';
// Stands in for @opentelemetry/api inside isolate's builds. prom-client requires it at load time,
// but uses it only for exemplars (trace ids on samples), which isolate never enables; loading the
// real package cost the agent ~7 MB of resident memory on Node 20 and ~11 MB on Node 24
// (bench/agent-idle.mjs). Should a future prom-client call it without exemplars, this fails loudly
// rather than returning made-up trace data.
const refuse = (what) => {
  throw new Error(`@opentelemetry/api.${what} is not bundled with isolate (exemplars are disabled)`);
};
module.exports = new Proxy(
  {},
  { get: (_target, key) => (key === '__esModule' ? false : refuse(String(key))) },
);
