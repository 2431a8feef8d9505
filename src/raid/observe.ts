// Detect controllers and read them all: the RaidObservation that `raid show`, `raid check` and the
// planner work from.
import { DRIVER_TOOLS, HBA_DRIVERS, mdArrays, scsiHosts } from './detect.js';
import { DEFAULT_TIMEOUT_MS, ToolCallError, vendorWorkDir } from './exec.js';
import { LIVE_READERS } from './live.js';
import type { Finding, RaidController, RaidObservation, RaidTool } from '../model/raid.js';
import { assess } from '../model/raid-safety.js';
import { findTool, TOOL_ADVICE, TOOL_PATHS } from './tools.js';

export interface ObserveOptions {
  root: string;
  /** Hard timeout per vendor call (default 60 s). */
  timeoutMs?: number;
  /** `--tool-path` overrides, absolute paths. */
  toolPaths?: Partial<Record<RaidTool, string>>;
}

export async function observeRaid(opts: ObserveOptions): Promise<RaidObservation> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const [hostAdapters, md] = await Promise.all([scsiHosts(opts.root), mdArrays(opts.root)]);
  const findings: Finding[] = [];
  const controllers: RaidController[] = [];
  for (const a of md) {
    findings.push({
      severity: 'info',
      message: `software RAID ${a.name} (${a.level ?? 'md'}${a.degraded ? ', degraded' : ''}${a.operation ? `, ${a.operation} running` : ''}): no controller cache`,
    });
  }
  const drivers = new Map<string, string[]>();
  for (const h of hostAdapters) {
    if (HBA_DRIVERS.has(h.procName)) {
      findings.push({ severity: 'info', message: `${h.host}: ${h.procName} HBA, no controller cache` });
    } else if (DRIVER_TOOLS[h.procName]) {
      drivers.set(h.procName, [...(drivers.get(h.procName) ?? []), h.host]);
    }
  }
  const ran = new Set<RaidTool>();
  for (const [driver, hosts] of drivers) {
    const candidates = DRIVER_TOOLS[driver] ?? [];
    let seen = false;
    let installed = 0;
    for (const tool of candidates) {
      // smartpqi cards answer to one of two CLIs, so keep asking; megaraid_sas stops at the first that sees one.
      if (seen && driver !== 'smartpqi') break;
      const bin = await findTool(tool, opts.root, opts.toolPaths);
      if (!bin) continue;
      installed++;
      if (ran.has(tool)) {
        seen ||= controllers.some((c) => c.tool === tool);
        continue;
      }
      ran.add(tool);
      try {
        const out = await LIVE_READERS[tool](
          { bin, timeoutMs, cwd: await vendorWorkDir(opts.root) },
          undefined,
        );
        controllers.push(...out.controllers);
        findings.push(...out.findings);
        if (out.controllers.length > 0) seen = true;
      } catch (err) {
        if (!(err instanceof ToolCallError)) throw err;
        findings.push({
          severity: 'unknown',
          message: `${err.message}; controllers behind ${tool} unknown, nothing will be changed`,
        });
        seen = true;
      }
    }
    if (installed === 0) {
      const names = candidates.map((t) => TOOL_ADVICE[t]).join(' or ');
      findings.push({
        severity: 'warning',
        message: `${hosts.join(', ')}: ${driver} RAID controller but no ${candidates.join('/')} installed (looked in ${candidates
          .flatMap((t) => TOOL_PATHS[t])
          .slice(0, 3)
          .join(', ')}, ...): install ${names} to manage its cache`,
      });
    } else if (!seen) {
      findings.push({
        severity: 'warning',
        message: `${hosts.join(', ')}: ${driver} RAID controller but ${candidates.join('/')} found no controller`,
      });
    }
  }
  if (hostAdapters.length === 0 && md.length === 0) {
    findings.push({
      severity: 'info',
      message: `no SCSI hosts in ${opts.root.replace(/\/$/, '')}/sys/class/scsi_host and no md arrays: no RAID controller`,
    });
  }
  for (const c of controllers) assess(c);
  return { controllers, findings, mdArrays: md, hostAdapters };
}

/** Re-read one controller (after a set, before a set). Throws ToolCallError on timeout. */
export async function readController(
  tool: RaidTool,
  address: string,
  opts: ObserveOptions,
): Promise<{ controller: RaidController | null; findings: Finding[] }> {
  const bin = await findTool(tool, opts.root, opts.toolPaths);
  if (!bin)
    return {
      controller: null,
      findings: [{ severity: 'warning', message: `${tool} is not installed under ${opts.root}` }],
    };
  const out = await LIVE_READERS[tool](
    { bin, timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, cwd: await vendorWorkDir(opts.root) },
    address,
  );
  const controller = out.controllers.find((c) => c.address === address) ?? null;
  if (controller) assess(controller);
  return { controller, findings: out.findings };
}
