'use strict';
// Stands in for prom-client's Pushgateway (lib/pushgateway.js) inside isolate's builds. isolate serves
// /metrics and never pushes, but prom-client's index requires the real module when it loads, and that
// loads http, https (so tls and most of Node's crypto) and zlib: 5 MB of the agent's resident memory on
// Node 24 (node_modules/prom-client with and without it, an idle process serving /metrics).
module.exports = class Pushgateway {
  constructor() {
    throw new Error('prom-client Pushgateway is not bundled with isolate (it serves /metrics instead)');
  }
};
