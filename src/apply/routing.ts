// A change's backend, found among the executors (refused when this host has none), and the fields
// every log line about a change carries.
import { describeChange } from '../model/describe.js';
import { UserError } from '../model/errors.js';
import type { Change } from '../model/plan.js';
import type { ChangeExecutor, Executors } from './executor.js';
import { EXIT } from './outcome.js';

export function executorOf(execs: Executors, c: Change): ChangeExecutor {
  const e = execs[c.backend];
  if (!e) {
    throw new UserError(
      `${describeChange(c)}: no ${c.backend} backend is available here; this change cannot be applied on this host`,
      EXIT.refused,
    );
  }
  return e;
}

/** The fields every log line about a change carries, so journald can filter on them. */
export function changeFields(c: Change): Record<string, unknown> {
  return {
    backend: c.backend,
    target: c.target,
    setting: c.setting,
    to: c.to,
    workload: c.workload,
    reason: c.note,
  };
}
