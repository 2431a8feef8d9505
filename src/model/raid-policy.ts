// The `raid:` section of a policy, as the planner and the RAID backend read it.
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

/** Effective settings for one controller: host-wide values, then its override. */
export function settingsFor(policy: RaidPolicy, controllerId: string): RaidCacheSettings {
  return { ...policy, ...(policy.controllers[controllerId] ?? {}) };
}
