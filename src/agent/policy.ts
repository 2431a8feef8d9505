// The policy the agent runs with. A changed file (or SIGHUP) is re-read; a new policy that does not
// validate is refused with its file:line:col error and the old one keeps running.
import { statSync } from 'node:fs';
import type { LogFn } from '../model/log.js';
import { type PolicySource, policyOf, readPolicySource } from '../ops/policy-source.js';

export class PolicyHolder {
  current: PolicySource | null = null;
  /** The last refusal, while the file on disk is invalid. */
  error: string | null = null;
  private seen = '';

  constructor(
    readonly path: string,
    private readonly log: LogFn,
  ) {}

  /** Re-read when the file changed (or `force`); true when the policy in use changed. */
  async refresh(force = false): Promise<boolean> {
    // Every round: a synchronous stat, not one through libuv's thread pool (a thread woken, a promise
    // settled: 6 % of the idle agent's JavaScript time in a --cpu-prof of bench/agent-idle.mjs).
    let stamp = 'missing';
    try {
      const s = statSync(this.path, { throwIfNoEntry: false });
      if (s) stamp = `${s.mtimeMs}:${s.size}:${s.ino}`;
    } catch {
      // Unreadable (EACCES, ...): as missing; reading it below says why.
    }
    if (!force && stamp === this.seen) return false;
    this.seen = stamp;
    try {
      const next = readPolicySource(this.path);
      if (this.current && next.sha256 === this.current.sha256) {
        this.error = null;
        return false;
      }
      policyOf(next); // validate before switching
      const first = this.current === null;
      this.current = next;
      this.error = null;
      this.log('info', first ? 'policy loaded' : 'policy reloaded', {
        policy: this.path,
        sha256: next.sha256,
      });
      return true;
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
      this.log(
        'error',
        this.current ? 'new policy refused; the previous one stays in force' : 'no valid policy',
        {
          policy: this.path,
          error: this.error,
        },
      );
      return false;
    }
  }
}
