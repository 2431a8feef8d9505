// Where vendor tools are looked for: a fixed list of absolute paths (raid-cli.md §1 "Binary
// locations seen in real tools"), under --root. Never PATH: the agent runs as root and must not run
// whatever a PATH lookup finds.
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import type { RaidTool } from '../model/raid.js';

export const TOOL_PATHS: Record<RaidTool, string[]> = {
  storcli: [
    '/opt/MegaRAID/storcli/storcli64',
    '/opt/MegaRAID/storcli/storcli',
    '/opt/hpe/storcli/storcli64',
    '/usr/sbin/storcli64',
    '/usr/sbin/storcli',
    '/usr/bin/storcli64',
    '/usr/bin/storcli',
    '/usr/local/sbin/storcli64',
  ],
  perccli: [
    '/opt/MegaRAID/perccli/perccli64',
    '/opt/MegaRAID/perccli/perccli',
    '/usr/sbin/perccli64',
    '/usr/sbin/perccli',
    '/usr/bin/perccli64',
  ],
  storcli2: ['/opt/MegaRAID/storcli2/storcli2', '/usr/sbin/storcli2', '/usr/bin/storcli2'],
  perccli2: ['/opt/MegaRAID/perccli2/perccli2', '/usr/sbin/perccli2', '/usr/bin/perccli2'],
  megacli: [
    '/opt/MegaRAID/MegaCli/MegaCli64',
    '/opt/MegaRAID/MegaCli/MegaCli',
    '/usr/sbin/MegaCli64',
    '/usr/sbin/MegaCli',
    '/usr/sbin/megacli',
    '/usr/bin/MegaCli64',
  ],
  ssacli: [
    '/usr/sbin/ssacli',
    '/opt/hp/ssacli/bld/ssacli',
    '/opt/smartstorageadmin/ssacli/bin/ssacli',
    '/usr/sbin/hpssacli',
    '/opt/hp/hpssacli/bld/hpssacli',
    '/usr/sbin/hpacucli',
  ],
  arcconf: ['/usr/sbin/arcconf', '/usr/bin/arcconf', '/usr/Arcconf/arcconf', '/usr/local/sbin/arcconf'],
};

/** What to install when a controller has no tool. */
export const TOOL_ADVICE: Record<RaidTool, string> = {
  storcli: 'storcli64 (Broadcom)',
  perccli: 'perccli64 (Dell)',
  storcli2: 'storcli2 (Broadcom)',
  perccli2: 'perccli2 (Dell)',
  megacli: 'MegaCli64',
  ssacli: 'ssacli (HPE)',
  arcconf: 'arcconf (Microchip/Adaptec)',
};

export const TOOL_NAMES = Object.keys(TOOL_PATHS) as RaidTool[];

/**
 * First executable candidate under root. `overrides` (from `--tool-path name=path`) wins; a relative
 * override is refused so a typo cannot turn into a PATH lookup.
 */
export async function findTool(
  tool: RaidTool,
  root: string,
  overrides: Partial<Record<RaidTool, string>> = {},
): Promise<string | null> {
  const forced = overrides[tool];
  if (forced !== undefined) return isAbsolute(forced) && (await executable(forced)) ? forced : null;
  for (const candidate of TOOL_PATHS[tool]) {
    const path = join(root, candidate);
    if (await executable(path)) return path;
  }
  return null;
}

async function executable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `--tool-path storcli=/x/y` values → overrides; throws a one-line message on a bad value. */
export function parseToolPaths(values: string[]): Partial<Record<RaidTool, string>> {
  const out: Partial<Record<RaidTool, string>> = {};
  for (const v of values) {
    const m = /^([a-z0-9]+)=(.+)$/.exec(v);
    if (!m || !TOOL_NAMES.includes(m[1] as RaidTool) || !isAbsolute(m[2] as string)) {
      throw new Error(
        `--tool-path ${v}: expected <tool>=<absolute path> with tool one of ${TOOL_NAMES.join(', ')}`,
      );
    }
    out[m[1] as RaidTool] = m[2] as string;
  }
  return out;
}
