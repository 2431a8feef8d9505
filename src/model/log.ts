/** Where every layer sends its events; the shell decides whether they become pino JSON lines. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFn = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => void;
export const noLog: LogFn = () => {};
