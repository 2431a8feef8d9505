// IRQ numbers and NIC names are not identities: a driver reload, controller reset, `ethtool -L`,
// hot-plug or reboot hands them to another device. Each IRQ and NIC-queue change carries the owner
// seen at plan time; a write goes only to it, and an undo restores only while it still holds the
// number or name (else a note names old and new owner). On the qemu-2s-smt2 fixture tree.
import { mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyChanges, rollbackLast } from '../../src/apply/engine.js';
import { readJournal } from '../../src/apply/journal.js';
import { observeIrqs } from '../../src/irq/observe.js';
import { isNicName } from '../../src/model/irq.js';
import type { Change } from '../../src/model/plan.js';
import { change as changeShape } from '../../src/model/shape.js';
import { executorsFor } from '../../src/ops/executors.js';
import { planHost } from '../../src/planner/plan.js';
import { parsePolicy } from '../../src/policy/load.js';
import { readTopology } from '../../src/topology/read.js';
import { quietCoresHost } from '../support/irq-host.js';
import { freshHost } from '../support/observed.js';

const POLICY = parsePolicy(
  `apiVersion: isolate/v1
kind: HostPolicy
strict: true
quiet: { irqs: true }
workloads:
  - { name: kafka, class: exclusive, cores: 1, near: [nic:eth0], match: { cgroup: /kafka } }
  - { name: yarn, class: batch, match: { cgroup: /hadoop-yarn } }
`,
  'test.yaml',
);

function irqPlan(root: string): { changes: Change[]; warnings: string[] } {
  const observed = freshHost();
  observed.irqs = observeIrqs(root);
  const plan = planHost(readTopology(root), POLICY, observed);
  return { changes: plan.changes.filter((c) => c.backend === 'irq'), warnings: plan.warnings };
}

async function applyPlan(root: string, changes: Change[]) {
  return applyChanges({ root, changes, executors: await executorsFor(root, changes, {}) });
}

const read = (root: string, file: string) => readFileSync(path.join(root, file), 'utf8').trim();

/** IRQ 36 (virtio2-input.1 of eth0's function 0000:05:04.0) given to the NVMe controller's new queue. */
function renumber36(root: string): void {
  const f = path.join(root, 'proc/interrupts');
  writeFileSync(
    f,
    readFileSync(f, 'utf8').replace(
      /( 36:.*)PCI-MSI 2623491-edge\s+virtio2-input\.1/,
      '$1PCI-MSI 2625541-edge      nvme0q5',
    ),
  );
  const pci = path.join(root, 'sys/bus/pci/devices');
  rmSync(path.join(pci, '0000:05:04.0/msi_irqs/36'));
  writeFileSync(path.join(pci, '0000:05:05.0/msi_irqs/36'), '');
}

/** eth1 is now another NIC: the same name on PCI function 0000:00:06.0 (a reboot named them anew). */
function eth1ElsewhereOnPci(root: string): void {
  const bus = path.join(root, 'sys/devices/pci0000:00');
  renameSync(path.join(bus, '0000:00:05.0'), path.join(bus, '0000:00:06.0'));
  const dev = path.join(bus, '0000:00:06.0/net/eth1/device');
  rmSync(dev);
  symlinkSync('../../../0000:00:06.0', dev);
  const link = path.join(root, 'sys/class/net/eth1');
  rmSync(link);
  symlinkSync('../../devices/pci0000:00/0000:00:06.0/net/eth1', link);
}

describe('an IRQ number another device has since the apply', () => {
  it('is not restored: the rollback notes old and new owner, exits clean, and a second rollback has nothing to do', async () => {
    const root = quietCoresHost();
    const { changes } = irqPlan(root);
    const c36 = changes.find((c) => c.target === '/proc/irq/36')!;
    expect(c36.backend === 'irq' && c36.owner).toEqual({
      actions: ['virtio2-input.1'],
      chip: 'PCI-MSI 2623491-edge',
      pci: '0000:05:04.0',
    });
    await applyPlan(root, changes);
    const written = read(root, 'proc/irq/36/smp_affinity_list');
    expect(written).toBe(c36.to);
    renumber36(root);
    const executors = await executorsFor(root, changes, {});
    const back = await rollbackLast({ root, executors });
    expect(back.notes).toContainEqual(
      'IRQ 36 is no longer the one isolate changed: it was virtio2-input.1 (PCI-MSI 2623491-edge, PCI 0000:05:04.0), now nvme0q5 (PCI-MSI 2625541-edge, PCI 0000:05:05.0) (a driver reload, controller reset, ethtool -L, hot-plug or reboot renumbers IRQs); "4-7" was not restored to it',
    );
    // The NVMe queue keeps its own affinity; every other IRQ is restored.
    expect(read(root, 'proc/irq/36/smp_affinity_list')).toBe(written);
    expect(read(root, 'proc/irq/37/smp_affinity_list')).toBe(
      changes.find((c) => c.target === '/proc/irq/37')!.from,
    );
    expect((await readJournal(root))?.state).toBe('rolled-back');
    expect(await rollbackLast({ root, executors })).toMatchObject({ nothing: true, undone: 0 });
  });

  it('is not written by a plan made before it changed hands: the step is skipped, naming both owners', async () => {
    const root = quietCoresHost();
    const { changes } = irqPlan(root);
    const before = read(root, 'proc/irq/36/smp_affinity_list');
    renumber36(root);
    const r = await applyPlan(root, changes);
    const step = r.steps.find((s) => s.change.target === '/proc/irq/36')!;
    expect(step.status).toBe('skipped');
    expect(step.note).toBe(
      'IRQ 36 is not the one the plan was made for: planned for virtio2-input.1 (PCI-MSI 2623491-edge, PCI 0000:05:04.0), now nvme0q5 (PCI-MSI 2625541-edge, PCI 0000:05:05.0); not written (the next plan places it)',
    );
    expect(read(root, 'proc/irq/36/smp_affinity_list')).toBe(before);
    expect(r.steps.find((s) => s.change.target === '/proc/irq/37')!.status).toBe('applied');
  });
});

describe('a NIC name another NIC has since the apply', () => {
  it("is not given the old NIC's RPS mask back: the note names both PCI functions", async () => {
    const root = quietCoresHost();
    const { changes } = irqPlan(root);
    const rps = changes.find((c) => c.target === '/sys/class/net/eth1/queues/rx-0')!;
    expect(rps.backend === 'irq' && rps.owner).toEqual({ pci: '0000:00:05.0' });
    await applyPlan(root, changes);
    eth1ElsewhereOnPci(root);
    const back = await rollbackLast({ root, executors: await executorsFor(root, changes, {}) });
    expect(back.notes).toContainEqual(
      `NIC eth1's rx-0 is no longer the one isolate changed: it was PCI 0000:00:05.0, now PCI 0000:00:06.0 (interfaces are named anew by a reboot, hot-plug or udev); "${rps.from}" was not restored to it`,
    );
    expect(read(root, 'sys/class/net/eth1/queues/rx-0/rps_cpus')).toBe(rps.to);
    expect((await readJournal(root))?.state).toBe('rolled-back');
  });

  it('a saved plan or journal whose owner is malformed is refused, naming the field', () => {
    const c = {
      backend: 'irq',
      target: '/proc/irq/36',
      setting: 'smp_affinity_list',
      from: '4-7',
      to: '4-5',
      owner: { actions: ['virtio2-input.1'], chip: 'PCI-MSI 2623491-edge', pci: '0000:05:04.0' },
    };
    expect(changeShape(c, 'c')).toBeNull();
    expect(changeShape({ ...c, owner: { ...c.owner, pci: '../../etc' } }, 'c')).toContain(
      'c.owner.pci: "../../etc" is not a PCI address',
    );
    expect(changeShape({ ...c, owner: { ...c.owner, extra: 1 } }, 'c')).toContain('c.owner');
  });
});

describe('NIC names the kernel allows', () => {
  it('are checked as the kernel does: bytes, not UTF-16 units; no "/", ":", NUL or whitespace', () => {
    for (const ok of ['eth0', 'ethü', 'wlan-ü.1', 'a@b', 'x'.repeat(15), `${'ü'.repeat(7)}x`]) {
      expect(isNicName(ok), ok).toBe(true);
    }
    // 'ü' is two bytes: 8 of them are 16, over IFNAMSIZ less its NUL.
    for (const bad of [
      '',
      '.',
      '..',
      'a/b',
      'a:b',
      'a b',
      'a\tb',
      'a\0b',
      'ü'.repeat(8),
      'x'.repeat(16),
      '\ud800',
    ]) {
      expect(isNicName(bad), JSON.stringify(bad)).toBe(false);
    }
  });

  it('a policy may name one (near: nic:ethü, irqs.nics), and a name the kernel refuses is refused', () => {
    const policy = (nic: string) =>
      `apiVersion: isolate/v1\nkind: HostPolicy\nworkloads:\n  - { name: kafka, class: exclusive, cores: 1, near: ["nic:${nic}"], irqs: { nics: ["${nic}"] }, match: { cgroup: /kafka } }\n`;
    const p = parsePolicy(policy('ethü'), 'p.yaml');
    expect(p.workloads[0]!.near).toEqual([{ kind: 'nic', name: 'ethü' }]);
    expect(p.workloads[0]!.irqs?.nics).toEqual(['ethü']);
    expect(() => parsePolicy(policy('eth 0'), 'p.yaml')).toThrow(/expected nic:NAME/);
  });

  it('a UTF-8 name (ethü): its RPS leaves the exclusive CPUs and rollback restores it', async () => {
    const root = quietCoresHost();
    const bus = path.join(root, 'sys/devices/pci0000:00/0000:00:05.0/net');
    renameSync(path.join(bus, 'eth1'), path.join(bus, 'ethü'));
    rmSync(path.join(root, 'sys/class/net/eth1'));
    symlinkSync('../../devices/pci0000:00/0000:00:05.0/net/ethü', path.join(root, 'sys/class/net/ethü'));
    const { changes, warnings } = irqPlan(root);
    expect(warnings.join('\n')).not.toContain('could not be read');
    const rps = changes.find((c) => c.target === '/sys/class/net/ethü/queues/rx-0')!;
    expect([rps.from, rps.to]).toEqual(['f0', '30']);
    expect(changeShape(rps, 'c')).toBeNull();
    await applyPlan(root, changes);
    expect(read(root, 'sys/class/net/ethü/queues/rx-0/rps_cpus')).toBe('30');
    await rollbackLast({ root, executors: await executorsFor(root, changes, {}) });
    expect(read(root, 'sys/class/net/ethü/queues/rx-0/rps_cpus')).toBe('f0');
  });

  it('a name that is not UTF-8 is named in the warning (escaped), its masks left alone', () => {
    const root = quietCoresHost();
    const dir = Buffer.concat([Buffer.from(path.join(root, 'sys/class/net/eth')), Buffer.from([0xff])]);
    mkdirSync(dir);
    const { warnings } = irqPlan(root);
    expect(warnings.find((w) => w.includes('could not be read'))).toContain(
      `NIC "eth\u00ff": its name is not UTF-8, which isolate's plans and journals cannot hold; its RPS/XPS masks are left as they are`,
    );
  });
});
