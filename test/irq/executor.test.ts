// The IRQ backend through the real engine on a temporary --root (test/fixtures/irq over
// qemu-2s-smt2): apply writes each affinity and mask, verifies it (effective affinity included),
// journals the previous value; rollback puts back every byte; refusals are said, never skipped silently.
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApplyFailedError, applyChanges, rollbackLast } from '../../src/apply/engine.js';
import { StepError } from '../../src/apply/executor.js';
import { readJournal } from '../../src/apply/journal.js';
import { IrqExecutor, refusalOf } from '../../src/irq/executor.js';
import { observeIrqs } from '../../src/irq/observe.js';
import { change as changeShape } from '../../src/model/shape.js';
import type { Change } from '../../src/model/plan.js';
import { executorsFor } from '../../src/ops/executors.js';
import { planHost } from '../../src/planner/plan.js';
import { parsePolicy } from '../../src/policy/load.js';
import { readTopology } from '../../src/topology/read.js';
import { irqHost } from '../support/irq-host.js';
import { freshHost } from '../support/observed.js';

const POLICY = parsePolicy(
  `apiVersion: isolate/v1
kind: HostPolicy
strict: true
quiet: { irqs: true, workqueues: true }
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

/** Every file the backend may touch, byte for byte. */
function snapshot(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.set(path.relative(root, p), readFileSync(p, 'utf8'));
    }
  };
  for (const d of ['proc/irq', 'sys/devices']) walk(path.join(root, d));
  return out;
}

/** One more interrupt of IRQ `irq` on its first CPU, in the fixture's /proc/interrupts. */
function fire(root: string, irq: string): void {
  const f = path.join(root, 'proc/interrupts');
  const text = readFileSync(f, 'utf8');
  const next = text.replace(
    new RegExp(`^(\\s*${irq}:\\s+)(\\d+)`, 'm'),
    (_m, head, n) => `${head}${Number(n) + 1}`,
  );
  if (next === text) throw new Error(`no row for IRQ ${irq} in ${f}`);
  writeFileSync(f, next);
}

/** As a kernel shows IRQs that were never started: no effective affinity yet. */
function neverStarted(root: string): void {
  for (const n of readdirSync(path.join(root, 'proc/irq')).filter((n) => /^\d+$/.test(n))) {
    writeFileSync(path.join(root, 'proc/irq', n, 'effective_affinity_list'), '\n');
  }
}

const file = (root: string, c: Change) => path.join(root, c.target.slice(1), c.setting);

describe('IRQ backend through the engine', () => {
  it('applies every change, journals the previous values, and rollback restores every byte', async () => {
    const root = irqHost();
    neverStarted(root);
    const before = snapshot(root);
    const changes = irqPlan(root);
    expect(changes.length).toBe(25);
    const executors = await executorsFor(root, changes, {});
    expect(executors.irq).toBeInstanceOf(IrqExecutor);
    const r = await applyChanges({ root, changes, executors });
    expect(r.changed).toBe(25);
    for (const c of changes) expect(readFileSync(file(root, c), 'utf8')).toBe(c.to);
    expect(readFileSync(path.join(root, 'sys/devices/virtual/workqueue/cpumask'), 'utf8')).toBe('3f');
    // IRQs requested later start off Kafka's CPUs too.
    expect(readFileSync(path.join(root, 'proc/irq/default_smp_affinity'), 'utf8')).toBe('3f');
    // The journal passes its own schema with the new backend, and holds each exact previous value.
    const j = (await readJournal(root))!;
    expect(j.entries.length).toBe(25);
    const rps = j.entries.find((e) => e.change.target === '/sys/class/net/eth1/queues/rx-0')!;
    expect([rps.previous, rps.change.to]).toEqual(['f0', '30']);
    // Idempotent: a second plan has nothing to do.
    expect(irqPlan(root)).toEqual([]);
    const back = await rollbackLast({ root, executors });
    expect(back.undone).toBe(25);
    // Each file holds what it held, byte for byte (the kernel's own spelling: "0-7", "f0", "ff").
    const after = snapshot(root);
    for (const [k, v] of before) {
      const now = after.get(k);
      // The fixture's files end in "\n" as the kernel prints them; a write holds the value alone.
      expect(now?.trim(), k).toBe(v.trim());
    }
  });

  it('an affinity the kernel takes but does not deliver by fails the step, and the apply is undone', async () => {
    const root = irqHost();
    neverStarted(root);
    // IRQ 36 (eth0 input.1) still delivered on cpu7, Kafka's, after the write, and it fires three
    // times meanwhile: past what a move held pending behind an earlier move's cleanup waits for.
    writeFileSync(path.join(root, 'proc/irq/36/effective_affinity_list'), '7\n');
    const before = snapshot(root);
    const changes = irqPlan(root);
    const err = await applyChanges({
      root,
      changes,
      executors: await executorsFor(root, changes, {}),
      hooks: {
        beforeWrite: (_seq, _step, c) => {
          if (c.target === '/proc/irq/36')
            for (const ms of [30, 60, 90]) setTimeout(() => fire(root, '36'), ms);
        },
      },
    }).catch((e) => e);
    expect(err).toBeInstanceOf(ApplyFailedError);
    expect(err.message).toContain(
      '/proc/irq/36 smp_affinity_list: the kernel took "4-5" but the kernel delivers it on CPUs 7 (effective_affinity_list), outside 4-5',
    );
    expect(err.message).toContain('the host is as before');
    const after = snapshot(root);
    for (const [k, v] of before) expect(after.get(k)?.trim(), k).toBe(v.trim());
  });

  it('a deferred move the kernel makes at a later interrupt (an earlier move still being cleaned up) is applied', async () => {
    // As a cold CI run's quiet-cores guest showed: the IRQ fired after the write and stayed on its old
    // CPU (the kernel keeps the move pending on -EBUSY), then moved at a later interrupt.
    const root = irqHost();
    neverStarted(root);
    const effective = path.join(root, 'proc/irq/36/effective_affinity_list');
    writeFileSync(effective, '7\n');
    const changes = irqPlan(root);
    const r = await applyChanges({
      root,
      changes,
      executors: await executorsFor(root, changes, {}),
      hooks: {
        beforeWrite: (_seq, _step, c) => {
          if (c.target !== '/proc/irq/36') return;
          setTimeout(() => fire(root, '36'), 30);
          setTimeout(() => {
            fire(root, '36');
            writeFileSync(effective, '4\n');
          }, 400);
        },
      },
    });
    expect(r.changed).toBe(changes.length);
    expect(readFileSync(path.join(root, 'proc/irq/36/smp_affinity_list'), 'utf8')).toBe('4-5');
  });

  it('a move the kernel defers to the next interrupt (x86 without interrupt remapping) is applied', async () => {
    // As in the quiet-cores guest: the IRQ has not fired since the write, so effective_affinity_list
    // still names its old CPU; the kernel moves it when it next fires.
    const root = irqHost();
    neverStarted(root);
    writeFileSync(path.join(root, 'proc/irq/36/effective_affinity_list'), '7\n');
    const changes = irqPlan(root);
    const r = await applyChanges({ root, changes, executors: await executorsFor(root, changes, {}) });
    expect(r.changed).toBe(changes.length);
    expect(readFileSync(path.join(root, 'proc/irq/36/smp_affinity_list'), 'utf8')).toBe('4-5');
    // Written once: not taken for "not in force" and written again every round while it stays idle.
    const again = irqPlan(root);
    const r2 = await applyChanges({ root, changes: again, executors: await executorsFor(root, again, {}) });
    expect(r2.changed).toBe(0);
  });

  it('a legacy IO-APIC line whose move waits for its next interrupt (x86) is not a failure, nor planned again', async () => {
    const root = irqHost();
    neverStarted(root);
    // As a 6.1 guest showed: i8042 (IRQ 1, IO-APIC) took "0-5" and still names CPU 7 until it fires.
    writeFileSync(path.join(root, 'proc/irq/1/effective_affinity_list'), '7\n');
    const changes = irqPlan(root);
    const r = await applyChanges({ root, changes, executors: await executorsFor(root, changes, {}) });
    expect(r.changed).toBe(changes.length);
    expect(readFileSync(path.join(root, 'proc/irq/1/smp_affinity_list'), 'utf8')).toBe('0-5');
    const again = irqPlan(root);
    const r2 = await applyChanges({ root, changes: again, executors: await executorsFor(root, again, {}) });
    expect(r2.changed).toBe(0);
  });

  it('an IRQ freed since the plan is skipped with the reason, and the rest applies', async () => {
    const root = irqHost();
    neverStarted(root);
    const changes = irqPlan(root);
    rmSync(path.join(root, 'proc/irq/44'), { recursive: true });
    const r = await applyChanges({ root, changes, executors: await executorsFor(root, changes, {}) });
    const skipped = r.steps.filter((s) => s.status === 'skipped');
    expect(skipped.map((s) => [s.change.target, s.note])).toEqual([
      [
        '/proc/irq/44',
        '/proc/irq/44 it no longer exists (the driver was unloaded or the device removed since the plan)',
      ],
    ]);
    expect(r.changed).toBe(24);
  });

  it('a FIFO planted where a mask is expected is refused before any write', async () => {
    const root = irqHost();
    const exec = new IrqExecutor(root);
    const c: Change = {
      backend: 'irq',
      target: '/sys/class/net/eth1/queues/rx-0',
      setting: 'rps_cpus',
      from: 'f0',
      to: '30',
    };
    // A FIFO stands where the mask is: refused before any write, with the reason.
    rmSync(file(root, c));
    const { execFileSync } = await import('node:child_process');
    execFileSync('mkfifo', [file(root, c)]);
    await expect(exec.apply(c, 'f0')).rejects.toThrow(/refusing to write .*a FIFO, not a kernel file/);
    await expect(exec.read(c)).rejects.toThrow();
    expect(statSync(file(root, c)).isFIFO()).toBe(true);
  });

  it('undo restores the exact bytes of the previous value, not an equivalent spelling', async () => {
    const root = irqHost();
    const exec = new IrqExecutor(root);
    const wq: Change = {
      backend: 'irq',
      target: '/sys/devices/virtual/workqueue',
      setting: 'cpumask',
      from: '000000ff',
      to: '0000003f',
    };
    writeFileSync(file(root, wq), '000000ff\n');
    await exec.apply(wq, '000000ff');
    expect(exec.satisfied(wq, 'ff')).toBe(false);
    expect(exec.satisfied(wq, '3f')).toBe(true);
    await exec.undo(wq, '000000ff');
    expect(readFileSync(file(root, wq), 'utf8')).toBe('000000ff');
    // Already the previous value: nothing is written.
    const mtime = statSync(file(root, wq)).mtimeMs;
    await exec.undo(wq, '000000ff');
    expect(statSync(file(root, wq)).mtimeMs).toBe(mtime);
    // The file gone since (the queue or IRQ went away): said, nothing to restore.
    rmSync(file(root, wq));
    expect(await exec.undo(wq, '000000ff')).toEqual({
      note: '/sys/devices/virtual/workqueue it no longer exists (the driver was unloaded or the device removed since the plan); nothing to restore',
    });
  });

  it("a kernel-managed IRQ's EIO is a skip with the reason and the boot parameter, never a silent one", () => {
    const c: Change = {
      backend: 'irq',
      target: '/proc/irq/42',
      setting: 'smp_affinity_list',
      from: '6-7',
      to: '0-5',
    };
    const r = refusalOf(c, new StepError('write failed', 'EIO'));
    expect(r?.skipped).toMatch(
      /^the kernel refused to move IRQ 42 \(EIO\): .*kernel-managed.*isolcpus=managed_irq,/,
    );
    // EIO from a mask write is a failure like any other (the kernel has no managed RPS).
    expect(
      refusalOf(
        { ...c, target: '/sys/class/net/eth0/queues/rx-0', setting: 'rps_cpus' },
        new StepError('x', 'EIO'),
      ),
    ).toBeNull();
    expect(refusalOf(c, new StepError('x', 'EINVAL'))).toBeNull();
  });
});

describe('IRQ changes in saved plans and journals', () => {
  const ok: Change = {
    backend: 'irq',
    target: '/proc/irq/25',
    setting: 'smp_affinity_list',
    from: '0-7',
    to: '0-5',
  };
  it('takes the three kinds of target, each with its own setting', () => {
    expect(changeShape(ok, 'c')).toBeNull();
    expect(
      changeShape({ ...ok, target: '/sys/class/net/eth0/queues/tx-1', setting: 'xps_cpus' }, 'c'),
    ).toBeNull();
    expect(
      changeShape({ ...ok, target: '/sys/devices/virtual/workqueue', setting: 'cpumask' }, 'c'),
    ).toBeNull();
  });
  it.each([
    ['/proc/irq/../../etc', 'smp_affinity_list', 'c.target: "/proc/irq/../../etc" is not /proc/irq/N'],
    [
      '/sys/class/net/../queues/rx-0',
      'rps_cpus',
      'c.target: "/sys/class/net/../queues/rx-0" is not /sys/class/net/DEV/queues/QUEUE',
    ],
    ['/sys/class/net/eth0/queues/tx-0', 'rps_cpus', 'c.target: rps_cpus belongs to an rx queue, not tx-0'],
    ['/proc/irq/25', 'cpumask', 'c.target: "/proc/irq/25" is not /sys/devices/virtual/workqueue'],
    ['/proc/irq/25', 'smp_affinity', 'c.setting: "smp_affinity" is not one of'],
  ])('refuses %s %s', (target, setting, message) => {
    expect(changeShape({ ...ok, target, setting }, 'c')).toContain(message);
  });
});

describe('an IRQ the kernel refused at the last apply', () => {
  const policyFile = (root: string) => {
    const file = path.join(root, 'policy.yaml');
    writeFileSync(
      file,
      'apiVersion: isolate/v1\nkind: HostPolicy\nquiet: { irqs: true }\nworkloads:\n  - { name: kafka, class: exclusive, cores: 1, near: [nic:eth0], match: { cgroup: /kafka } }\n  - { name: yarn, class: batch, match: { cgroup: /hadoop-yarn } }\n',
      { mode: 0o600 },
    );
    return file;
  };
  async function refusedAt(root: string, note: string) {
    const { newJournal, writeJournal } = await import('../../src/apply/journal.js');
    const j = newJournal();
    j.state = 'applied';
    const c: Change = {
      backend: 'irq',
      target: '/proc/irq/36',
      setting: 'smp_affinity_list',
      from: '4-7',
      to: '4-5',
      note,
    };
    j.entries.push({
      seq: 1,
      change: c,
      previous: '4-7',
      status: 'skipped',
      note: refusalOf(c, new StepError('x', 'EIO'))!.skipped,
    });
    await writeJournal(root, j);
  }

  it('is reported, not retried every round, while the same handler holds the number', async () => {
    const { buildPlan } = await import('../../src/ops/plan.js');
    const root = irqHost();
    await refusedAt(
      root,
      "IRQ 36 (virtio2-input.1): eth0 serves kafka (near: nic:eth0): its queues go to node 1's housekeeping CPUs 4-5",
    );
    const { plan } = await buildPlan({ root, policyPath: policyFile(root), observeRaid: false });
    expect(plan.changes.some((c) => c.target === '/proc/irq/36')).toBe(false);
    expect(plan.changes.some((c) => c.target === '/proc/irq/37')).toBe(true);
    expect(plan.warnings.find((w) => w.includes('kernel-managed'))).toMatch(
      /36 \(virtio2-input\.1\).* are kernel-managed \(.*the last apply's write was refused: EIO/,
    );
  });

  it("the agent remembers a refusal after a later apply's journal no longer holds it", async () => {
    const { buildPlan } = await import('../../src/ops/plan.js');
    const { IrqMemo } = await import('../../src/irq/memo.js');
    const { newJournal, writeJournal } = await import('../../src/apply/journal.js');
    const root = irqHost();
    const irqs = new IrqMemo();
    await refusedAt(
      root,
      "IRQ 36 (virtio2-input.1): eth0 serves kafka (near: nic:eth0): its queues go to node 1's housekeeping CPUs 4-5",
    );
    const first = await buildPlan({
      root,
      policyPath: policyFile(root),
      observeRaid: false,
      cache: { irqs },
    });
    expect(first.plan.changes.some((c) => c.target === '/proc/irq/36')).toBe(false);
    // The next round applied something else: its journal holds no refusal.
    const j = newJournal();
    j.state = 'applied';
    await writeJournal(root, j);
    const next = await buildPlan({ root, policyPath: policyFile(root), observeRaid: false, cache: { irqs } });
    expect(next.plan.changes.some((c) => c.target === '/proc/irq/36')).toBe(false);
    // A one-shot command has no memory but the journal: it tries again.
    const once = await buildPlan({ root, policyPath: policyFile(root), observeRaid: false });
    expect(once.plan.changes.some((c) => c.target === '/proc/irq/36')).toBe(true);
  });

  it('is planned again once another device has the number (IRQ numbers are not stable)', async () => {
    const { buildPlan } = await import('../../src/ops/plan.js');
    const root = irqHost();
    await refusedAt(root, 'IRQ 36 (mlx5_comp3): off the exclusive CPUs 6-7');
    const { plan } = await buildPlan({ root, policyPath: policyFile(root), observeRaid: false });
    expect(plan.changes.find((c) => c.target === '/proc/irq/36')?.to).toBe('4-5');
  });
});
