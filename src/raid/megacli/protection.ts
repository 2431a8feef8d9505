// MegaCli -AdpBbuCmd truth table (raid-cli.md §4, §8.1, §8.4). The same LSI MegaRAID firmware fields
// appear in storcli's `/cN/bbu show all` (BBU_Firmware_Status, raid-cli.md §3.3 [R7][R17a]), so
// storcli/protection.ts uses FIRMWARE_FLAGS too.
import type { Protection } from '../../model/raid.js';
import { flag, Judgement, type WordTable } from '../protection.js';
import { normKey, text } from '../words.js';

/**
 * `Battery State`. `Optimal`: every modern capture; `Operational`: what older MegaCli prints for a
 * healthy battery (check_raid-issue39-bbu-charging.txt, raid-cli.md §4 "Optimal/Operational…").
 */
export const BATTERY_STATE: WordTable = {
  optimal: 'healthy',
  operational: 'healthy',
};

/** `BBU Firmware Status:` flags, keyed as printed (every -AdpBbuCmd capture prints all of them). */
export const FIRMWARE_FLAGS: Readonly<Record<string, WordTable>> = {
  // "Charging Status: Charging" during a charge (raid-cli.md §8.4); "None" otherwise.
  'Charging Status': { none: 'healthy', charging: 'charging' },
  // Firmware's own verdict on the gauges; anything but OK is judged below as degraded.
  Voltage: { ok: 'healthy' },
  Temperature: { ok: 'healthy' },
  // A learn that is only due is routine (BBU Status bit 4096 "learn cycle required", [R16b]).
  'Learn Cycle Requested': flag('healthy'),
  'Learn Cycle Active': flag('learning'),
  'Learn Cycle Status': { ok: 'healthy', failed: 'degraded' },
  'Learn Cycle Timeout': flag('degraded'),
  'I2c Errors Detected': flag('degraded'),
  'Battery Pack Missing': flag('absent'),
  'Battery Replacement required': flag('replace'),
  'Remaining Capacity Low': flag('degraded'),
  'Periodic Learn Required': flag('healthy'),
  'Transparent Learn': flag('healthy'),
  'No space to cache offload': flag('degraded'),
  'Pack is about to fail & should be replaced': flag('replace'),
  'Cache Offload premium feature required': flag('degraded'),
  'Module microcode update required': flag('degraded'),
};

/** `GasGuageStatus:` flags of older MegaCli (netdata-AdpBbuCmd-old.txt). `Discharging: Yes` is normal there. */
export const GAUGE_FLAGS: Readonly<Record<string, WordTable>> = {
  'Fully Discharged': flag('degraded'),
  'Remaining Time Alarm': flag('degraded'),
  'Over Temperature': flag('degraded'),
  'Over Charged': flag('degraded'),
};

/** `isSOHGood` (state of health, older MegaCli). */
export const SOH: WordTable = { yes: 'healthy', no: 'replace' };

/** Voltage/Temperature: the firmware prints OK; any other word means the gauge is out of range. */
const GAUGE_VERDICT = new Set(['Voltage', 'Temperature']);

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

/**
 * Judge every flag of `table` (keyed by the label as the tool prints it) found in `values` (keyed by
 * normKey of the printed label).
 */
export function judgeFlags(
  j: Judgement,
  values: Map<string, string>,
  table: Readonly<Record<string, WordTable>>,
): void {
  for (const [label, words] of Object.entries(table)) {
    const value = values.get(normKey(label));
    if (value === undefined) continue;
    if (GAUGE_VERDICT.has(label) && value.trim().toLowerCase() !== 'ok') {
      j.add('degraded', `${label}: ${value}`);
      continue;
    }
    j.word(label, value, words);
  }
}
