// Decides, per controller, whether isolate may turn on self-protecting write-back now, and what an
// SRE must hear about (raid-cli.md §8). Pure: reads the model, writes `writeBackSafe`/`findings`.
import type { Finding, LogicalDrive, RaidController } from '../../model/raid.js';

export interface SafetyVerdict {
  safe: boolean;
  /** Why not, in one phrase per reason ("battery state Failed", "learn cycle running"). */
  reasons: string[];
  /** The reason is temporary (charge/learn): re-check later rather than alarm. */
  transient: boolean;
}

/**
 * raid-cli.md §8.1/§8.4: controller healthy, cache present, protection unit present and healthy
 * (adapters encode each vendor's health words in `protection.healthy`), no charge or learn
 * running, no replacement due, and the controller is not read-only for isolate.
 */
export function writeBackVerdict(
  c: RaidController,
  opts: { allowWithoutBattery?: boolean } = {},
): SafetyVerdict {
  const reasons: string[] = [];
  let transient = false;
  const p = c.protection;
  if (c.readOnlyReason) reasons.push(c.readOnlyReason);
  if (c.mode === 'hba') reasons.push('controller is in HBA mode (no controller cache)');
  if (c.healthy !== true) reasons.push(`controller status ${c.status ?? 'not reported'}`);
  if (c.cachePresent === false) reasons.push('no cache module');
  if (c.cachePresent === null && c.cacheStatus === null && c.tool !== 'megacli') {
    reasons.push('cache module not reported');
  }
  if (p.charging === true) {
    reasons.push('protection unit is charging');
    transient = true;
  }
  if (p.learnActive === true) {
    reasons.push('learn cycle running');
    transient = true;
  }
  if (!opts.allowWithoutBattery) {
    if (p.present === false) reasons.push('no battery/CacheVault/flash backup present');
    else if (p.present === null && p.healthy !== true) reasons.push('protection unit not reported');
    if (p.replacementRequired === true) reasons.push('protection unit needs replacement');
    if (p.healthy === false && p.present !== false) reasons.push(`protection unit state ${p.state ?? 'bad'}`);
    if (p.healthy === null && p.present !== false) {
      reasons.push(
        p.kind === 'cachevault' && p.replacementRequired === null
          ? 'CacheVault "Replacement required" not reported (only /cN/cv show all prints it)'
          : `protection unit health unknown (state ${p.state ?? 'not reported'})`,
      );
    }
  }
  if (
    c.logicalDrives.some((d) => d.currentWrite === 'always-write-back' || d.writeBackIfBadBattery === true)
  ) {
    reasons.push('an unsafe always-write-back mode is configured (isolate leaves it to the operator)');
  }
  return { safe: reasons.length === 0, reasons, transient: transient && reasons.length > 0 };
}

/** Fill `writeBackSafe` and the findings `raid check` reports. Idempotent. */
export function assess(c: RaidController): RaidController {
  const verdict = writeBackVerdict(c);
  // Call once per controller: adapter findings are kept, safety findings appended.
  const findings: Finding[] = [...c.findings];
  const add = (severity: Finding['severity'], message: string, target = c.id) =>
    findings.push({ severity, message, target });
  const p = c.protection;
  if (c.readOnlyReason && !findings.some((f) => f.message === c.readOnlyReason))
    add('info', c.readOnlyReason);
  if (c.mode === 'hba' && c.logicalDrives.length === 0)
    add('info', 'HBA mode: no controller cache to manage');
  if (c.healthy === false) add('critical', `controller status ${c.status}`);
  if (c.healthy === null) add('unknown', 'controller status not reported');
  if (p.replacementRequired === true) add('warning', 'protection unit needs replacement');
  if (p.healthy === false && p.present !== false)
    add('warning', `protection unit not healthy (state ${p.state ?? 'not reported'})`);
  if (p.charging === true) add('info', 'protection unit is charging: no cache change until it is done');
  if (p.learnActive === true) add('info', 'learn cycle running: write-through is expected until it ends');
  for (const d of c.logicalDrives) driveFindings(c, d, add);
  c.findings = findings;
  c.writeBackSafe = verdict.safe;
  return c;
}

function driveFindings(
  c: RaidController,
  d: LogicalDrive,
  add: (s: Finding['severity'], m: string, t?: string) => void,
): void {
  const p = c.protection;
  const unprotected = p.present === false || p.healthy === false;
  if (d.currentWrite === 'always-write-back' || d.defaultWrite === 'always-write-back') {
    add(
      'critical',
      `always-write-back (${unsafeWord(c)}) configured: acknowledged writes are lost on power loss if the protection unit fails; set the self-protecting write-back mode or write-through`,
      d.target,
    );
  } else if (d.writeBackIfBadBattery === true) {
    // Armed but harmless while the drive writes through; critical as soon as it caches writes.
    const severity = d.currentWrite === 'write-through' ? 'warning' : 'critical';
    add(severity, `write cache is set to stay on with a bad battery (${unsafeWord(c)})`, d.target);
  } else if (d.currentWrite === 'write-back' && unprotected) {
    add(
      'critical',
      `write-back while the protection unit is ${p.present === false ? 'absent' : (p.state ?? 'bad')}: data at risk on power loss`,
      d.target,
    );
  }
  if (d.currentWrite === 'write-through' && d.defaultWrite === 'write-back') {
    const why = p.learnActive || p.charging ? 'info' : 'warning';
    add(
      why,
      'write-through now although configured write-back (battery, learn cycle or cache problem)',
      d.target,
    );
  }
  if (d.currentWrite === 'unknown') add('unknown', 'write policy not reported or not recognised', d.target);
  if (d.state !== null && !/^(optimal|optl|ok)$/i.test(d.state))
    add('warning', `logical drive state ${d.state}`, d.target);
}

function unsafeWord(c: RaidController): string {
  switch (c.tool) {
    case 'megacli':
      return 'CachedBadBBU';
    case 'ssacli':
      return 'no-battery write cache enabled';
    case 'arcconf':
      return 'wb';
    default:
      return 'AWB';
  }
}
