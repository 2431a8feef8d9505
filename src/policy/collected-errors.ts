// Every error of a policy in one run (load.ts and workload.ts read the policy through it).
import { UserError, UserErrors } from '../model/errors.js';
import { type FieldErrors, type FieldPath, formatPath } from '../model/field.js';
import type { Policy } from '../model/policy.js';

/**
 * One field's failure while the policy is read: kept by CollectedErrors, never seen outside the policy loader.
 * A UserError, so the parsers' `instanceof UserError` guards (cpuList's) pass it on as they always did.
 */
export class FieldError extends UserError {}

/**
 * Every error of a policy in one run: `fail` stops the part being read (a field, a workload), and
 * `attempt` around each independent part keeps that error and reads on. `settle` then throws them
 * all, each its own line with its own location and fix (UserErrors), or returns when there are none.
 */
export class CollectedErrors implements FieldErrors {
  readonly found: string[] = [];
  constructor(private readonly locate: Policy['locate']) {}

  fail(path: FieldPath, message: string, at: 'key' | 'value' = 'value'): never {
    throw new FieldError(`${this.locate(path, at)}: ${formatPath(path)}: ${message}`);
  }

  /** Reads one independent part; on an error there, keeps it and gives `fallback` so the rest is read. */
  attempt<T>(read: () => T, fallback: T): T {
    try {
      return read();
    } catch (err) {
      if (!(err instanceof FieldError)) throw err;
      if (!this.found.includes(err.message)) this.found.push(err.message);
      return fallback;
    }
  }

  /** Throws what was found (one error as before, several as UserErrors); returns when nothing was. */
  settle(): void {
    if (this.found.length === 1) throw new UserError(this.found[0]!);
    if (this.found.length > 1) throw new UserErrors(this.found);
  }
}
