// Decides, per controller, whether isolate may turn on self-protecting write-back now, and what an
// SRE must hear about (raid-cli.md §8). Pure: reads the model, writes `writeBackSafe`/`findings`.
// Shared by the RAID backend (which assesses what it reads and re-checks before a set) and the planner:
// it lives in model so the backend never imports the planner.
//
// One severity model for every tool:
// - INFO: a learn cycle, a charge, or the controller's own write-through fallback while its
//   protection is down — the controller is doing the safe thing;
// - WARNING: something needs a person (a protection unit that is failed, degraded, due for
//   replacement or says a word isolate does not know; a controller or drive not optimal);
// - CRITICAL: only a state that loses acknowledged writes on power loss now — write-back in effect
//   without a healthy protection unit, or an "always write-back" mode (AWB, CachedBadBBU, no-battery
//   write cache on, arcconf wb).
import type { Finding, LogicalDrive, RaidController, RaidTool } from './raid.js';

export interface SafetyVerdict {
  safe: boolean;
  /** Why not, in one phrase per reason ("battery state Failed", "learn cycle running"). */
  reasons: string[];
  /** The reason is temporary (charge/learn): re-check later rather than alarm. */
  transient: boolean;
}

/** Reasons to leave a whole controller alone (raid-cli.md §8.1, §8.4); plan and apply check the same. */
export function controllerBlock(c: RaidController): string | null {
  if (c.readOnlyReason) return c.readOnlyReason;
  if (c.mode === 'hba') return 'HBA mode, no controller cache';
  if (c.healthy !== true) return `controller status ${c.status ?? 'unknown'}`;
  const p = c.protection;
  if (p.learnActive === true || p.condition === 'learning')
    return 'learn cycle running; re-run after it ends';
  if (p.charging === true || p.condition === 'charging')
    return 'protection unit is charging; re-run after it is charged';
  if (c.findings.some((f) => f.severity === 'unknown')) {
    return `its state is not fully known (${c.findings.find((f) => f.severity === 'unknown')?.message})`;
  }
  return null;
}

/**
 * raid-cli.md §8.1/§8.4: controller healthy, cache present and caching, protection unit present and
 * judged healthy by its tool's truth table (every state word and fault flag), no charge or learn
 * running, the unsafe mode ruled out, and the controller not read-only for isolate. There is no
 * override: write-back without a healthy unit is never set (issue 8).
 */
export function writeBackVerdict(c: RaidController): SafetyVerdict {
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
  if (c.cacheStatus !== null && !/^ok$/i.test(c.cacheStatus)) reasons.push(`cache status ${c.cacheStatus}`);
  if (p.charging === true || p.condition === 'charging') {
    reasons.push('protection unit is charging');
    transient = true;
  }
  if (p.learnActive === true || p.condition === 'learning') {
    reasons.push('learn cycle running');
    transient = true;
  }
  switch (p.condition) {
    case 'absent':
      reasons.push('no battery/CacheVault/flash backup present');
      break;
    case 'failed':
    case 'replace':
    case 'degraded':
      reasons.push(
        `protection unit ${p.condition === 'replace' ? 'needs replacement' : p.condition} (${describeFaults(p.faults, p.state)})`,
      );
      break;
    case 'unknown':
      reasons.push(unknownReason(c));
      break;
    default:
      break;
  }
  if (
    c.logicalDrives.some((d) => d.currentWrite === 'always-write-back' || d.writeBackIfBadBattery === true)
  ) {
    reasons.push('an unsafe always-write-back mode is configured (isolate leaves it to the operator)');
  } else if (c.logicalDrives.some((d) => d.writeBackIfBadBattery === null)) {
    // ssacli without a "No-Battery Write Cache" line, MegaCli without the BBU clause: the unsafe mode
    // cannot be ruled out.
    reasons.push(`whether ${unsafeWord(c)} is set is not reported`);
  }
  return { safe: reasons.length === 0, reasons, transient: transient && reasons.length > 0 };
}

function unknownReason(c: RaidController): string {
  const p = c.protection;
  if (p.unrecognised.length > 0)
    return `protection unit reports ${p.unrecognised.map((w) => `"${w}"`).join(', ')}`;
  if ((c.tool === 'storcli' || c.tool === 'perccli') && p.present !== false) {
    return `protection unit not judged: its own detail (/c${c.address}/${p.kind === 'cachevault' ? 'cv' : 'bbu'} show all) was not read`;
  }
  if (p.present === null && p.state === null) return 'protection unit not reported';
  return `protection unit health unknown (state ${p.state ?? 'not reported'})`;
}

function describeFaults(faults: string[], state: string | null): string {
  return faults.length > 0 ? faults.join(', ') : `state ${state ?? 'not reported'}`;
}

/**
 * Tools whose drive `currentWrite` is what the firmware does now. storcli/perccli 7.x print only
 * the configured policy (raid-cli.md §3.2), so for them a configured self-protecting write-back
 * with a bad unit is the firmware's own fallback, not write-back in effect.
 */
const REPORTS_EFFECTIVE_WRITE: ReadonlySet<RaidTool> = new Set([
  'megacli',
  'ssacli',
  'arcconf',
  'storcli2',
  'perccli2',
]);

/** Fill `writeBackSafe` and the findings `raid check` reports. Call once per controller. */
export function assess(c: RaidController): RaidController {
  const verdict = writeBackVerdict(c);
  // Adapter findings are kept, safety findings appended.
  const findings: Finding[] = [...c.findings];
  const add = (severity: Finding['severity'], message: string, target = c.id) =>
    findings.push({ severity, message, target });
  const p = c.protection;
  if (c.readOnlyReason && !findings.some((f) => f.message.startsWith(c.readOnlyReason as string)))
    add('info', c.readOnlyReason);
  if (c.mode === 'hba' && c.logicalDrives.length === 0)
    add('info', 'HBA mode: no controller cache to manage');
  if (c.healthy === false) add('warning', `controller status ${c.status}`);
  if (c.healthy === null) add('unknown', 'controller status not reported');
  for (const word of p.unrecognised) {
    add(
      'warning',
      `protection unit reports "${word}", a word isolate does not know: treated as unknown, never as healthy`,
    );
  }
  if (p.condition === 'failed' || p.condition === 'replace' || p.condition === 'degraded') {
    const what = p.condition === 'replace' ? 'needs replacement' : p.condition;
    add('warning', `protection unit ${what}: ${describeFaults(p.faults, p.state)}`);
  }
  if (p.condition === 'charging' || p.charging === true)
    add('info', 'protection unit is charging: no cache change until it is done');
  if (p.condition === 'learning' || p.learnActive === true)
    add('info', 'learn cycle running: write-through is expected until it ends');
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
  const busy =
    p.condition === 'learning' || p.condition === 'charging' || p.learnActive === true || p.charging === true;
  const knownBad =
    p.condition === 'absent' ||
    p.condition === 'failed' ||
    p.condition === 'replace' ||
    p.condition === 'degraded';
  const unitWord =
    p.condition === 'absent' ? 'absent' : `${p.condition} (${describeFaults(p.faults, p.state)})`;
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
  } else if (d.currentWrite === 'write-back' && knownBad && !busy) {
    if (REPORTS_EFFECTIVE_WRITE.has(c.tool)) {
      add(
        'critical',
        `write-back in effect while the protection unit is ${unitWord}: data at risk on power loss`,
        d.target,
      );
    } else {
      add(
        'info',
        `write-back configured (self-protecting): the controller writes through while the protection unit is ${unitWord}`,
        d.target,
      );
    }
  }
  if (d.currentWrite === 'write-through' && d.defaultWrite === 'write-back') {
    // The firmware's own fallback while the unit is down, learning or charging is the safe thing;
    // write-through with a healthy unit is unexplained ([R18a], [R30]) and needs a look.
    const why = p.condition === 'healthy' && !busy ? 'warning' : 'info';
    add(
      why,
      why === 'info'
        ? `write-through now although configured write-back: the controller's own fallback while the protection unit is ${busy ? (p.condition === 'charging' || p.charging ? 'charging' : 'learning') : p.condition}`
        : 'write-through now although configured write-back and the protection unit is healthy',
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
