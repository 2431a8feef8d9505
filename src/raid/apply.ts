// Carries out one planned RAID change: re-read, re-check safety, issue the set, read the verdict,
// re-read and verify. Any doubt stops with a one-line UserError and nothing further is changed.
import { UserError } from '../model/errors.js';
import { type Change, RAID_SETTINGS, type RaidSetting } from '../model/plan.js';
import { currentValue, parseTarget, type RaidTarget, setCommands } from '../model/raid-commands.js';
import {
  DEFAULT_TIMEOUT_MS,
  describeCall,
  runTool,
  ToolCallError,
  type ToolResult,
  vendorWorkDir,
} from './exec.js';
import type { LogicalDrive, RaidController, RaidTool } from '../model/raid.js';
import { type ObserveOptions, readController } from './observe.js';
import { controllerBlock, writeBackVerdict } from '../model/raid-safety.js';
import { findTool } from './tools.js';

/** Exit code for RAID apply failures (a vendor tool refused, timed out, or did not take the change). */
export const RAID_APPLY_EXIT = 4;

export type ApplyOptions = ObserveOptions;

export async function applyRaidChange(change: Change, opts: ApplyOptions): Promise<void> {
  const t = checkedTarget(change);
  const setting = change.setting as RaidSetting;
  const bin = await findTool(t.tool, opts.root, opts.toolPaths);
  if (!bin) fail(`${change.target}: ${t.tool} is not installed under ${opts.root}; cannot change ${setting}`);
  const before = await reread(change, t, opts, 'before the change');
  const now = settingValue(before, t, setting);
  if (now === change.to) return; // Already there: apply is idempotent.
  if (now !== change.from) {
    fail(
      `${change.target}: ${setting} is ${now ?? 'unknown'} now, the plan expected ${change.from ?? 'unknown'}; re-run isolate plan`,
    );
  }
  // Going to write-through only lowers the risk (it is also what a rollback of write-back does), so a
  // learn cycle or charge does not hold it up; everything else waits for a quiet, known controller.
  const towardSafety = setting === 'writeCache' && change.to === 'write-through';
  const blocked = towardSafety
    ? (before.readOnlyReason ?? (before.mode === 'hba' ? 'HBA mode' : null))
    : controllerBlock(before);
  if (blocked) fail(`${change.target}: not changed: ${blocked}`);
  if (setting === 'writeCache' && change.to === 'write-back') {
    const verdict = writeBackVerdict(before);
    if (!verdict.safe) fail(`${change.target}: refusing to enable write-back: ${verdict.reasons.join('; ')}`);
  }
  const calls = setCommands(t, setting, change.to, { diskCacheByUsage: before.diskCacheByUsage ?? null });
  if (!calls) fail(`${change.target}: ${setting}=${change.to} cannot be set with ${t.tool}`);
  for (const args of calls) {
    let result: ToolResult;
    try {
      result = await runTool(bin, args, {
        timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        cwd: await vendorWorkDir(opts.root),
      });
    } catch (err) {
      if (err instanceof ToolCallError) {
        fail(
          `${change.target}: ${err.message}; the ${setting} state is unknown and nothing further was changed — check with isolate raid show`,
        );
      }
      throw err;
    }
    const refusal = refusalOf(t.tool, result);
    if (refusal) fail(`${change.target}: ${describeCall(bin, args)} failed: ${refusal}`);
  }
  const after = await reread(change, t, opts, 'after the change');
  const got = settingValue(after, t, setting);
  if (got !== change.to) {
    fail(
      `${change.target}: ${t.tool} reported success but ${setting} reads ${got ?? 'unknown'} afterwards, not ${change.to}`,
    );
  }
}

/**
 * What the controller reports for the change's setting right now — read from the tool, never taken
 * from the plan, so the journal records the controller's word.
 */
export async function readRaidSetting(change: Change, opts: ApplyOptions): Promise<string | null> {
  const t = checkedTarget(change);
  const bin = await findTool(t.tool, opts.root, opts.toolPaths);
  if (!bin)
    fail(`${change.target}: ${t.tool} is not installed under ${opts.root}; cannot read ${change.setting}`);
  const c = await reread(change, t, opts, 'before the change');
  return settingValue(c, t, change.setting as RaidSetting);
}

/**
 * The change that undoes `change`. Undoing a replaced always-write-back restores the
 * self-protecting write-back: isolate never issues AWB/CachedBadBBU/nbwc/wb.
 */
export function inverseRaidChange(change: Change): Change {
  checkedTarget(change);
  if (change.from === null) {
    fail(`${change.target}: cannot undo ${change.setting}: its value before the change was not known`);
  }
  if (change.setting === 'writeCache' && change.from === 'always-write-back') {
    return {
      ...change,
      from: change.to,
      to: 'write-back',
      note: 'rollback restores self-protecting write-back; isolate never sets always-write-back',
    };
  }
  return {
    ...change,
    from: change.to,
    to: change.from,
    note: `rollback of ${change.setting} ${change.from} → ${change.to}`,
  };
}

function checkedTarget(change: Change): RaidTarget {
  if (change.backend !== 'raid') fail(`${change.target}: not a RAID change (backend ${change.backend})`);
  const t = parseTarget(change.target);
  if (!t)
    fail(
      `${change.target}: not a RAID target (expected e.g. storcli:/c0/v0, megacli:/a0/l0, ssacli:slot=0/ld1, arcconf:1/ld0)`,
    );
  if (!RAID_SETTINGS.includes(change.setting as RaidSetting)) {
    fail(
      `${change.target}: unknown RAID setting "${change.setting}"; expected one of ${RAID_SETTINGS.join(', ')}`,
    );
  }
  return t;
}

async function reread(
  change: Change,
  t: RaidTarget,
  opts: ApplyOptions,
  when: string,
): Promise<RaidController> {
  try {
    const { controller } = await readController(t.tool, t.controller, opts);
    if (!controller) fail(`${change.target}: controller not found when reading it ${when}`);
    return controller;
  } catch (err) {
    if (err instanceof ToolCallError) {
      fail(
        `${change.target}: reading it ${when}: ${err.message}; nothing further was changed — check with isolate raid show`,
      );
    }
    throw err;
  }
}

function settingValue(c: RaidController, t: RaidTarget, setting: RaidSetting): string | null {
  if (t.drive === null) {
    // Controller-wide setting (ssacli drive write cache): every drive shows the same value.
    const values = new Set(c.logicalDrives.map((d) => currentValue(c.tool, d, setting)));
    return values.size === 1 ? ([...values][0] ?? null) : null;
  }
  const d: LogicalDrive | undefined = c.logicalDrives.find((x) => parseTarget(x.target)?.drive === t.drive);
  return d ? currentValue(c.tool, d, setting) : null;
}

/**
 * Each tool's own verdict; the exit status alone lies (raid-cli.md §3.5: storcli prints
 * `Status = Failure` with $? 0; §4: MegaCli prints "Exit Code: 0xNN").
 */
export function refusalOf(tool: RaidTool, r: ToolResult): string | null {
  const out = r.stdout;
  switch (tool) {
    case 'storcli':
    case 'perccli': {
      let doc: unknown;
      try {
        doc = JSON.parse(out);
      } catch {
        return `output is not JSON (exit ${r.exitCode})`;
      }
      const status = (doc as { Controllers?: { 'Command Status'?: Record<string, unknown> }[] })
        .Controllers?.[0]?.['Command Status'];
      if (!status) return 'no "Command Status" in the output';
      if (status.Status === 'Success') return null;
      const details = Array.isArray(status['Detailed Status'])
        ? (status['Detailed Status'] as Record<string, unknown>[])
        : [];
      const msgs = details.map((d) => String(d.ErrMsg ?? d.Status ?? '')).filter(Boolean);
      return `${String(status.Description ?? 'Failure')}${msgs.length ? `: ${msgs.join('; ')}` : ''}`;
    }
    case 'megacli': {
      const code = /Exit Code:\s*(0x[0-9A-Fa-f]+)/.exec(out)?.[1];
      if (code === '0x00') return null;
      return `${firstMeaningful(out)} (Exit Code ${code ?? `not printed, exit ${r.exitCode}`})`;
    }
    case 'ssacli': {
      const err = /^Error:\s*(.*)$/m.exec(out)?.[1] ?? /^Error:\s*(.*)$/m.exec(r.stderr)?.[1];
      if (err) return err;
      return r.exitCode === 0 ? null : `exit ${r.exitCode}: ${firstMeaningful(out + r.stderr)}`;
    }
    case 'arcconf':
      return /Command completed successfully\./.test(out) ? null : firstMeaningful(out + r.stderr);
    default:
      return `${tool} set commands are not supported`;
  }
}

function firstMeaningful(text: string): string {
  return (
    text
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l !== '' && !/^Exit Code/.test(l)) ?? '(no output)'
  );
}

function fail(message: string): never {
  throw new UserError(message, RAID_APPLY_EXIT);
}
