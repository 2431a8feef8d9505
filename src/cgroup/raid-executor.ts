// Adapts src/raid's applyRaidChange / inverseRaidChange to the apply engine's ChangeExecutor, so
// RAID changes are journaled, ordered and rolled back with the cgroup writes.
import type { Change } from '../planner/types.js';
import type { ChangeExecutor } from './cgroupfs.js';

export interface RaidExecutorOptions {
  root: string;
  allowWithoutBattery?: boolean;
  timeoutMs?: number;
}

export async function raidExecutor(opts: RaidExecutorOptions): Promise<ChangeExecutor> {
  const { applyRaidChange, inverseRaidChange } = await import('../raid/apply.js');
  const applyOpts = {
    root: opts.root,
    ...(opts.allowWithoutBattery !== undefined ? { allowWithoutBattery: opts.allowWithoutBattery } : {}),
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
  };
  return {
    // applyRaidChange re-reads the controller itself (and is idempotent): the plan's value stands in.
    async read(change: Change) {
      return change.from;
    },
    satisfied() {
      return false;
    },
    same(_change: Change, a: string | null, b: string | null) {
      return a === b;
    },
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
