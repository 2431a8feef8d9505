// Adapts src/raid's applyRaidChange / inverseRaidChange to the apply engine's ChangeExecutor, so
// RAID changes are journaled, ordered and rolled back with the cgroup writes.
import type { ChangeExecutor } from '../apply/executor.js';
import type { Change } from '../model/plan.js';
import type { RaidTool } from '../model/raid.js';
import { type ApplyOptions, applyRaidChange, inverseRaidChange, readRaidSetting } from './apply.js';

/** How RAID changes are carried out; saved in the plan so `apply --plan` and `rollback` agree with `plan`. */
export interface RaidExecutorOptions {
  root: string;
  timeoutMs?: number;
  /** `--tool-path` / ISOLATE_RAID_TOOL_PATH, as `raid show` takes them. */
  toolPaths?: Partial<Record<RaidTool, string>>;
}

export function raidExecutor(opts: RaidExecutorOptions): ChangeExecutor {
  const applyOpts: ApplyOptions = {
    root: opts.root,
    timeoutMs: opts.timeoutMs,
    toolPaths: opts.toolPaths,
  };
  return {
    read: (change: Change) => readRaidSetting(change, applyOpts),
    satisfied: (change: Change, live: string | null) => live === change.to,
    same: (_change: Change, a: string | null, b: string | null) => a === b,
    async apply(change: Change) {
      await applyRaidChange(change, applyOpts);
      return {};
    },
    async undo(change: Change, previous: string | null) {
      // A change whose write never happened (crash before it) is already at its previous value:
      // applyRaidChange returns at once when the setting already reads as wanted.
      const inverse = inverseRaidChange({ ...change, from: previous ?? change.from });
      await applyRaidChange(inverse, applyOpts);
      return {};
    },
  };
}
