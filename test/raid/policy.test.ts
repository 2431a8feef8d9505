// The `raid:` policy section: validation messages, defaults, overrides, and agreement with the
// JSON Schema the lead $refs from the policy schema.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { formatPath, type FieldErrors, type FieldPath } from '../../src/model/field.js';
import { DEFAULT_RAID_POLICY, settingsFor } from '../../src/model/raid-policy.js';
import { parseRaidPolicy } from '../../src/policy/raid.js';

class Collected extends Error {}
const errors: FieldErrors = {
  fail(path: FieldPath, message: string): never {
    throw new Collected(`${formatPath(path)}: ${message}`);
  },
};
const parse = (raw: unknown) => parseRaidPolicy(raw, ['raid'], errors);

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const schema = JSON.parse(readFileSync(join(repo, 'schema/raid-policy.schema.json'), 'utf8'));
const validate = new Ajv2020({ strict: true }).compile(schema);

describe('raid policy section', () => {
  it('defaults to changing nothing', () => {
    expect(parse({})).toEqual(DEFAULT_RAID_POLICY);
    expect(DEFAULT_RAID_POLICY).toMatchObject({
      writeCache: 'unchanged',
      allowWithoutBattery: false,
      timeoutSeconds: 60,
    });
  });

  it('reads settings and per-controller overrides', () => {
    const p = parse({
      writeCache: 'write-back',
      diskWriteCache: 'disabled',
      timeoutSeconds: 30,
      controllers: {
        'storcli:/c1': { writeCache: 'write-through' },
        'ssacli:slot=0': { allowWithoutBattery: false },
      },
    });
    expect(settingsFor(p, 'storcli:/c0')).toMatchObject({
      writeCache: 'write-back',
      diskWriteCache: 'disabled',
    });
    expect(settingsFor(p, 'storcli:/c1')).toMatchObject({
      writeCache: 'write-through',
      diskWriteCache: 'disabled',
    });
    expect(settingsFor(p, 'ssacli:slot=0')).toMatchObject({ allowWithoutBattery: false });
    expect(p.timeoutSeconds).toBe(30);
  });

  it.each([
    [
      { writeCache: 'foo' },
      'raid.writeCache: expected one of write-back, write-through, unchanged; got "foo"',
    ],
    [
      { writeCache: 'always-write-back' },
      'raid.writeCache: expected one of write-back, write-through, unchanged; got "always-write-back"',
    ],
    [{ readAhead: true }, 'raid.readAhead: expected one of on, off, adaptive, unchanged; got boolean true'],
    [
      { allowWithoutBattery: 'yes' },
      'raid.allowWithoutBattery: no longer supported (got "yes"): isolate never sets write-back without a healthy battery, CacheVault or flash backup; delete this key',
    ],
    [
      // Issue 8: the override made isolate set write-back that its own check called CRITICAL.
      { allowWithoutBattery: true },
      'raid.allowWithoutBattery: no longer supported (got true): isolate never sets write-back without a healthy battery, CacheVault or flash backup; delete this key',
    ],
    [{ timeoutSeconds: 0 }, 'raid.timeoutSeconds: expected a number of seconds from 1 to 3600; got number 0'],
    [
      { writecache: 'write-back' },
      'raid.writecache: unknown field "writecache" (did you mean "writeCache"?); allowed: writeCache, readAhead, ioPolicy, diskWriteCache, allowWithoutBattery, timeoutSeconds, controllers',
    ],
    [
      { controllers: { c0: {} } },
      'raid.controllers.c0: expected a controller id as "isolate raid show" prints it (storcli:/c0, megacli:/a0, ssacli:slot=0, arcconf:1); got "c0"',
    ],
    [
      { controllers: { 'arcconf:1': { timeoutSeconds: 5 } } },
      'raid.controllers.arcconf:1.timeoutSeconds: unknown field "timeoutSeconds"; allowed: writeCache, readAhead, ioPolicy, diskWriteCache, allowWithoutBattery',
    ],
    ['write-back', 'raid: expected a mapping; got "write-back"'],
  ])('rejects %j with a located message', (raw, message) => {
    expect(() => parse(raw)).toThrow(message);
    expect(validate(raw)).toBe(false);
  });

  it('the JSON Schema accepts what the parser accepts', () => {
    const ok = {
      writeCache: 'write-back',
      readAhead: 'off',
      ioPolicy: 'direct',
      diskWriteCache: 'disabled',
      allowWithoutBattery: false,
      timeoutSeconds: 90,
      controllers: { 'megacli:/a0': { writeCache: 'write-through' } },
    };
    expect(() => parse(ok)).not.toThrow();
    expect(validate(ok)).toBe(true);
  });
});
