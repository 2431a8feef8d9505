// A workload of a HostPolicy, field by field (load.ts reads the document and its top level): each
// field's value checked against what isolate can do with it, every error naming its field and the fix.
// The fields' own parsers: placement.ts (cores, near, irqs), match.ts, memory.ts, data-disks.ts, io.ts.
import type { FieldErrors, FieldPath } from '../model/field.js';
import type { JvmSpec, Match, WorkloadSpec } from '../model/policy.js';
import type { CollectedErrors } from './collected-errors.js';
import { parseDisks } from './data-disks.js';
import { parseIo } from './io.js';
import { parseMatch } from './match.js';
import { parseMemory } from './memory.js';
import { parseCores, parseIrqs, parseNear } from './placement.js';
import { describe } from './size.js';
import { allowOnly, boolean, exact, mapping, object } from './validate.js';

export function parseWorkload(value: unknown, path: FieldPath, errors: CollectedErrors): WorkloadSpec {
  const w = object(value, path, errors, 'a workload mapping with name, class and match');
  checkShape(w, path, errors);
  const cls = w.class;

  let cores: WorkloadSpec['cores'];
  if (cls === 'exclusive') {
    cores = errors.attempt(() => {
      if (w.cores === undefined)
        errors.fail([...path, 'cores'], 'exclusive workloads need cores: N or cores: "50%"');
      return parseCores(w.cores, [...path, 'cores'], errors);
    }, undefined);
  }
  let numa: WorkloadSpec['numa'] = 'single';
  if (w.numa !== undefined) {
    errors.attempt(() => {
      if (w.numa !== 'single' && w.numa !== 'spread') {
        errors.fail([...path, 'numa'], `expected "single" or "spread"; got ${describe(w.numa)}`);
      }
      numa = w.numa;
    }, undefined);
  }

  const match = errors.attempt(() => parseMatch(w.match, [...path, 'match'], errors), undefined);
  const spec: WorkloadSpec = {
    name: w.name as string,
    class: cls as WorkloadSpec['class'],
    numa,
    near: errors.attempt(() => parseNear(w.near, [...path, 'near'], errors), []),
    // A stand-in only while another field's error is pending: settle() throws before it is used.
    match: match ?? { kind: 'cgroup', path: '/' },
    memory: errors.attempt(() => parseMemory(w.memory, [...path, 'memory'], errors), { mems: 'local' }),
    path,
  };
  if (cores) spec.cores = cores;
  readOptionalFields(w, spec, match, path, errors);
  return spec;
}

/**
 * The fields every workload must get right before the rest means anything: only known keys, its
 * name, its class, and the fields its class does not take.
 */
function checkShape(w: Record<string, unknown>, path: FieldPath, errors: CollectedErrors): void {
  // Each field is read on whatever the others hold (errors.attempt): one run names every mistake.
  const check = (read: () => void) => errors.attempt(read, undefined);
  check(() =>
    allowOnly(
      w,
      path,
      ['name', 'class', 'cores', 'numa', 'near', 'irqs', 'disks', 'io', 'match', 'memory', 'cpu', 'jvm'],
      errors,
    ),
  );
  check(() => {
    if (typeof w.name !== 'string' || !/^[a-z0-9]([a-z0-9_-]{0,62}[a-z0-9])?$/.test(w.name)) {
      errors.fail(
        [...path, 'name'],
        `expected a name of lowercase letters, digits, "-" or "_" (at most 64, e.g. kafka); got ${describe(w.name)}`,
      );
    }
  });
  check(() => {
    if (w.class !== 'exclusive' && w.class !== 'batch') {
      errors.fail([...path, 'class'], `expected "exclusive" or "batch"; got ${describe(w.class)}`);
    }
  });
  const cls = w.class;
  for (const key of ['cores', 'numa', 'near', 'irqs']) {
    check(() => {
      if (cls === 'batch' && w[key] !== undefined) {
        errors.fail(
          [...path, key],
          `only exclusive workloads take ${key}; batch workloads get every CPU the others leave`,
        );
      }
    });
  }
  check(() => {
    if (cls === 'batch' && w.disks !== undefined) {
      errors.fail(
        [...path, 'disks'],
        "only exclusive workloads take disks; batch workloads are held back on the exclusive workloads' disks — move disks to the exclusive workload (e.g. kafka)",
      );
    }
  });
  check(() => {
    if (cls === 'exclusive' && w.cpu !== undefined) {
      errors.fail(
        [...path, 'cpu'],
        'cpu (weight/idle) is for batch workloads; exclusive workloads own their cores',
      );
    }
  });
}

/** cpu, disks, jvm, io and irqs, each set on `spec` only when read. */
function readOptionalFields(
  w: Record<string, unknown>,
  spec: WorkloadSpec,
  match: Match | undefined,
  path: FieldPath,
  errors: CollectedErrors,
): void {
  const cls = w.class;
  if (w.cpu !== undefined) {
    const cpu = errors.attempt(() => parseCpu(w.cpu, [...path, 'cpu'], errors), undefined);
    if (cpu) spec.cpu = cpu;
  }
  let disksRead = true;
  if (w.disks !== undefined) {
    const disks = errors.attempt(() => parseDisks(w.disks, [...path, 'disks'], errors), undefined);
    if (disks) spec.disks = disks;
    else disksRead = false;
  }
  // The JVM options are judged against the match, the io settings against the disks: not read
  // against a stand-in after those failed (their own error would mislead).
  if (w.jvm !== undefined && match) {
    const jvm = errors.attempt(() => parseJvm(w.jvm, match, [...path, 'jvm'], errors), undefined);
    if (jvm) spec.jvm = jvm;
  }
  if (disksRead) {
    const io = errors.attempt(
      () => parseIo(w.io, cls as WorkloadSpec['class'], spec.disks !== undefined, [...path, 'io'], errors),
      undefined,
    );
    if (io) spec.io = io;
  }
  if (cls === 'exclusive') {
    spec.irqs = errors.attempt(
      () => (w.irqs === undefined ? { on: 'housekeeping' } : parseIrqs(w.irqs, [...path, 'irqs'], errors)),
      { on: 'housekeeping' },
    );
  }
}

function parseCpu(value: unknown, path: FieldPath, errors: FieldErrors): NonNullable<WorkloadSpec['cpu']> {
  const c = mapping(value, path, errors, 'a mapping with weight and/or idle', ['weight', 'idle']);
  const out: NonNullable<WorkloadSpec['cpu']> = {};
  if (c.weight !== undefined) {
    const expected = 'a whole number from 1 to 10000 (cgroup cpu.weight)';
    exact(c.weight, [...path, 'weight'], errors, expected);
    if (!Number.isSafeInteger(c.weight) || (c.weight as number) < 1 || (c.weight as number) > 10000) {
      errors.fail([...path, 'weight'], `expected ${expected}; got ${describe(c.weight)}`);
    }
    out.weight = c.weight as number;
  }
  if (c.idle !== undefined) out.idle = boolean(c.idle, [...path, 'idle'], errors);
  if (out.idle && out.weight !== undefined) {
    errors.fail(
      [...path, 'weight'],
      'idle: true ignores weight (the kernel reports weight 0); set one of them',
    );
  }
  return out;
}

/** An environment variable's name as systemd's Environment= takes one. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

function parseJvm(value: unknown, match: Match, path: FieldPath, errors: FieldErrors): JvmSpec {
  const j = mapping(
    value,
    path,
    errors,
    'a mapping like { activeProcessorCount: auto, optionsVariable: KAFKA_OPTS }',
    ['activeProcessorCount', 'optionsVariable'],
  );
  if (match.kind !== 'systemdUnit') {
    errors.fail(
      path,
      'jvm: is for systemdUnit workloads (isolate writes the option into a drop-in of the unit); match the workload by systemdUnit or remove jvm:',
    );
  }
  if (j.activeProcessorCount !== 'auto') {
    errors.fail(
      [...path, 'activeProcessorCount'],
      `expected "auto" (the workload's CPU count); got ${describe(j.activeProcessorCount)}`,
    );
  }
  if (typeof j.optionsVariable !== 'string' || !ENV_NAME.test(j.optionsVariable)) {
    errors.fail(
      [...path, 'optionsVariable'],
      `expected the environment variable the unit's launcher reads JVM options from (KAFKA_OPTS for Kafka's scripts, JDK_JAVA_OPTIONS for a plain java launcher); got ${describe(j.optionsVariable)}`,
    );
  }
  return { activeProcessorCount: 'auto', optionsVariable: j.optionsVariable };
}
