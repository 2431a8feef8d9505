// The only set commands isolate issues, per tool (raid-cli.md §3.4, §4, §5, §6). Write-back is always
// the self-protecting form: storcli WB (never AWB), MegaCli NoCachedBadBBU then WB (never
// CachedBadBBU/ForcedWB), ssacli caching=enable (no-battery write cache is never enabled), arcconf
// wbb (never wb). Learn cycles are never started.
//
// Vocabulary shared by the planner (what can be changed, and back) and the RAID executor (the argv it
// runs): it lives in model so the backend never imports the planner. Pure: no I/O.
import type { RaidSetting } from './plan.js';
import type { DiskCache, IoPolicy, LogicalDrive, RaidTool, ReadAhead, WritePolicy } from './raid.js';

/** A parsed change target: `storcli:/c0/v0`, `megacli:/a0/l0`, `ssacli:slot=0/ld1`, `ssacli:slot=0`, `arcconf:1/ld0`. */
export interface RaidTarget {
  tool: RaidTool;
  controller: string;
  drive: string | null;
}

export function parseTarget(target: string): RaidTarget | null {
  let m = /^(storcli|perccli|storcli2|perccli2):\/c(\d+)(?:\/v(\d+))?$/.exec(target);
  if (m) return { tool: m[1] as RaidTool, controller: m[2] as string, drive: m[3] ?? null };
  m = /^megacli:\/a(\d+)(?:\/l(\d+))?$/.exec(target);
  if (m) return { tool: 'megacli', controller: m[1] as string, drive: m[2] ?? null };
  m = /^ssacli:(slot=\w+)(?:\/ld(\d+))?$/.exec(target);
  if (m) return { tool: 'ssacli', controller: m[1] as string, drive: m[2] ?? null };
  m = /^arcconf:(\d+)(?:\/ld(\d+))?$/.exec(target);
  if (m) return { tool: 'arcconf', controller: m[1] as string, drive: m[2] ?? null };
  return null;
}

/**
 * The write policy a set changes — the configured one, not what the firmware does right now:
 * storcli 7.x prints a single `Cache` word per VD, the configured policy (raid-cli.md §3.2); MegaCli's
 * `Default Cache Policy` is the configured one while `Current` drops to WriteThrough on a bad BBU or
 * during a learn (§4, check_raid-issue65-ldinfo-old-format-WT.txt); storcli2 has the same
 * Current/Default pair (§3.6); ssacli and arcconf separate the setting (`Caching` + nbwc,
 * `Write-cache setting`) from what the cache does now.
 */
export function configuredWrite(tool: RaidTool, d: LogicalDrive): WritePolicy {
  return tool === 'storcli' || tool === 'perccli' ? d.currentWrite : d.defaultWrite;
}

/** Current value of a setting in policy words; null = not reported. */
export function currentValue(tool: RaidTool, d: LogicalDrive, setting: RaidSetting): string | null {
  switch (setting) {
    case 'writeCache': {
      const w = configuredWrite(tool, d);
      return w === 'unknown' ? null : w;
    }
    case 'readAhead':
      return d.readAhead;
    case 'ioPolicy':
      return d.ioPolicy;
    case 'diskWriteCache':
      return d.diskCache;
  }
}

/** What a set command needs to know about the controller besides the target. */
export interface SetContext {
  /** ssacli Gen10+: `drivewritecache=` takes `usage=configured` (RaidController.diskCacheByUsage). */
  diskCacheByUsage?: boolean | null;
}

/** Is `value` settable for this tool at all? Returns the argv list (one or more calls) or null. */
export function setCommands(
  t: RaidTarget,
  setting: RaidSetting,
  value: string,
  ctx: SetContext = {},
): string[][] | null {
  switch (t.tool) {
    case 'storcli':
    case 'perccli':
      return storcliSet(t, setting, value);
    case 'megacli':
      return megacliSet(t, setting, value);
    case 'ssacli':
      return ssacliSet(t, setting, value, ctx);
    case 'arcconf':
      return arcconfSet(t, setting, value);
    default:
      // storcli2/perccli2: set syntax not found in public sources (raid-cli.md §3.6, §10).
      return null;
  }
}

function storcliSet(t: RaidTarget, setting: RaidSetting, value: string): string[][] | null {
  if (t.drive === null) return null;
  const words: Record<RaidSetting, Record<string, string>> = {
    writeCache: { 'write-back': 'wrcache=WB', 'write-through': 'wrcache=WT' },
    readAhead: { on: 'rdcache=RA', off: 'rdcache=NoRA' },
    ioPolicy: { direct: 'iopolicy=Direct', cached: 'iopolicy=Cached' },
    diskWriteCache: { enabled: 'pdcache=On', disabled: 'pdcache=Off', default: 'pdcache=Default' },
  };
  const word = words[setting][value];
  // `J` so success is read from "Command Status", not from the exit code (raid-cli.md §3.5);
  // `nolog` so storcli writes no storcli.log (collectors do the same, §3.1).
  return word ? [[`/c${t.controller}/v${t.drive}`, 'set', word, 'J', 'nolog']] : null;
}

function megacliSet(t: RaidTarget, setting: RaidSetting, value: string): string[][] | null {
  if (t.drive === null) return null;
  const ld = [`-L${t.drive}`, `-a${t.controller}`, '-NoLog'];
  if (setting === 'writeCache') {
    // NoCachedBadBBU first: no moment with WB + CachedBadBBU (raid-cli.md §4 "Set").
    if (value === 'write-back')
      return [
        ['-LDSetProp', 'NoCachedBadBBU', ...ld],
        ['-LDSetProp', 'WB', ...ld],
      ];
    if (value === 'write-through')
      return [
        ['-LDSetProp', 'NoCachedBadBBU', ...ld],
        ['-LDSetProp', 'WT', ...ld],
      ];
    return null;
  }
  const words: Record<Exclude<RaidSetting, 'writeCache'>, Record<string, string>> = {
    readAhead: { on: 'RA', off: 'NORA', adaptive: 'ADRA' },
    ioPolicy: { direct: 'Direct', cached: 'Cached' },
    diskWriteCache: { enabled: '-EnDskCache', disabled: '-DisDskCache' },
  };
  const word = words[setting][value];
  return word ? [['-LDSetProp', word, ...ld]] : null;
}

function ssacliSet(t: RaidTarget, setting: RaidSetting, value: string, ctx: SetContext): string[][] | null {
  // `forced` avoids the interactive confirmation (libstoragemgmt [R8]).
  if (setting === 'writeCache' && t.drive !== null) {
    const v = value === 'write-back' ? 'enable' : value === 'write-through' ? 'disable' : null;
    return v ? [['ctrl', t.controller, 'ld', t.drive, 'modify', `caching=${v}`, 'forced']] : null;
  }
  if (setting === 'diskWriteCache' && t.drive === null) {
    const v = value === 'enabled' ? 'enable' : value === 'disabled' ? 'disable' : null;
    if (!v) return null;
    // Gen10+ refuses drivewritecache= without usage= (issue 8); isolate manages the drives that
    // back logical drives, so `configured`. A controller whose output does not say is not changed.
    if (ctx.diskCacheByUsage === null) return null;
    const usage = ctx.diskCacheByUsage ? ['usage=configured'] : [];
    return [['ctrl', t.controller, 'modify', `drivewritecache=${v}`, ...usage, 'forced']];
  }
  return null;
}

function arcconfSet(t: RaidTarget, setting: RaidSetting, value: string): string[][] | null {
  if (t.drive === null) return null;
  const words: Partial<Record<RaidSetting, Record<string, string>>> = {
    writeCache: { 'write-back': 'wbb', 'write-through': 'wt' },
    readAhead: { on: 'ron', off: 'roff' },
  };
  const word = words[setting]?.[value];
  return word ? [['SETCACHE', t.controller, 'LOGICALDRIVE', t.drive, word, 'noprompt']] : null;
}

/** Which settings a tool can change, for the planner's "not supported" warnings. */
export function supports(tool: RaidTool, setting: RaidSetting, value: string): boolean {
  const probe: RaidTarget = { tool, controller: tool === 'ssacli' ? 'slot=0' : '0', drive: '0' };
  if (tool === 'ssacli' && setting === 'diskWriteCache') probe.drive = null;
  return setCommands(probe, setting, value) !== null;
}

export type SettingValue = WritePolicy | ReadAhead | IoPolicy | DiskCache;
