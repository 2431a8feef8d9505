// arcconf truth tables by backup-unit generation (raid-cli.md §6, §8.1): Series 2/5 battery,
// Series 6 ZMM, Series 7/8 AFM supercap, SmartRAID "Green Backup".
import type { Protection } from '../../model/raid.js';
import { flag, Judgement, type WordTable } from '../protection.js';

/** `Controller Battery Information` → `Status`: Optimal | Failed | Not Installed (raid-cli.md §6). */
export const BATTERY_STATUS: WordTable = {
  optimal: 'healthy',
  failed: 'failed',
  'not installed': 'absent',
};

/** `Over temperature` under the battery (check_raid-2…, percona-arcconf-3405…). */
export const OVER_TEMPERATURE: WordTable = flag('degraded');

/**
 * `Capacity remaining : N percent` below this is degraded: the pack can no longer keep the cache
 * for its rated time. Not a vendor number — the captures show 99–100 % for healthy packs, and half
 * the rated charge is where isolate stops trusting it.
 */
export const MIN_CAPACITY_PERCENT = 50;

/** `Controller ZMM Information` → `Status`: ZMM Optimal | ZMM not installed (check_raid-3…, issue47). */
export const ZMM_STATUS: WordTable = {
  'zmm optimal': 'healthy',
  'zmm not installed': 'absent',
};

/**
 * `Controller Cache Backup Unit Information` (AFM-700, [R47]): `Overall Backup Unit Status` Ready |
 * Not Ready | Not Present; `Supercap Status` Ready | Fatal ([R36]); `Non-Volatile Storage Status`
 * Ready. "Not Ready" cannot protect the cache now.
 */
export const BACKUP_UNIT_STATUS: WordTable = {
  ready: 'healthy',
  'not ready': 'degraded',
  'not present': 'absent',
};
export const SUPERCAP_STATUS: WordTable = { ready: 'healthy', fatal: 'failed' };
export const NV_STORAGE_STATUS: WordTable = { ready: 'healthy' };

/** SmartRAID `Green Backup Information` (check_raid-arcconf31000-SmartRAID3154-smartpqi.txt). */
export const BACKUP_POWER_STATUS: WordTable = { ok: 'healthy' };
export const HARDWARE_ERROR: WordTable = { 'no error': 'healthy' };

export interface ArcconfUnitFacts {
  battery?: Map<string, string>;
  zmm?: Map<string, string>;
  backup?: Map<string, string>;
  green?: Map<string, string>;
}

export function judgeArcconfUnit(p: Protection, u: ArcconfUnitFacts): Protection {
  const j = new Judgement();
  // The unit's main status word must be printed: flags alone never make it healthy.
  const main =
    u.battery?.get('status') ??
    u.zmm?.get('status') ??
    u.backup?.get('overall backup unit status') ??
    u.green?.get('backup power status');
  if (main === undefined) j.unknownWithoutWord();
  if (u.battery) {
    j.word('Status', u.battery.get('status'), BATTERY_STATUS);
    j.word('Over temperature', u.battery.get('over temperature'), OVER_TEMPERATURE);
    const capacity = u.battery.get('capacity remaining');
    if (capacity !== undefined) {
      const m = /^(\d+)\s*percent$/i.exec(capacity.trim());
      if (!m) j.word('Capacity remaining', capacity, {});
      else if (Number(m[1]) < MIN_CAPACITY_PERCENT) j.add('degraded', `Capacity remaining: ${capacity}`);
    }
  } else if (u.zmm) {
    j.word('Status', u.zmm.get('status'), ZMM_STATUS);
  } else if (u.backup) {
    j.word('Overall Backup Unit Status', u.backup.get('overall backup unit status'), BACKUP_UNIT_STATUS);
    j.word('Supercap Status', u.backup.get('supercap status'), SUPERCAP_STATUS);
    j.word('Non-Volatile Storage Status', u.backup.get('non-volatile storage status'), NV_STORAGE_STATUS);
  } else if (u.green) {
    j.word('Backup Power Status', u.green.get('backup power status'), BACKUP_POWER_STATUS);
    j.word('Hardware Error', u.green.get('hardware error'), HARDWARE_ERROR);
    const packs = u.green.get('battery/capacitor pack count');
    if (packs !== undefined && /^0$/.test(packs.trim()))
      j.add('absent', `Battery/Capacitor Pack Count: ${packs}`);
  }
  return j.apply(p);
}
