// The backends a set of changes needs, built from options saved with the plan (or the journal).
import type {
  ChangeExecutor,
  Executors,
  PreflightOptions,
  PreflightStep,
  UndoContext,
} from '../apply/executor.js';
import { CgroupFsExecutor } from '../cgroup/cgroupfs.js';
import type { Change } from '../model/plan.js';
import type { ExecutorOptions } from './plan.js';

const isV1 = (c: Change) => c.backend === 'cgroupfs' && c.hierarchy !== undefined;

/**
 * cgroup changes for the unified hierarchy and for v1 hierarchies (`hierarchy` set) share the
 * `cgroupfs` backend name, so the engine, journal and rollback treat them alike; each goes to its own
 * executor here.
 */
class CgroupRouter implements ChangeExecutor {
  constructor(
    private readonly v2: ChangeExecutor,
    private readonly v1: ChangeExecutor | null,
    private readonly usesV2: boolean,
  ) {}
  private of(c: Change): ChangeExecutor {
    if (!isV1(c)) return this.v2;
    if (!this.v1) throw new Error('cgroup v1 change without the v1 executor');
    return this.v1;
  }
  async ready(): Promise<void> {
    if (this.usesV2) await this.v2.ready?.();
    if (this.v1) await this.v1.ready?.();
  }
  async preflight(steps: PreflightStep[], opts: PreflightOptions): Promise<void> {
    await this.v2.preflight?.(
      steps.filter((s) => !isV1(s.change)),
      opts,
    );
    await this.v1?.preflight?.(
      steps.filter((s) => isV1(s.change)),
      opts,
    );
  }
  read(c: Change) {
    return this.of(c).read(c);
  }
  satisfied(c: Change, live: string | null) {
    return this.of(c).satisfied(c, live);
  }
  same(c: Change, a: string | null, b: string | null) {
    return this.of(c).same(c, a, b);
  }
  createdBy(c: Change, creator: Change) {
    if (isV1(c) !== isV1(creator)) return false;
    return this.of(c).createdBy?.(c, creator) ?? false;
  }
  apply(c: Change, previous: string | null) {
    return this.of(c).apply(c, previous);
  }
  undo(c: Change, previous: string | null, ctx: UndoContext) {
    return this.of(c).undo(c, previous, ctx);
  }
}

export async function executorsFor(
  root: string,
  changes: readonly Change[],
  options: ExecutorOptions,
): Promise<Executors> {
  const v2 = new CgroupFsExecutor(root);
  let cgroupfs: ChangeExecutor = v2;
  if (changes.some(isV1)) {
    const { CgroupV1Executor } = await import('../cgroupv1/executor.js');
    cgroupfs = new CgroupRouter(
      v2,
      new CgroupV1Executor(root),
      changes.some((c) => c.backend === 'cgroupfs' && !isV1(c)),
    );
  }
  const execs: Executors = { cgroupfs };
  if (changes.some((c) => c.backend === 'systemd')) {
    const { SystemdExecutor } = await import('../systemd/executor.js');
    execs.systemd = new SystemdExecutor(root);
  }
  if (changes.some((c) => c.backend === 'irq')) {
    const { IrqExecutor } = await import('../irq/executor.js');
    execs.irq = new IrqExecutor(root);
  }
  if (changes.some((c) => c.backend === 'raid')) {
    // Loaded only when a plan has RAID changes: vendor-tool code is not needed otherwise.
    const { raidExecutor } = await import('../raid/executor.js');
    execs.raid = raidExecutor({ root, ...(options.raid ?? {}) });
  }
  return execs;
}
