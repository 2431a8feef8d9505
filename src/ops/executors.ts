// The backends a set of changes needs, built from options saved with the plan (or the journal).
import type { Executors } from '../apply/executor.js';
import { CgroupFsExecutor } from '../cgroup/cgroupfs.js';
import type { Change } from '../model/plan.js';
import type { ExecutorOptions } from './plan.js';

export async function executorsFor(
  root: string,
  changes: readonly Change[],
  options: ExecutorOptions,
): Promise<Executors> {
  const execs: Executors = { cgroupfs: new CgroupFsExecutor(root) };
  if (changes.some((c) => c.backend === 'systemd')) {
    const { SystemdExecutor } = await import('../systemd/executor.js');
    execs.systemd = new SystemdExecutor(root);
  }
  if (changes.some((c) => c.backend === 'raid')) {
    // Loaded only when a plan has RAID changes: vendor-tool code is not needed otherwise.
    const { raidExecutor } = await import('../raid/executor.js');
    execs.raid = raidExecutor({ root, ...(options.raid ?? {}) });
  }
  return execs;
}
