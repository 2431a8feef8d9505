// The small checks every policy section is built from; each reports at the field, via FieldErrors.
import type { FieldErrors, FieldPath } from '../model/field.js';
import { describe, MAX_EXACT, quote, TOO_LARGE } from './size.js';

export type Obj = Record<string, unknown>;

/**
 * Refuses a number too large to be exact: a count or size written that large is not the one isolate
 * would use. `expected` is the field's own wording ("a whole number of cores, 0 or more"): the fix.
 */
export function exact(value: unknown, path: FieldPath, errors: FieldErrors, expected: string): void {
  if (typeof value === 'number' && value > MAX_EXACT) errors.fail(path, `${TOO_LARGE}; expected ${expected}`);
}

export function object(value: unknown, path: FieldPath, errors: FieldErrors, expected: string): Obj {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    errors.fail(path, `expected ${expected}; got ${describe(value)}`);
  }
  return value as Obj;
}

/** A mapping with only the `allowed` keys (object, then allowOnly): how most sections start. */
export function mapping(
  value: unknown,
  path: FieldPath,
  errors: FieldErrors,
  expected: string,
  allowed: string[],
): Obj {
  const obj = object(value, path, errors, expected);
  allowOnly(obj, path, allowed, errors);
  return obj;
}

export function boolean(value: unknown, path: FieldPath, errors: FieldErrors): boolean {
  if (typeof value !== 'boolean') errors.fail(path, `expected true or false; got ${describe(value)}`);
  return value;
}

export function allowOnly(obj: Obj, path: FieldPath, allowed: string[], errors: FieldErrors): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) {
      const near = allowed.find((a) => a.toLowerCase() === key.toLowerCase());
      errors.fail(
        [...path, key],
        `unknown field ${quote(key)}${near ? ` (did you mean "${near}"?)` : ''}; allowed: ${allowed.join(', ')}`,
        'key',
      );
    }
  }
}

export function oneOf<T extends string>(
  value: unknown,
  allowed: readonly T[],
  path: FieldPath,
  errors: FieldErrors,
): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    errors.fail(path, `expected one of ${allowed.join(', ')}; got ${describe(value)}`);
  }
  return value as T;
}
