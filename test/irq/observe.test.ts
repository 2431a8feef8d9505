// The IRQ observer over a real machine's shapes (test/fixtures/irq): names from /proc/interrupts,
// devices from the PCI functions' MSI vectors, managed vectors, NIC queues' masks, the workqueue
// mask; and untrusted input: what cannot be read is unknown and said, never taken for absent.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCounts, splitActions } from '../../src/irq/counts.js';
import { observeIrqs } from '../../src/irq/observe.js';
import { formatMask } from '../../src/model/cpuset.js';
import { parseCpusOrNull, sameMask } from '../../src/model/irq.js';
import { CpuSet } from '../../src/model/cpuset.js';
import { irqHost } from '../support/irq-host.js';

const byIrq = (root: string) => new Map(observeIrqs(root)!.irqs.map((i) => [i.irq, i]));

describe('observeIrqs', () => {
  it('names every IRQ, finds its PCI function, driver and NIC, and its node', () => {
    const root = irqHost();
    const seen = observeIrqs(root)!;
    expect(seen.unknown).toEqual([]);
    const irqs = new Map(seen.irqs.map((i) => [i.irq, i]));
    expect([...irqs.keys()]).toEqual([
      0,
      1,
      4,
      8,
      9,
      10,
      12,
      ...Array.from({ length: 22 }, (_, i) => 24 + i),
    ]);
    const acpi = irqs.get(9)!;
    expect(acpi).toMatchObject({
      actions: ['acpi'],
      chip: 'IO-APIC 9-fasteoi',
      pci: null,
      nic: null,
      managed: null,
    });
    expect(acpi.affinity!.toString()).toBe('0-7');
    // Allocated, never requested: no row, no handler.
    expect(irqs.get(10)).toMatchObject({ actions: [], pci: null });
    expect(irqs.get(10)!.effective!.isEmpty).toBe(true);
    // virtio-net: the vectors are on the PCI function above the virtio device.
    expect(irqs.get(36)).toMatchObject({
      actions: ['virtio2-input.1'],
      pci: '0000:05:04.0',
      driver: 'virtio-pci',
      nic: 'eth0',
      node: 1,
      managed: null,
    });
    // A NIC on numa_node -1: its IRQs' node is unknown, not 0.
    expect(irqs.get(43)).toMatchObject({ nic: 'eth1', node: null, driver: 'e1000e' });
    // Managed: NVMe I/O queues and virtio-blk/scsi request queues, not the admin queue or config vectors.
    const managed = seen.irqs.filter((i) => i.managed && i.managed !== 'nobalancing').map((i) => i.irq);
    expect(managed).toEqual([25, 26, 27, 28, 32, 39, 40, 41, 42]);
    // x86's timer asks never to be moved (IRQF_NOBALANCING): a write would be refused with EIO.
    expect(seen.irqs.filter((i) => i.managed === 'nobalancing').map((i) => i.irq)).toEqual([0]);
    expect(irqs.get(38)).toMatchObject({ actions: ['nvme0q0'], managed: null, driver: 'nvme' });
  });

  it('reads every NIC queue mask, a single-queue xps_cpus (ENOENT) as no mask, and the workqueue mask', () => {
    const seen = observeIrqs(irqHost())!;
    const nics = new Map(seen.nics.map((n) => [n.name, n]));
    expect([...nics.keys()]).toEqual(['eth0', 'eth1', 'lo']);
    expect(nics.get('eth0')).toMatchObject({ physical: true, node: 1 });
    expect(nics.get('eth0')!.tx.map((q) => [q.name, q.mask, q.cpus?.toString()])).toEqual([
      ['tx-0', '0f', '0-3'],
      ['tx-1', 'f0', '4-7'],
    ]);
    expect(nics.get('eth1')).toMatchObject({ physical: true, node: null });
    expect(nics.get('eth1')!.rx[0]!.cpus!.toString()).toBe('4-7');
    expect(nics.get('eth1')!.tx).toEqual([{ name: 'tx-0', mask: null, cpus: null }]);
    expect(nics.get('lo')!.physical).toBe(false);
    expect(seen.workqueueMask).toBe('ff');
  });

  it('debugfs, when there, decides which IRQs are managed', () => {
    const root = irqHost();
    const dbg = path.join(root, 'sys/kernel/debug/irq/irqs');
    mkdirSync(dbg, { recursive: true });
    // 6.1's format: the state line lists IRQD_ flags; 39 is managed, 42 says it is not.
    writeFileSync(
      path.join(dbg, '39'),
      'handler:  handle_edge_irq\ndstate:   0x3740200\n            IRQD_ACTIVATED\n            IRQD_IRQ_STARTED\n            IRQD_AFFINITY_MANAGED\n',
    );
    writeFileSync(
      path.join(dbg, '42'),
      'handler:  handle_edge_irq\ndstate:   0x3400200\n            IRQD_ACTIVATED\n',
    );
    const irqs = byIrq(root);
    expect(irqs.get(39)!.managed).toBe('debugfs');
    expect(irqs.get(42)!.managed).toBe(null);
    expect(irqs.get(41)!.managed).toBe('driver');
  });

  it('a malformed, unreadable or blocking file leaves its value unknown and says so', () => {
    const root = irqHost();
    writeFileSync(path.join(root, 'proc/irq/33/smp_affinity_list'), 'all of them\n');
    rmSync(path.join(root, 'proc/irq/34/smp_affinity_list'));
    execFileSync('mkfifo', [path.join(root, 'proc/irq/34/smp_affinity_list')]);
    writeFileSync(path.join(root, 'proc/irq/35/node'), 'one\n');
    writeFileSync(path.join(root, 'sys/devices/virtual/workqueue/cpumask'), 'zz\n');
    const seen = observeIrqs(root)!;
    const irqs = new Map(seen.irqs.map((i) => [i.irq, i]));
    expect(irqs.get(33)!.affinity).toBeNull();
    expect(irqs.get(34)!.affinity).toBeNull();
    expect(irqs.get(35)!.node).toBeNull();
    expect(seen.workqueueMask).toBeNull();
    expect(seen.unknown).toEqual([
      'proc/irq/33/smp_affinity_list: "all of them" is not a CPU list',
      'proc/irq/34/smp_affinity_list: ENOTREG (a FIFO, not a regular file)',
      'proc/irq/35/node: not a node number',
      'sys/devices/virtual/workqueue/cpumask: not a CPU mask',
    ]);
  });

  it('no /proc/interrupts: IRQs are still listed, their names unknown and said', () => {
    const root = irqHost();
    rmSync(path.join(root, 'proc/interrupts'));
    const seen = observeIrqs(root)!;
    expect(seen.irqs.length).toBe(29);
    expect(seen.irqs.every((i) => i.actions.length === 0)).toBe(true);
    expect(seen.unknown[0]).toMatch(/^proc\/interrupts: missing/);
  });

  it('no /proc/irq at all: nothing observed (not a Linux tree), rather than "no IRQs"', () => {
    const root = irqHost();
    rmSync(path.join(root, 'proc/irq'), { recursive: true });
    expect(observeIrqs(root)).toBeUndefined();
  });
});

describe('/proc/interrupts and /proc/softirqs', () => {
  it('maps columns to CPUs by the header, so an offline CPU shifts nothing', () => {
    const text = readFileSync(path.join(irqHost(), 'proc/interrupts'), 'utf8');
    // cpu5 offline: its column goes (the kernel prints online CPUs only).
    const lines = text.split('\n').map((l, i) => {
      if (i === 0) return l.replace(/ +CPU5/, '');
      const m = /^(\s*\w+:)((?: +\d+){8})(.*)$/.exec(l);
      if (!m) return l;
      const nums = m[2]!.trim().split(/ +/);
      nums.splice(5, 1);
      return `${m[1]}${nums.map((n) => n.padStart(11)).join('')}${m[3]}`;
    });
    const t = parseCounts(lines.join('\n'));
    expect(t.cpus).toEqual([0, 1, 2, 3, 4, 6, 7]);
    expect(t.problems).toEqual([]);
    const loc = t.rows.find((r) => r.id === 'LOC')!;
    expect(loc.counts.get(6)).toBe(3773);
    expect(loc.counts.has(5)).toBe(false);
    const r36 = t.rows.find((r) => r.id === '36')!;
    expect(r36.counts.get(7)).toBe(1830);
    expect(splitActions(r36.rest)).toEqual({ chip: 'PCI-MSI 2623491-edge', actions: ['virtio2-input.1'] });
    expect(t.rows.find((r) => r.id === 'ERR')!.counts.get(0)).toBe(0);
  });
  it('shared lines list each action; a row without a handler has none; a short row is a problem', () => {
    expect(splitActions('IO-APIC  11-fasteoi   uhci_hcd:usb3, ehci_hcd:usb1')).toEqual({
      chip: 'IO-APIC 11-fasteoi',
      actions: ['uhci_hcd:usb3', 'ehci_hcd:usb1'],
    });
    expect(splitActions('IO-APIC   7-edge')).toEqual({ chip: 'IO-APIC 7-edge', actions: [] });
    expect(splitActions('GICv3  27 Level     arch_timer')).toEqual({
      chip: 'GICv3 27 Level',
      actions: ['arch_timer'],
    });
    const t = parseCounts('   CPU0  CPU1\n 5:  1\n 6:  1  2  IO-APIC  6-edge  floppy\n');
    expect(t.problems).toEqual(['line 2: IRQ 5 has 1 counts for 2 CPU columns']);
    expect(t.rows.map((r) => r.id)).toEqual(['6']);
    expect(() => parseCounts('garbage\n')).toThrow(/CPU columns/);
  });
});

describe('CPU masks', () => {
  it('prints as wide as the live value, 32-bit words most significant first', () => {
    expect(formatMask(CpuSet.parse('4-5'), 'ff')).toBe('30');
    expect(formatMask(CpuSet.EMPTY, '00')).toBe('00');
    expect(formatMask(CpuSet.parse('0,33,64'), '00000000,00000000,00000000')).toBe(
      '00000001,00000002,00000001',
    );
    expect(formatMask(CpuSet.parse('31'), null)).toBe('80000000');
    expect(formatMask(CpuSet.parse('0-39'), '000,00000000')).toBe('0ff,ffffffff');
    expect(() => formatMask(CpuSet.parse('8'), 'ff')).toThrow(/fit/);
    expect(parseCpusOrNull(formatMask(CpuSet.parse('1,40-47'), '0000,00000000'), 'mask')!.toString()).toBe(
      '1,40-47',
    );
    // A CPU beyond the kernel's width: refused, never written as a wider mask than it prints.
    expect(() => formatMask(CpuSet.parse('1,40-47'), '00,00000000')).toThrow(/fit/);
    expect(sameMask('000000ff', 'ff')).toBe(true);
    expect(sameMask('0f', 'ff')).toBe(false);
  });
});
