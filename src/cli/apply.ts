import type { Command } from 'commander';

/** `isolate apply`, `rollback`, `check`. Owned by the cgroup work (issue 3). */
export function registerApply(_program: Command): void {}
