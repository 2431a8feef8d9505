// What the kernel refuses on an undo (EIO on a managed vector, an IRQ gone) is a note, never a wedge:
// the rollback completes, a journal a rollback already left in rollback-failed gets through, and later
// applies are not blocked. The kernel's answer to a write is injected at the one kernel-file writer
// (src/sys/write.ts), everything else is the real engine on the qemu-2s-smt2 fixture tree.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

/** Kernel file → the errno its next writes fail with. */
const refuse = new Map<string, string>();

vi.mock('../../src/sys/write.js', async (original) => {
  const real = await original<typeof import('../../src/sys/write.js')>();
  return {
    ...real,
    writeKernelFile: async (file: string, data: Buffer) => {
      const code = refuse.get(file);
      if (code) throw Object.assign(new Error(`${code}: write ${file}`), { code });
      return real.writeKernelFile(file, data);
    },
  };
});

const { applyChanges, rollbackLast } = await import('../../src/apply/engine.js');
const { readJournal, writeJournal } = await import('../../src/apply/journal.js');
const { IrqExecutor } = await import('../../src/irq/executor.js');
const { observeIrqs } = await import('../../src/irq/observe.js');
const { executorsFor } = await import('../../src/ops/executors.js');
const { planHost } = await import('../../src/planner/plan.js');
const { parsePolicy } = await import('../../src/policy/load.js');
const { readTopology } = await import('../../src/topology/read.js');
const { quietCoresHost } = await import('../support/irq-host.js');
const { freshHost } = await import('../support/observed.js');
type Change = import('../../src/model/plan.js').Change;

afterEach(() => refuse.clear());

const POLICY = parsePolicy(
  `apiVersion: isolate/v1
kind: HostPolicy
quiet: { irqs: true }
workloads:
  - { name: kafka, class: exclusive, cores: 1, near: [nic:eth0], match: { cgroup: /kafka } }
  - { name: yarn, class: batch, match: { cgroup: /hadoop-yarn } }
`,
  'test.yaml',
);

function irqPlan(root: string): Change[] {
  const observed = freshHost();
  observed.irqs = observeIrqs(root);
  return planHost(readTopology(root), POLICY, observed).changes.filter((c) => c.backend === 'irq');
}

const affinity = (root: string, irq: number) =>
  readFileSync(path.join(root, `proc/irq/${irq}/smp_affinity_list`), 'utf8').trim();

/** Applied, then IRQ 36's number became a kernel-managed vector's: every write to it now fails EIO. */
async function appliedThenManaged(root: string) {
  const changes = irqPlan(root);
  const executors = await executorsFor(root, changes, {});
  await applyChanges({ root, changes, executors });
  refuse.set(path.join(root, 'proc/irq/36/smp_affinity_list'), 'EIO');
  return { changes, executors };
}

describe('a kernel refusal on undo', () => {
  it('EIO is a note naming the IRQ and the reason; the rollback completes and the rest is restored', async () => {
    const root = quietCoresHost();
    const { changes, executors } = await appliedThenManaged(root);
    const back = await rollbackLast({ root, executors });
    expect(back.notes.find((n) => n.includes('/proc/irq/36'))).toMatch(
      /^undo \/proc\/irq\/36 smp_affinity_list: writing "4-7" to .* failed: EIO \(the kernel does not let user space move this IRQ: it is kernel-managed.*\); not restored, and not tried again$/,
    );
    expect(affinity(root, 37)).toBe(changes.find((c) => c.target === '/proc/irq/37')!.from);
    expect((await readJournal(root))?.state).toBe('rolled-back');
    expect(await rollbackLast({ root, executors })).toMatchObject({ nothing: true });
  });

  it('a journal a rollback left in rollback-failed over such an entry gets through, and the next apply is not blocked', async () => {
    const root = quietCoresHost();
    const { executors } = await appliedThenManaged(root);
    // What today's release leaves after the EIO: the journal stuck in rollback-failed.
    const j = (await readJournal(root))!;
    j.state = 'rollback-failed';
    await writeJournal(root, j);
    const back = await rollbackLast({ root, executors });
    expect(back.notes.some((n) => n.includes('/proc/irq/36') && n.includes('EIO'))).toBe(true);
    expect((await readJournal(root))?.state).toBe('rolled-back');
    // An apply after it finds nothing left to finish and applies.
    const again = irqPlan(root).filter((c) => c.target !== '/proc/irq/36');
    const r = await applyChanges({ root, changes: again, executors: await executorsFor(root, again, {}) });
    expect(r.changed).toBe(again.length);
  });

  it('an IRQ whose file vanishes during the undo (ENOENT) is a note too', async () => {
    const root = quietCoresHost();
    const { executors } = await appliedThenManaged(root);
    refuse.set(path.join(root, 'proc/irq/36/smp_affinity_list'), 'ENOENT');
    const back = await rollbackLast({ root, executors });
    expect(back.notes.some((n) => n.includes('/proc/irq/36') && n.includes('ENOENT'))).toBe(true);
    expect((await readJournal(root))?.state).toBe('rolled-back');
  });

  it('EACCES stays a failure to fix (isolate not root): the journal keeps the entry for the next rollback', async () => {
    const root = quietCoresHost();
    const { executors } = await appliedThenManaged(root);
    refuse.set(path.join(root, 'proc/irq/36/smp_affinity_list'), 'EACCES');
    await expect(rollbackLast({ root, executors })).rejects.toThrow(/EACCES/);
    refuse.clear();
    await rollbackLast({ root, executors });
    expect(affinity(root, 36)).toBe('4-7');
  });
});

describe('EPERM on /proc/irq', () => {
  it('is explained as a read-only or hidden /proc/irq, not a missing CAP_NET_ADMIN', async () => {
    const root = quietCoresHost();
    const c = irqPlan(root).find((x) => x.target === '/proc/irq/36')!;
    refuse.set(path.join(root, 'proc/irq/36/smp_affinity_list'), 'EPERM');
    const err = await new IrqExecutor(root).apply(c, c.from).catch((e: Error) => e);
    expect(String(err)).toContain('EPERM (operation not permitted: /proc/irq is read-only or hidden');
    expect(String(err)).not.toContain('CAP_NET_ADMIN');
    // A NIC queue's mask is the one that needs CAP_NET_ADMIN.
    const rps = irqPlan(root).find((x) => x.setting === 'rps_cpus')!;
    refuse.set(path.join(root, rps.target.slice(1), 'rps_cpus'), 'EPERM');
    const err2 = await new IrqExecutor(root).apply(rps, rps.from).catch((e: Error) => e);
    expect(String(err2)).toContain('CAP_NET_ADMIN');
  });
});
