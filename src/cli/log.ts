import type { LogFn } from '../model/log.js';

/**
 * Structured logs for journald: JSON lines on stderr when it is not a terminal (a service, a
 * pipe) or ISOLATE_LOG=json. pino is loaded only when something is actually written.
 */
export async function makeLogger(): Promise<LogFn> {
  const mode = process.env.ISOLATE_LOG;
  if (mode === 'off' || (process.stderr.isTTY && mode !== 'json')) return () => {};
  const { pino } = await import('pino');
  const logger = pino(
    { name: 'isolate', base: { pid: process.pid }, level: process.env.ISOLATE_LOG_LEVEL ?? 'info' },
    pino.destination({ fd: 2, sync: true }),
  );
  return (level, msg, fields) => logger[level](fields ?? {}, msg);
}
