// Readiness and watchdog for `Type=notify` units. Node cannot send on the unix datagram socket
// systemd listens on, so `systemd-notify` sends for us. It exits before systemd reads the message,
// so it sends with our PID (`--pid`, root may set its credentials) and the unit sets NotifyAccess=all.

export interface Notifier {
  ready(status: string): Promise<void>;
  watchdog(): Promise<void>;
  status(text: string): Promise<void>;
  stopping(): Promise<void>;
  /** How often the loop must call watchdog() (half of WatchdogSec), or null when not asked for. */
  watchdogMs: number | null;
}

export function notifier(env: NodeJS.ProcessEnv): Notifier {
  const socket = env.NOTIFY_SOCKET;
  const usec = Number(env.WATCHDOG_USEC ?? '0');
  const send = async (...args: string[]) => {
    if (!socket) return;
    try {
      const { execa } = await import('execa');
      await execa('systemd-notify', [`--pid=${process.pid}`, ...args], { timeout: 5000, reject: false });
    } catch {}
  };
  return {
    ready: (status) => send('--ready', `--status=${status}`),
    watchdog: () => send('WATCHDOG=1'),
    status: (text) => send(`--status=${text}`),
    stopping: () => send('STOPPING=1'),
    watchdogMs: socket && usec > 0 ? Math.max(500, Math.floor(usec / 2000)) : null,
  };
}
