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
   * Let isolate set (self-protecting) write-back although the protection unit is missing or not
   * healthy: the firmware keeps writing through until a healthy unit is fitted. Never enables an
   * "always write-back" mode. Default false.
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
