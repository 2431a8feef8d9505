import type { LogFn } from '../model/log.js';

/**
 * Structured logs for journald: JSON lines on stderr when it is not a terminal (a service, a
 * pipe) or ISOLATE_LOG=json. pino is loaded only when something is actually written.
 */
export async function makeLogger(fd: 1 | 2 = 2): Promise<LogFn> {
  const mode = process.env.ISOLATE_LOG;
  const tty = fd === 1 ? process.stdout.isTTY : process.stderr.isTTY;
  if (mode === 'off' || (tty && mode !== 'json')) return () => {};
  const { pino } = await import('pino');
  const logger = pino(
    { name: 'isolate', base: { pid: process.pid }, level: process.env.ISOLATE_LOG_LEVEL ?? 'info' },
    pino.destination({ fd, sync: true }),
  );
  return (level, msg, fields) => logger[level](fields ?? {}, msg);
}
