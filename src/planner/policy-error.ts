// A refusal the planner makes about a policy field: located like the loader's errors (file:line:col).
import { UserError } from '../model/errors.js';
import { type FieldPath, formatPath } from '../model/field.js';
import type { Policy } from '../model/policy.js';

export function policyError(policy: Policy, path: FieldPath, message: string): UserError {
  return new UserError(`${policy.locate(path)}: ${formatPath(path)}: ${message}`);
}
