import { UserError } from '../model/errors.js';
import type { LogFn } from '../model/log.js';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];
const MODES = ['json', 'off'];

/**
 * Structured logs for journald: JSON lines on stderr when it is not a terminal (a service, a
 * pipe) or ISOLATE_LOG=json. pino is loaded only when something is actually written.
 */
export async function makeLogger(fd: 1 | 2 = 2): Promise<LogFn> {
  const mode = process.env.ISOLATE_LOG;
  const level = process.env.ISOLATE_LOG_LEVEL ?? 'info';
  // Checked before anything runs, whether or not logs are written: a typo must not wait for the
  // day stderr is not a terminal to surface.
  if (mode !== undefined && mode !== '' && !MODES.includes(mode)) {
    throw new UserError(
      `ISOLATE_LOG=${JSON.stringify(mode.slice(0, 40))}: expected one of ${MODES.join(', ')}`,
    );
  }
  if (!LEVELS.includes(level)) {
    throw new UserError(
      `ISOLATE_LOG_LEVEL=${JSON.stringify(level.slice(0, 40))}: expected one of ${LEVELS.join(', ')}`,
    );
  }
  const tty = fd === 1 ? process.stdout.isTTY : process.stderr.isTTY;
  if (mode === 'off' || (tty && mode !== 'json')) return () => {};
  const { pino } = await import('pino');
  const logger = pino(
    { name: 'isolate', base: { pid: process.pid }, level },
    pino.destination({ fd, sync: true }),
  );
  return (level, msg, fields) => logger[level](fields ?? {}, msg);
}
