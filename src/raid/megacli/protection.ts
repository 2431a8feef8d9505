// MegaCli -AdpBbuCmd truth table (raid-cli.md §4, §8.1, §8.4). The same LSI MegaRAID firmware fields
// appear in storcli's `/cN/bbu show all` (BBU_Firmware_Status, raid-cli.md §3.3 [R7][R17a]), so
// storcli/protection.ts uses FIRMWARE_FLAGS too.
import type { Protection } from '../model.js';
import { flag, Judgement, type WordTable } from '../protection.js';
import { text } from '../words.js';

/**
 * `Battery State`. `Optimal`: every modern capture; `Operational`: what older MegaCli prints for a
 * healthy battery (check_raid-issue39-bbu-charging.txt, raid-cli.md §4 "Optimal/Operational…").
 */
export const BATTERY_STATE: WordTable = {
  optimal: 'healthy',
  operational: 'healthy',
};

/** `BBU Firmware Status:` flags (every -AdpBbuCmd capture prints all of them). */
export const FIRMWARE_FLAGS: Readonly<Record<string, WordTable>> = {
  // "Charging Status: Charging" during a charge (raid-cli.md §8.4); "None" otherwise.
  'charging status': { none: 'healthy', charging: 'charging' },
  // Firmware's own verdict on the gauges; anything but OK is judged below as degraded.
  voltage: { ok: 'healthy' },
  temperature: { ok: 'healthy' },
  // A learn that is only due is routine (BBU Status bit 4096 "learn cycle required", [R16b]).
  'learn cycle requested': flag('healthy'),
  'learn cycle active': flag('learning'),
  'learn cycle status': { ok: 'healthy', failed: 'degraded' },
  'learn cycle timeout': flag('degraded'),
  'i2c errors detected': flag('degraded'),
  'battery pack missing': flag('absent'),
  'battery replacement required': flag('replace'),
  'remaining capacity low': flag('degraded'),
  'periodic learn required': flag('healthy'),
  'transparent learn': flag('healthy'),
  'no space to cache offload': flag('degraded'),
  'pack is about to fail & should be replaced': flag('replace'),
  'cache offload premium feature required': flag('degraded'),
  'module microcode update required': flag('degraded'),
};

/** `GasGuageStatus:` flags of older MegaCli (netdata-AdpBbuCmd-old.txt). `Discharging: Yes` is normal there. */
export const GAUGE_FLAGS: Readonly<Record<string, WordTable>> = {
  'fully discharged': flag('degraded'),
  'remaining time alarm': flag('degraded'),
  'over temperature': flag('degraded'),
  'over charged': flag('degraded'),
};

/** `isSOHGood` (state of health, older MegaCli). */
export const SOH: WordTable = { yes: 'healthy', no: 'replace' };

/** Voltage/Temperature: the firmware prints OK; any other word means the gauge is out of range. */
const GAUGE_VERDICT = new Set(['voltage', 'temperature']);

/**
 * Judge one BBU's -AdpBbuCmd facts. `top` holds the lines before the firmware section (Battery
 * State ...), `fw` the `BBU Firmware Status:` block, `gauge` the `GasGuageStatus:` block.
 */
export function judgeMegacliBbu(
  p: Protection,
  top: Map<string, string>,
  fw: Map<string, string>,
  gauge: Map<string, string>,
): Protection {
  const j = new Judgement();
  j.word('Battery State', text(top.get('battery state')), BATTERY_STATE);
  judgeFlags(j, fw, FIRMWARE_FLAGS);
  judgeFlags(j, gauge, GAUGE_FLAGS);
  j.word('isSOHGood', top.get('issohgood') ?? gauge.get('issohgood'), SOH);
  // No state word (check_raid-3-bbu-ok.txt prints "Battery state: " empty): not healthy, but
  // nothing to quote either — the unit stays unknown without a fault.
  if (text(top.get('battery state')) === null) j.unknownWithoutWord();
  return j.apply(p);
}

export function judgeFlags(
  j: Judgement,
  values: Map<string, string>,
  table: Readonly<Record<string, WordTable>>,
): void {
  for (const [key, words] of Object.entries(table)) {
    const value = values.get(key);
    if (value === undefined) continue;
    if (GAUGE_VERDICT.has(key) && value.trim().toLowerCase() !== 'ok') {
      j.add('degraded', `${label(key)}: ${value}`);
      continue;
    }
    j.word(label(key), value, words);
  }
}

function label(key: string): string {
  return key.charAt(0).toUpperCase() + key.slice(1);
}
