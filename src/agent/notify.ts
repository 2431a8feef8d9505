// Readiness and watchdog for `Type=notify` units. Node cannot send on the unix datagram socket
// systemd listens on, so `systemd-notify` sends for us. It exits before systemd reads the message,
// so it sends with our PID (`--pid`, root may set its credentials) and the unit sets NotifyAccess=all.
import type { LogFn } from '../model/log.js';

export interface Notifier {
  ready(status: string): Promise<void>;
  watchdog(): Promise<void>;
  status(text: string): Promise<void>;
  stopping(): Promise<void>;
  /** How often the loop must call watchdog() (half of WatchdogSec), or null when not asked for. */
  watchdogMs: number | null;
}

/**
 * A message that does not reach systemd is logged, never dropped: a lost watchdog ping makes systemd
 * stop the agent after WatchdogSec, and the journal must say why.
 */
export function notifier(env: NodeJS.ProcessEnv, log?: LogFn): Notifier {
  const socket = env.NOTIFY_SOCKET;
  const usec = Number(env.WATCHDOG_USEC ?? '0');
  const send = async (...args: string[]) => {
    if (!socket) return;
    let error: string | null = null;
    try {
      const { execa } = await import('execa');
      const r = await execa('systemd-notify', [`--pid=${process.pid}`, ...args], {
        timeout: 5000,
        reject: false,
      });
      if (r.failed) error = r.shortMessage ?? `exit status ${r.exitCode}`;
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
    if (error === null || !log) return;
    if (args[0] === 'WATCHDOG=1') {
      log('error', 'watchdog ping failed', {
        message: args.join(' '),
        error,
        consequence: 'systemd stops the agent after WatchdogSec without a ping',
      });
    } else {
      log('warn', 'systemd-notify failed', { message: args.join(' '), error });
    }
  };
  return {
    ready: (status) => send('--ready', `--status=${status}`),
    watchdog: () => send('WATCHDOG=1'),
    status: (text) => send(`--status=${text}`),
    stopping: () => send('STOPPING=1'),
    watchdogMs: socket && usec > 0 ? Math.max(500, Math.floor(usec / 2000)) : null,
  };
}
