import type { Command } from 'commander';

/** `isolate raid ...` commands. Owned by the RAID work (issue 4). */
export function registerRaid(_program: Command): void {}
