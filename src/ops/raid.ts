// `raid show`, `raid check` and `raid parse` as functions.
import { checkVerdict } from '../audit/raid.js';
import { UserError } from '../model/errors.js';
import { ReadRefused, readBoundedBytes } from '../sys/read.js';
import type { Verdict } from '../model/finding.js';
import { PARSE_TOOLS, type ParsedOutput, type RaidObservation, type RaidTool } from '../model/raid.js';

export interface RaidCallOptions {
  root: string;
  timeoutMs: number;
  toolPaths: Partial<Record<RaidTool, string>>;
}

/**
 * `--timeout` and `--tool-path` (plus ISOLATE_RAID_TOOL_PATH="storcli=/p,ssacli=/q"), checked.
 * The same options serve `raid show`, `plan` and `apply`.
 */
export async function raidCallOptions(
  root: string,
  timeoutSeconds: string | undefined,
  toolPathArgs: readonly string[],
  env: string | undefined,
): Promise<RaidCallOptions> {
  const seconds = Number(timeoutSeconds ?? '60');
  if (!Number.isFinite(seconds) || seconds < 1 || seconds > 3600) {
    throw new UserError(`--timeout ${timeoutSeconds}: expected seconds from 1 to 3600`, 1);
  }
  return { root, timeoutMs: seconds * 1000, toolPaths: await toolPaths(toolPathArgs, env) };
}

/** Tool paths from `--tool-path` arguments and the environment variable's comma list. */
export async function toolPaths(
  args: readonly string[],
  env: string | undefined,
): Promise<Partial<Record<RaidTool, string>>> {
  const fromEnv = (env ?? '').split(',').filter((s) => s.trim() !== '');
  const { parseToolPaths } = await import('../raid/tools.js');
  try {
    return parseToolPaths([...fromEnv, ...args].map((v) => v.trim()));
  } catch (err) {
    throw new UserError((err as Error).message, 1);
  }
}

export async function raidShow(opts: RaidCallOptions): Promise<RaidObservation> {
  const { observeRaid } = await import('../raid/observe.js');
  return observeRaid(opts);
}

/** A monitoring check: a failure to observe is itself UNKNOWN (3), never a WARNING-looking exit 1. */
export async function raidCheck(
  opts: RaidCallOptions,
): Promise<{ verdict: Verdict; observation: RaidObservation }> {
  let observation: RaidObservation;
  try {
    observation = await raidShow(opts);
  } catch (err) {
    if (err instanceof UserError) throw new UserError(err.message, 3);
    throw err;
  }
  return { verdict: checkVerdict(observation), observation };
}

/** A saved vendor output of a large controller is a few hundred KiB. */
const SAVED_OUTPUT_MAX_BYTES = 16 * 1024 * 1024;

/** Offline audit of saved vendor outputs: runs nothing. */
export async function raidParse(
  tool: string,
  files: readonly string[],
): Promise<{ verdict: Verdict; parsed: ParsedOutput }> {
  if (!(PARSE_TOOLS as readonly string[]).includes(tool)) {
    throw new UserError(`raid parse: --tool ${tool}: expected one of ${PARSE_TOOLS.join(', ')}`, 1);
  }
  const outputs = [];
  for (const file of files) {
    try {
      // latin1: vendor tools print bytes, not always UTF-8; bounded and non-blocking like every input.
      outputs.push({
        text: readBoundedBytes(file, { maxBytes: SAVED_OUTPUT_MAX_BYTES }).toString('latin1'),
        source: file,
      });
    } catch (err) {
      const why = err instanceof ReadRefused ? err.reason : ((err as NodeJS.ErrnoException).code ?? 'error');
      throw new UserError(`raid parse: cannot read ${file} (${why}); give saved output files of ${tool}`, 1);
    }
  }
  const { parseSaved } = await import('../raid/offline.js');
  const parsed = parseSaved(tool as (typeof PARSE_TOOLS)[number], outputs);
  return { verdict: checkVerdict(parsed), parsed };
}
