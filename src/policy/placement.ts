// Where a workload runs, as its policy says: its cores (a count or a share of a node), the devices it
// sits near, its NICs' interrupts, and the CPU or node lists the policy writes.
import { CpuSet } from '../model/cpuset.js';
import { UserError } from '../model/errors.js';
import type { FieldErrors, FieldPath } from '../model/field.js';
import { isNicName } from '../model/irq.js';
import type { DeviceRef, WorkloadSpec } from '../model/policy.js';
import { describe } from './size.js';
import { exact, mapping, oneOf } from './validate.js';

export function parseCores(
  value: unknown,
  path: FieldPath,
  errors: FieldErrors,
): NonNullable<WorkloadSpec['cores']> {
  if (typeof value === 'number') {
    const expected = 'a whole number of physical cores, 1 or more';
    exact(value, path, errors, expected);
    if (!Number.isSafeInteger(value) || value < 1) errors.fail(path, `expected ${expected}; got ${value}`);
    return { count: value };
  }
  if (typeof value === 'string') {
    const m = /^(\d+(?:\.\d+)?)%$/.exec(value.trim());
    if (m) {
      const p = Number(m[1]);
      if (p > 0 && p <= 100) return { percent: p };
    }
  }
  return errors.fail(
    path,
    `expected a whole number of cores (e.g. 8) or a percentage of a node's cores (e.g. "50%"); got ${describe(value)}`,
  );
}

export function parseNear(value: unknown, path: FieldPath, errors: FieldErrors): DeviceRef[] {
  if (value === undefined) return [];
  if (!Array.isArray(value))
    errors.fail(path, `expected a list like [nic:eth0, disk:sda]; got ${describe(value)}`);
  return value.map((v, i) => {
    const m = typeof v === 'string' ? /^(nic|disk|scsi):(.+)$/s.exec(v) : null;
    // A NIC: any name the kernel allows (ethü); a disk or SCSI host: the kernel's own ASCII names.
    const named = m && (m[1] === 'nic' ? isNicName(m[2]!) : /^[A-Za-z0-9_.:@-]+$/.test(m[2]!));
    if (!m || !named) {
      errors.fail(
        [...path, i],
        `expected nic:NAME, disk:NAME or scsi:hostN (e.g. nic:eth0); got ${describe(v)}`,
      );
    }
    return { kind: m[1] as DeviceRef['kind'], name: m[2]! };
  });
}

export function parseIrqs(
  value: unknown,
  path: FieldPath,
  errors: FieldErrors,
): NonNullable<WorkloadSpec['irqs']> {
  const v = mapping(value, path, errors, 'a mapping like { nics: [eth0], on: housekeeping }', ['nics', 'on']);
  const on =
    v.on === undefined
      ? 'housekeeping'
      : oneOf(v.on, ['housekeeping', 'own'] as const, [...path, 'on'], errors);
  if (v.nics === undefined) return { on };
  if (!Array.isArray(v.nics) || v.nics.length === 0) {
    errors.fail(
      [...path, 'nics'],
      `expected a non-empty list of NIC names like [eth0]; got ${describe(v.nics)}`,
    );
  }
  const nics = v.nics.map((n, i) => {
    if (typeof n !== 'string' || !isNicName(n)) {
      errors.fail([...path, 'nics', i], `expected a network interface name (e.g. eth0); got ${describe(n)}`);
    }
    return n;
  });
  return { nics, on };
}

export function cpuList(value: unknown, path: FieldPath, errors: FieldErrors, what = 'CPU'): CpuSet {
  exact(value, path, errors, `a ${what} list like "0-3,8"`);
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string')
    errors.fail(path, `expected a ${what} list like "0-3,8"; got ${describe(value)}`);
  try {
    const set = CpuSet.parse(text);
    if (set.isEmpty) errors.fail(path, `expected a non-empty ${what} list like "0-3,8"`);
    return set;
  } catch (err) {
    if (err instanceof UserError) throw err;
    return errors.fail(path, `expected a ${what} list like "0-3,8"; got ${describe(text)}`);
  }
}
