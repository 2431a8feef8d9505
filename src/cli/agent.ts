// `isolate agent`: flags → the reconcile loop (src/agent) → exit code.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import type { AgentMetrics } from '../agent/metrics.js';
import { UserError } from '../model/errors.js';
import { makeLogger } from './log.js';
import { hostRoot } from './options.js';

interface AgentFlags {
  policy?: string;
  interval: string;
  raidInterval: string;
  checkInterval: string;
  metricsAddress: string;
  metrics: boolean;
  metricsTextfile?: string;
  once?: boolean;
}

/** `5s`, `1500ms`, `10m`, `1h`, or plain seconds. */
export function parseDuration(flag: string, text: string, minMs: number): number {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/.exec(text.trim());
  const ms = m
    ? Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms']
    : Number.NaN;
  if (!Number.isFinite(ms) || ms < minMs) {
    throw new UserError(
      `${flag} ${text}: expected a duration of at least ${minMs / 1000}s, like 1s, 5s, 10m`,
    );
  }
  return ms;
}

/** `127.0.0.1:9464`, `[::1]:9464`, `:9464` (loopback). 0.0.0.0 only when written out. */
export function parseAddress(text: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : Number.NaN;
  if (!m || port < 1 || port > 65535) {
    throw new UserError(`--metrics-address ${text}: expected HOST:PORT, e.g. 127.0.0.1:9464 or [::1]:9464`);
  }
  return { host: m[1] ?? (m[2] || '127.0.0.1'), port };
}

export function registerAgent(program: Command): void {
  program
    .command('agent')
    .description('keep the host converged: every interval observe → plan → apply what differs → verify')
    .option('--root <dir>', 'host root')
    .option(
      '--policy <file>',
      'policy file to follow (default <root>/etc/isolate/policy.yaml); re-read when it changes',
    )
    .option('--interval <duration>', 'reconcile interval (at least 1s)', '5s')
    .option('--raid-interval <duration>', 'RAID read/convergence interval', '10m')
    // 10 min, like RAID: one audit reads every thread's status (~0.7 s of CPU with 20,000 threads,
    // bench/agent-idle.mjs), so every 60 s it cost 1.1 % of a core — more than the reconcile loop's
    // 0.4 %. The loop corrects drift every interval regardless; the audit feeds only the
    // isolate_violations metric (and isolate-check.timer audits every 5 min on its own).
    .option('--check-interval <duration>', 'full thread audit interval (violations metric)', '10m')
    .option('--metrics-address <host:port>', 'Prometheus metrics listen address', '127.0.0.1:9464')
    .option('--no-metrics', 'do not serve metrics')
    .option(
      '--metrics-textfile <file>',
      "also write isolate_* metrics to FILE (*.prom, mode 0644, atomic rename) for node_exporter's textfile collector",
    )
    .option(
      '--once',
      "one reconcile, then the host check; exit with check's codes (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN)",
    )
    .action(async (f: AgentFlags, cmd: Command) => {
      const root = hostRoot(cmd);
      const policyPath = f.policy ?? join(root, 'etc/isolate/policy.yaml');
      if (!existsSync(policyPath)) {
        throw new UserError(
          `${policyPath}: no policy; the agent follows a policy the operator chose: write one there or pass --policy FILE`,
        );
      }
      const intervalMs = parseDuration('--interval', f.interval, 1000);
      const raidIntervalMs = parseDuration('--raid-interval', f.raidInterval, 1000);
      const checkIntervalMs = parseDuration('--check-interval', f.checkInterval, 1000);
      const address = f.metrics && !f.once ? parseAddress(f.metricsAddress) : null;
      const textfile = f.metricsTextfile;
      const tf = textfile ? await import('../agent/textfile.js') : undefined;
      if (textfile) tf!.checkTextfile(textfile);

      const log = await makeLogger(1);
      const { runAgent } = await import('../agent/agent.js');
      const { notifier } = await import('../agent/notify.js');
      const stop = new AbortController();
      const onStop = (sig: NodeJS.Signals) => {
        log('info', 'stopping: the round in progress finishes first', { signal: sig });
        stop.abort(sig);
      };
      process.on('SIGTERM', onStop);
      process.on('SIGINT', onStop);
      let metrics: AgentMetrics | undefined;
      let server: import('node:http').Server | undefined;
      if (address || f.metricsTextfile) {
        const m = await import('../agent/metrics.js');
        metrics = await m.createMetrics();
        if (address) {
          try {
            server = await m.serveMetrics(metrics, address.host, address.port);
          } catch (err) {
            throw new UserError(
              `--metrics-address ${f.metricsAddress}: cannot listen (${(err as NodeJS.ErrnoException).code ?? err}); choose another port or --no-metrics`,
            );
          }
          log('info', 'metrics', { address: `${address.host}:${address.port}`, path: '/metrics' });
        }
      }
      try {
        const code = await runAgent({
          root,
          policyPath,
          intervalMs,
          raidIntervalMs,
          checkIntervalMs,
          maxBackoffMs: Math.max(intervalMs, 300_000),
          once: !!f.once,
          log,
          stop: stop.signal,
          onReload: (cb) => process.on('SIGHUP', cb),
          notify: notifier(process.env, log),
          metrics,
          ...(textfile && metrics ? { afterRound: tf!.textfileWriter(textfile, metrics, log) } : {}),
        });
        process.exitCode = code;
      } finally {
        process.off('SIGTERM', onStop);
        process.off('SIGINT', onStop);
        server?.close();
        server?.closeAllConnections();
      }
    });
}
