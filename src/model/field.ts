/** Where in a policy document a value sits: `['workloads', 0, 'cores']`. */
export type FieldPath = readonly (string | number)[];

/**
 * Reports a policy error at a field. Implementations prefix the file name and line:column of the
 * field and throw a UserError, so callers simply `return errors.fail(...)`.
 */
export interface FieldErrors {
  /** `at: 'key'` points at the field's name instead of its value (for unknown fields). */
  fail(path: FieldPath, message: string, at?: 'key' | 'value'): never;
}

/** `workloads[0].memory.low` — how a field path is shown to users. */
export function formatPath(path: FieldPath): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out === '' ? p : `.${p}`;
  return out || '(document)';
}
