// storcli/perccli truth table for BBU, CacheVault and (storcli2) Energy Pack (raid-cli.md §3.3, §8.1,
// §8.4). The unit's own detail (`/cN/bbu show all`, `/cN/cv show all`) carries the firmware fault
// flags; without it the unit is not judged healthy from one state word.
import { FIRMWARE_FLAGS, judgeFlags } from '../megacli/protection.js';
import type { Protection } from '../../model/raid.js';
import { flag, Judgement, type WordTable } from '../protection.js';

/**
 * `State` (BBU_Info, Cachevault_Info), `Battery State` (/cN/bbu show all), `Status` (Energy Pack).
 * Optimal: every capture. Missing/Failed/Degraded/"Degraded (need attention)": the LSI words
 * libstoragemgmt maps [R7]; CacheVault `Failed` [R43]. "unknown" (printed during a learn, [R17a]) is
 * deliberately not in the table: the learn flag says learning, the word itself stays unknown.
 */
export const STATE: WordTable = {
  optimal: 'healthy',
  missing: 'absent',
  failed: 'failed',
  degraded: 'degraded',
  'degraded (need attention)': 'degraded',
};

/** CacheVault `Firmware_Status` (megaraid-dashboard-cv_show_all-optimal-transparent-learn.json, [R42]). */
export const CV_FLAGS: Readonly<Record<string, WordTable>> = {
  'Replacement required': flag('replace'),
  'No space to cache offload': flag('degraded'),
  'Module microcode update required': flag('degraded'),
};

/** `BBU Status` / `Energy Pack Status` bits with a known meaning (raid-cli.md §3.3, [R15][R16b]). */
const CHARGING_BIT = 8;
const LEARN_REQUESTED_BIT = 4096;

export interface StorcliUnitFacts {
  kind: 'bbu' | 'cachevault' | null;
  /** Properties by normalised name; firmware-status flags are prefixed `fw:`. */
  prot: Map<string, string>;
  /** `BBU Status` / `Energy Pack Status` as printed. */
  packStatus: unknown;
  /** The unit's own `show all` detail was read (it alone prints the fault flags). */
  detailRead: boolean;
}

export function judgeStorcliUnit(p: Protection, f: StorcliUnitFacts): Protection {
  const j = new Judgement();
  const state = f.prot.get('state') ?? f.prot.get('battery state');
  const fw = new Map<string, string>();
  for (const [k, v] of f.prot) if (k.startsWith('fw:')) fw.set(k.slice(3), v);
  const learning = /^yes$/i.test(fw.get('learn cycle active') ?? '');
  // During a learn storcli prints the BBU state as "unknown" ([R17a]): with the learn flag set that
  // word is the learn, not an unknown unit.
  if (state !== undefined && learning && state.trim().toLowerCase() === 'unknown') {
    j.add('learning', `State: ${state} (learn cycle active)`);
  } else if (state !== undefined) j.word('State', state, STATE);
  else j.unknownWithoutWord();
  judgeFlags(j, fw, f.kind === 'cachevault' ? CV_FLAGS : FIRMWARE_FLAGS);
  const bits = bitfield(f.packStatus);
  if (bits !== null) {
    const known = CHARGING_BIT | LEARN_REQUESTED_BIT;
    if ((bits & CHARGING_BIT) !== 0) j.add('charging', `BBU Status: ${bits} (charging)`);
    // Undocumented bits (users report 8192, 40 ... [R16a]): unknown, quoted, never healthy.
    if ((bits & ~known) !== 0) j.word('BBU Status', String(bits), {});
  }
  if (!f.detailRead) j.unknownWithoutWord();
  return j.apply(p);
}

function bitfield(raw: unknown): number | null {
  if (typeof raw === 'number' && Number.isInteger(raw)) return raw;
  if (typeof raw === 'string' && /^\d+$/.test(raw.trim())) return Number(raw.trim());
  return null;
}
