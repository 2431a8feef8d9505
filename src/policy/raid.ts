// The `raid:` section of the policy file. Validation only; the loader (src/policy/load.ts) owns the
// document and gives us a path and a FieldErrors that knows file:line:column.
import type { FieldErrors, FieldPath } from '../model/field.js';
import { describe } from './size.js';
import { mapping, object, oneOf } from './validate.js';
import {
  DEFAULT_RAID_POLICY,
  DISK_WRITE_CACHE,
  IO_POLICY,
  READ_AHEAD,
  type RaidCacheSettings,
  type RaidPolicy,
  WRITE_CACHE,
} from '../model/raid-policy.js';

const SETTING_KEYS = ['writeCache', 'readAhead', 'ioPolicy', 'diskWriteCache', 'allowWithoutBattery'];
const CONTROLLER_ID =
  /^(storcli|perccli|storcli2|perccli2|megacli):\/[ca]\d+$|^ssacli:slot=\w+$|^arcconf:\d+$/;

export function parseRaidPolicy(raw: unknown, path: FieldPath, errors: FieldErrors): RaidPolicy {
  const map = mapping(raw, path, errors, 'a mapping', [...SETTING_KEYS, 'timeoutSeconds', 'controllers']);
  const settings = parseSettings(map, path, errors);
  const policy: RaidPolicy = {
    ...DEFAULT_RAID_POLICY,
    ...settings,
    controllers: {},
  };
  if (map.timeoutSeconds !== undefined) {
    const t = map.timeoutSeconds;
    if (typeof t !== 'number' || !Number.isFinite(t) || t < 1 || t > 3600) {
      errors.fail(
        [...path, 'timeoutSeconds'],
        `expected a number of seconds from 1 to 3600; got ${describe(t)}`,
      );
    }
    policy.timeoutSeconds = t;
  }
  if (map.controllers !== undefined) {
    const overrides = object(map.controllers, [...path, 'controllers'], errors, 'a mapping');
    for (const [id, value] of Object.entries(overrides)) {
      const at = [...path, 'controllers', id];
      if (!CONTROLLER_ID.test(id)) {
        errors.fail(
          at,
          `expected a controller id as "isolate raid show" prints it (storcli:/c0, megacli:/a0, ssacli:slot=0, arcconf:1); got ${describe(id)}`,
        );
      }
      const o = mapping(value, at, errors, 'a mapping', SETTING_KEYS);
      policy.controllers[id] = parseSettings(o, at, errors);
    }
  }
  return policy;
}

function parseSettings(map: Record<string, unknown>, path: FieldPath, errors: FieldErrors) {
  const out: Partial<RaidCacheSettings> = {};
  if (map.writeCache !== undefined)
    out.writeCache = oneOf(map.writeCache, WRITE_CACHE, [...path, 'writeCache'], errors);
  if (map.readAhead !== undefined)
    out.readAhead = oneOf(map.readAhead, READ_AHEAD, [...path, 'readAhead'], errors);
  if (map.ioPolicy !== undefined)
    out.ioPolicy = oneOf(map.ioPolicy, IO_POLICY, [...path, 'ioPolicy'], errors);
  if (map.diskWriteCache !== undefined) {
    out.diskWriteCache = oneOf(map.diskWriteCache, DISK_WRITE_CACHE, [...path, 'diskWriteCache'], errors);
  }
  if (map.allowWithoutBattery !== undefined) {
    if (map.allowWithoutBattery !== false) {
      errors.fail(
        [...path, 'allowWithoutBattery'],
        `no longer supported (got ${show(map.allowWithoutBattery)}): isolate never sets write-back without a healthy battery, CacheVault or flash backup; delete this key`,
      );
    }
    out.allowWithoutBattery = false;
  }
  return out;
}

/** A value as the old messages showed it: `"yes"`, `true`. */
function show(value: unknown): string {
  return typeof value === 'string' ? `"${value}"` : String(value);
}
