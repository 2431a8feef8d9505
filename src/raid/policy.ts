// The `raid:` section of the policy file. Validation only; the loader (src/policy/load.ts) owns the
// document and gives us a path and a FieldErrors that knows file:line:column.
import type { FieldErrors, FieldPath } from '../policy/field.js';

export const WRITE_CACHE = ['write-back', 'write-through', 'unchanged'] as const;
export const READ_AHEAD = ['on', 'off', 'adaptive', 'unchanged'] as const;
export const IO_POLICY = ['direct', 'cached', 'unchanged'] as const;
export const DISK_WRITE_CACHE = ['enabled', 'disabled', 'default', 'unchanged'] as const;

export type WriteCacheWanted = (typeof WRITE_CACHE)[number];
export type ReadAheadWanted = (typeof READ_AHEAD)[number];
export type IoPolicyWanted = (typeof IO_POLICY)[number];
export type DiskWriteCacheWanted = (typeof DISK_WRITE_CACHE)[number];

/** Cache settings that can be set host-wide and overridden per controller. */
export interface RaidCacheSettings {
  /**
   * `write-back` is always the self-protecting mode (storcli WB, MegaCli WB+NoCachedBadBBU, ssacli
   * caching with no-battery write cache off, arcconf wbb); isolate never sets the "always" variants.
   */
  writeCache: WriteCacheWanted;
  readAhead: ReadAheadWanted;
  ioPolicy: IoPolicyWanted;
  /** Physical-disk write cache; the disks' own cache is not battery-protected. */
  diskWriteCache: DiskWriteCacheWanted;
  /**
   * Always false. It used to let isolate set write-back without a healthy protection unit, which
   * `raid check` then had to call unsafe; issue 8 removed it. `false` is still accepted so old
   * policy files load; `true` is refused with a one-line error.
   */
  allowWithoutBattery: boolean;
}

export interface RaidPolicy extends RaidCacheSettings {
  /** Hard timeout for one vendor-tool call, in seconds (default 60). */
  timeoutSeconds: number;
  /** Overrides by controller id as `isolate raid show` prints it (`storcli:/c0`, `ssacli:slot=0`). */
  controllers: Record<string, Partial<RaidCacheSettings>>;
}

export const DEFAULT_RAID_POLICY: RaidPolicy = {
  writeCache: 'unchanged',
  readAhead: 'unchanged',
  ioPolicy: 'unchanged',
  diskWriteCache: 'unchanged',
  allowWithoutBattery: false,
  timeoutSeconds: 60,
  controllers: {},
};

const SETTING_KEYS = ['writeCache', 'readAhead', 'ioPolicy', 'diskWriteCache', 'allowWithoutBattery'];
const CONTROLLER_ID =
  /^(storcli|perccli|storcli2|perccli2|megacli):\/[ca]\d+$|^ssacli:slot=\w+$|^arcconf:\d+$/;

export function parseRaidPolicy(raw: unknown, path: FieldPath, errors: FieldErrors): RaidPolicy {
  const map = asMap(raw, path, errors);
  only(map, [...SETTING_KEYS, 'timeoutSeconds', 'controllers'], path, errors);
  const settings = parseSettings(map, path, errors);
  const policy: RaidPolicy = {
    ...DEFAULT_RAID_POLICY,
    ...settings,
    controllers: {},
  };
  if (map.timeoutSeconds !== undefined) {
    const t = map.timeoutSeconds;
    if (typeof t !== 'number' || !Number.isFinite(t) || t < 1 || t > 3600) {
      errors.fail([...path, 'timeoutSeconds'], `expected a number of seconds from 1 to 3600; got ${show(t)}`);
    }
    policy.timeoutSeconds = t;
  }
  if (map.controllers !== undefined) {
    const overrides = asMap(map.controllers, [...path, 'controllers'], errors);
    for (const [id, value] of Object.entries(overrides)) {
      const at = [...path, 'controllers', id];
      if (!CONTROLLER_ID.test(id)) {
        errors.fail(
          at,
          `expected a controller id as "isolate raid show" prints it (storcli:/c0, megacli:/a0, ssacli:slot=0, arcconf:1); got "${id}"`,
        );
      }
      const o = asMap(value, at, errors);
      only(o, SETTING_KEYS, at, errors);
      policy.controllers[id] = parseSettings(o, at, errors);
    }
  }
  return policy;
}

/** Effective settings for one controller: host-wide values, then its override. */
export function settingsFor(policy: RaidPolicy, controllerId: string): RaidCacheSettings {
  return { ...policy, ...(policy.controllers[controllerId] ?? {}) };
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

function oneOf<T extends string>(
  value: unknown,
  allowed: readonly T[],
  path: FieldPath,
  errors: FieldErrors,
): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    errors.fail(path, `expected one of ${allowed.join(', ')}; got ${show(value)}`);
  }
  return value as T;
}

function asMap(value: unknown, path: FieldPath, errors: FieldErrors): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    errors.fail(path, `expected a mapping; got ${show(value)}`);
  }
  return value as Record<string, unknown>;
}

function only(map: Record<string, unknown>, keys: string[], path: FieldPath, errors: FieldErrors): void {
  for (const key of Object.keys(map)) {
    if (!keys.includes(key))
      errors.fail([...path, key], `unknown key "${key}"; expected one of ${keys.join(', ')}`);
  }
}

function show(value: unknown): string {
  if (typeof value === 'string') return `"${value}"`;
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return String(value);
}
