import type { EngineHooks } from '../apply/engine.js';
import type { LogFn } from '../model/log.js';

/** What every operation is given by its caller (the CLI, the agent, a test) instead of reaching for globals. */
export interface OpContext {
  /** Host root: sysfs, /proc, the cgroup2 mount, /etc/isolate, /var/lib/isolate, /run under it. */
  root: string;
  log?: LogFn;
  /** One-line notices for the operator (stderr in the CLI). */
  notice?: (message: string) => void;
  /** Cancels a running apply or rollback between two writes; it then rolls back. */
  signal?: AbortSignal;
  /** Test-only stop points inside the apply engine. */
  hooks?: EngineHooks;
}
