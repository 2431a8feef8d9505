// Which RAID controllers the kernel sees (sysfs under --root) and what the host runs as software
// RAID. No vendor tool is run here.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { HostAdapter, MdArray, RaidTool } from '../model/raid.js';
import { readBoundedIfPresent, readTrimSync } from '../sys/read.js';

/**
 * `scsi_host/host*\/proc_name` → tool families that manage the driver's cache (raid-cli.md §1 table).
 * Order is preference: storcli for Broadcom, perccli for Dell, MegaCli only for old cards.
 */
export const DRIVER_TOOLS: Record<string, RaidTool[]> = {
  megaraid_sas: ['storcli', 'perccli', 'megacli'],
  mpi3mr: ['storcli2', 'perccli2'],
  hpsa: ['ssacli'],
  cciss: ['ssacli'],
  // smartpqi drives both HPE Gen10+ Smart Array and Microchip SmartRAID; whichever CLI sees the card wins.
  smartpqi: ['ssacli', 'arcconf'],
  aacraid: ['arcconf'],
};

/** IT-mode HBAs: storcli can list them but there is no controller cache (raid-cli.md §1). */
export const HBA_DRIVERS = new Set(['mpt3sas', 'mpt2sas', 'mptsas', 'mptspi', 'mptfc']);

export async function scsiHosts(root: string): Promise<HostAdapter[]> {
  const dir = join(root, 'sys/class/scsi_host');
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const out: HostAdapter[] = [];
  for (const host of names.filter((n) => /^host\d+$/.test(n)).sort((a, b) => hostNo(a) - hostNo(b))) {
    // A host without proc_name (virtual adapters) says nothing about RAID.
    const procName = readTrimSync(join(dir, host, 'proc_name'));
    if (procName) out.push({ host, procName });
  }
  return out;
}

function hostNo(name: string): number {
  return Number(name.slice(4));
}

/** `/proc/mdstat` → md arrays (check_raid-mdstat-*.txt fixtures). */
export function parseMdstat(content: string): MdArray[] {
  const out: MdArray[] = [];
  let current: MdArray | null = null;
  for (const line of content.split('\n')) {
    const head =
      /^(md\w+)\s*:\s*(\S+)\s+(?:\((?:auto-)?read-only\)\s+)?(raid\d+|linear|multipath)?\s*(.*)$/.exec(line);
    if (head) {
      current = {
        name: head[1] as string,
        level: head[3] ?? null,
        devices: (head[4] ?? '')
          .split(/\s+/)
          .filter((d) => /\[\d+\]/.test(d))
          .map((d) => d.replace(/\[\d+\].*$/, '')),
        degraded: /\(F\)/.test(head[4] ?? ''),
        operation: null,
      };
      out.push(current);
      continue;
    }
    if (!current) continue;
    const members = /\[(\d+)\/(\d+)\]\s+\[([U_]+)\]/.exec(line);
    if (members && (members[3] as string).includes('_')) current.degraded = true;
    const op = /\b(resync|recovery|reshape|check|repair)\s*=/.exec(line);
    if (op) current.operation = op[1] as string;
  }
  return out;
}

/** /proc/mdstat: a few lines an array; a host with hundreds of arrays stays far below this. */
const MDSTAT_MAX_BYTES = 1024 ** 2;

export async function mdArrays(root: string): Promise<MdArray[]> {
  try {
    return parseMdstat(readBoundedIfPresent(join(root, 'proc/mdstat'), { maxBytes: MDSTAT_MAX_BYTES }) ?? '');
  } catch {
    return [];
  }
}

export type LspciClass = 'caching-raid' | 'hba' | 'software-raid';

export interface LspciController {
  line: string;
  kind: LspciClass;
  tools: RaidTool[];
}

/**
 * `lspci` RAID/SAS lines → what they mean for cache management (raid-cli.md §1 points 2–3): chipset
 * "RAID mode" and Intel VMD are software RAID; Fusion-MPT SAS is a plain HBA.
 */
export function classifyLspci(content: string): LspciController[] {
  const out: LspciController[] = [];
  for (const line of content.split('\n')) {
    if (!/RAID bus controller|SCSI storage controller|Serial Attached SCSI controller/.test(line)) continue;
    let kind: LspciClass;
    let tools: RaidTool[] = [];
    if (
      /\[8086:[0-9a-f]{4}\]|Intel Corporation/i.test(line) &&
      /RAID mode|Volume Management Device|VMD/i.test(line)
    ) {
      kind = 'software-raid';
    } else if (/MegaRAID/i.test(line)) {
      kind = 'caching-raid';
      tools = DRIVER_TOOLS.megaraid_sas ?? [];
    } else if (/Smart Array/i.test(line)) {
      kind = 'caching-raid';
      tools = ['ssacli'];
    } else if (/Adaptec|AAC-RAID/i.test(line)) {
      kind = 'caching-raid';
      tools = ['arcconf'];
    } else if (/Fusion-MPT|SAS\d{4}/i.test(line)) {
      kind = 'hba';
    } else {
      continue;
    }
    out.push({ line: line.trim(), kind, tools });
  }
  return out;
}
