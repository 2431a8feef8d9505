import type { Finding } from './finding.js';
/**
 * One model for every RAID tool family. Adapters (storcli/, megacli/, ssacli/, arcconf/) map vendor
 * output into it; safety, planning, `raid show` and `raid check` only ever look at this model.
 *
 * Convention: `null` means "the output did not say" — never a guess. Unknown never leads to a write
 * (raid-cli.md §8.1, §8.8).
 */

/** Vendor tool families isolate knows. storcli2/perccli2 share storcli's JSON envelope (raid-cli.md §3.6). */
export type RaidTool = 'storcli' | 'perccli' | 'storcli2' | 'perccli2' | 'megacli' | 'ssacli' | 'arcconf';

/** What `raid parse --tool` accepts; storcli2/perccli2 are recognised from the JSON schema itself. */
export const PARSE_TOOLS = ['storcli', 'perccli', 'megacli', 'ssacli', 'arcconf'] as const;
export type ParseTool = (typeof PARSE_TOOLS)[number];

/**
 * Logical-drive write policy in isolate's words (raid-cli.md §2 "Shared vocabulary"):
 * - `write-back`: write-back that the firmware drops to write-through when the battery goes bad
 *   (storcli WB, MegaCli WB+NoCachedBadBBU, ssacli caching with nbwc disabled, arcconf wbb);
 * - `always-write-back`: write-back even with a bad/missing battery (AWB, CachedBadBBU, nbwc, wb);
 * - `write-through`; `unknown` when the output does not say or says something unrecognised.
 */
export type WritePolicy = 'write-back' | 'write-through' | 'always-write-back' | 'unknown';
export type ReadAhead = 'on' | 'off' | 'adaptive';
export type IoPolicy = 'direct' | 'cached';
export type DiskCache = 'enabled' | 'disabled' | 'default';

/** What keeps the cache contents alive on power loss. */
export type ProtectionKind = 'bbu' | 'cachevault' | 'supercap' | 'flash-backed' | 'none';

/**
 * What the protection unit's own words mean, judged by the tool family's truth table
 * (`src/raid/<tool>/protection.ts`). `unknown` is never healthy.
 */
export type ProtectionCondition =
  | 'healthy'
  | 'charging'
  | 'learning'
  | 'degraded'
  | 'failed'
  | 'replace'
  | 'absent'
  | 'unknown';

export interface Protection {
  kind: ProtectionKind | null;
  present: boolean | null;
  /** The vendor's own state word (`Optimal`, `Failed (Replace Batteries)`, `ZMM not installed` ...). */
  state: string | null;
  healthy: boolean | null;
  charging: boolean | null;
  learnActive: boolean | null;
  replacementRequired: boolean | null;
  nextLearn: string | null;
  /** The worst meaning among the state word and every fault flag read. */
  condition: ProtectionCondition;
  /** Words and flags that are not healthy, as printed: `Remaining Capacity Low: Yes`. */
  faults: string[];
  /** Words the truth table does not know (they make the unit `unknown`): `Battery State: Foo`. */
  unrecognised: string[];
}

export type { Finding, Severity } from './finding.js';

export interface LogicalDrive {
  /** Tool-native id: `v0` (storcli), `l0` (MegaCli), `ld1` (ssacli), `ld0` (arcconf). */
  id: string;
  /** Change target, e.g. `storcli:/c0/v0`, `megacli:/a0/l0`, `ssacli:slot=0/ld1`, `arcconf:1/ld0`. */
  target: string;
  name: string | null;
  raidLevel: string | null;
  state: string | null;
  currentWrite: WritePolicy;
  defaultWrite: WritePolicy;
  readAhead: ReadAhead | null;
  ioPolicy: IoPolicy | null;
  diskCache: DiskCache | null;
  /** True when this drive keeps caching writes while the battery is bad (the unsafe mode). */
  writeBackIfBadBattery: boolean | null;
  /** Background operation the tool reports for the drive (`Consistency Check (36%)`). */
  activeOperation: string | null;
  /**
   * The kernel's name of the disk the drive is (`sda`; `cciss!c0d0` as sysfs names `/dev/cciss/c0d0`),
   * as the tool prints it (storcli `OS Drive Name`, ssacli/arcconf `Disk Name`); null when the output
   * does not say or says something that is not a `/dev/` name (src/raid/os-device.ts).
   */
  osDevice: string | null;
}

export interface RaidController {
  /** `storcli:/c0`, `megacli:/a0`, `ssacli:slot=0`, `arcconf:1`. */
  id: string;
  tool: RaidTool;
  /** Tool-native controller address: `0` (storcli /c0, MegaCli -a0), `slot=0` (ssacli), `1` (arcconf). */
  address: string;
  model: string | null;
  status: string | null;
  healthy: boolean | null;
  /** RAID / HBA / mixed personality; HBA-mode controllers have no cache to manage. */
  mode: 'raid' | 'hba' | 'mixed' | null;
  /** A cache module is fitted and usable (storcli On Board Memory, ssacli Cache Board/Status, arcconf Cache Status). */
  cachePresent: boolean | null;
  cacheStatus: string | null;
  protection: Protection;
  logicalDrives: LogicalDrive[];
  /**
   * ssacli Gen10+: the physical-drive write cache is set per drive usage (`Configured Drive Write
   * Cache Policy` / `Unconfigured …`), and `modify drivewritecache=` then needs `usage=configured`;
   * older controllers have one `Drive Write Cache` switch. null for other tools.
   */
  diskCacheByUsage?: boolean | null;
  /** Why isolate will only read this controller (e.g. storcli2 set syntax is not known, raid-cli.md §10). */
  readOnlyReason: string | null;
  /** Would isolate enable self-protecting write-back on this controller now (filled by raid-safety.ts). */
  writeBackSafe: boolean;
  findings: Finding[];
}

/** Software RAID (md) arrays: reported so an SRE sees them, but there is no controller cache. */
export interface MdArray {
  name: string;
  level: string | null;
  devices: string[];
  degraded: boolean;
  /** `resync`, `recovery`, ... while one runs. */
  operation: string | null;
}

export interface HostAdapter {
  host: string;
  procName: string;
}

export interface RaidObservation {
  controllers: RaidController[];
  /** Findings that are about the host, not a controller: missing tools, timeouts, "No Controller found". */
  findings: Finding[];
  mdArrays: MdArray[];
  hostAdapters: HostAdapter[];
}

export function unknownProtection(): Protection {
  return {
    kind: null,
    present: null,
    state: null,
    healthy: null,
    charging: null,
    learnActive: null,
    replacementRequired: null,
    nextLearn: null,
    condition: 'unknown',
    faults: [],
    unrecognised: [],
  };
}

export function emptyController(tool: RaidTool, address: string, id: string): RaidController {
  return {
    id,
    tool,
    address,
    model: null,
    status: null,
    healthy: null,
    mode: null,
    cachePresent: null,
    cacheStatus: null,
    protection: unknownProtection(),
    logicalDrives: [],
    readOnlyReason: null,
    writeBackSafe: false,
    findings: [],
  };
}

export function emptyDrive(id: string, target: string): LogicalDrive {
  return {
    id,
    target,
    name: null,
    raidLevel: null,
    state: null,
    currentWrite: 'unknown',
    defaultWrite: 'unknown',
    readAhead: null,
    ioPolicy: null,
    diskCache: null,
    writeBackIfBadBattery: null,
    activeOperation: null,
    osDevice: null,
  };
}

/** The result of parsing one tool's output (one or several captures of it). */
export interface ParsedOutput {
  controllers: RaidController[];
  findings: Finding[];
}
