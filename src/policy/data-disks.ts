// A workload's data directories (`disks:`): absolute paths, or the broker's server.properties that
// names them, each path normalised and named once.
import type { FieldErrors, FieldPath } from '../model/field.js';
import type { DiskSource } from '../model/policy.js';
import { describe } from './size.js';
import { mapping } from './validate.js';

/** Most data directories one workload may name: a broker has one per disk, a few dozen at most. */
export const MAX_DISK_PATHS = 256;
/** PATH_MAX: a longer path cannot be opened. */
const MAX_PATH_LENGTH = 4095;

export function parseDisks(value: unknown, path: FieldPath, errors: FieldErrors): DiskSource {
  const d = mapping(
    value,
    path,
    errors,
    'a mapping with paths: [DIR, ...] or kafkaConfig: /etc/kafka/server.properties',
    ['paths', 'kafkaConfig'],
  );
  if ((d.paths === undefined) === (d.kafkaConfig === undefined)) {
    errors.fail(
      path,
      `set exactly one of paths (the data directories, e.g. [/data1/kafka-logs]) or kafkaConfig (the broker's server.properties); got ${d.paths === undefined ? 'neither' : 'both'}`,
    );
  }
  if (d.kafkaConfig !== undefined) {
    return { kind: 'kafkaConfig', file: absolutePath(d.kafkaConfig, [...path, 'kafkaConfig'], errors) };
  }
  if (!Array.isArray(d.paths) || d.paths.length === 0) {
    errors.fail(
      [...path, 'paths'],
      `expected a non-empty list of absolute directories (e.g. [/data1/kafka-logs, /data2/kafka-logs]); got ${describe(d.paths)}`,
    );
  }
  if (d.paths.length > MAX_DISK_PATHS) {
    errors.fail(
      [...path, 'paths'],
      `${d.paths.length} paths; at most ${MAX_DISK_PATHS} (one per data directory)`,
    );
  }
  const seen = new Map<string, number>();
  return {
    kind: 'paths',
    paths: d.paths.map((p, i) => {
      const abs = absolutePath(p, [...path, 'paths', i], errors);
      const prev = seen.get(abs);
      if (prev !== undefined) {
        errors.fail([...path, 'paths', i], `${abs} is also paths[${prev}]; name each directory once`);
      }
      seen.set(abs, i);
      return abs;
    }),
  };
}

/** An absolute path, normalised (no `.`, `..`, doubled or trailing `/`), or a one-line error. */
function absolutePath(value: unknown, path: FieldPath, errors: FieldErrors): string {
  const expected = 'an absolute path (e.g. /data1/kafka-logs)';
  if (typeof value !== 'string' || !value.startsWith('/')) {
    errors.fail(path, `expected ${expected}; got ${describe(value)}`);
  }
  if (value.length > MAX_PATH_LENGTH || /[\u0000-\u001f\u007f]/.test(value)) {
    errors.fail(
      path,
      `expected ${expected} without control characters, at most ${MAX_PATH_LENGTH} characters`,
    );
  }
  const parts = value.split('/').filter((s) => s !== '' && s !== '.');
  if (parts.includes('..')) {
    errors.fail(path, `expected ${expected} without ".." parts; got ${describe(value)}`);
  }
  return `/${parts.join('/')}`;
}
