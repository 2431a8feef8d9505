// NIC IRQ affinity as `isolate check` reports it: MSI vectors from the NIC's PCI function, their
// effective affinity from /proc/irq, and whether they land on an exclusive workload's CPUs.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nicIrqs } from '../../src/audit/irqs.js';
import { CpuSet } from '../../src/model/cpuset.js';

function host(): string {
  const root = mkdtempSync(join(tmpdir(), 'isolate-irq-'));
  // As in real sysfs: the class entry is a link into the PCI device, which lists its MSI vectors.
  const pci = join(root, 'sys/devices/pci0000:00/0000:00:03.0');
  mkdirSync(join(pci, 'msi_irqs'), { recursive: true });
  for (const v of ['25', '26', '27']) writeFileSync(join(pci, 'msi_irqs', v), 'msix\n');
  mkdirSync(join(pci, 'net/eth0'), { recursive: true });
  symlinkSync('../../../0000:00:03.0', join(pci, 'net/eth0/device'));
  mkdirSync(join(root, 'sys/class/net'), { recursive: true });
  symlinkSync('../../devices/pci0000:00/0000:00:03.0/net/eth0', join(root, 'sys/class/net/eth0'));
  // A legacy-interrupt NIC without MSI.
  mkdirSync(join(root, 'sys/class/net/eth1/device'), { recursive: true });
  writeFileSync(join(root, 'sys/class/net/eth1/device/irq'), '11\n');
  const affinity: Record<string, [string, string]> = {
    25: ['0-1', '0-7'],
    26: ['6', '0-7'],
    27: ['', '2,6'],
    11: ['0', '0'],
  };
  for (const [irq, [effective, smp]] of Object.entries(affinity)) {
    mkdirSync(join(root, 'proc/irq', irq), { recursive: true });
    writeFileSync(join(root, 'proc/irq', irq, 'effective_affinity_list'), `${effective}\n`);
    writeFileSync(join(root, 'proc/irq', irq, 'smp_affinity_list'), `${smp}\n`);
  }
  return root;
}

describe('NIC IRQ affinity', () => {
  it('lists every vector and flags those on exclusive CPUs', () => {
    const irqs = nicIrqs(host(), CpuSet.parse('6-7'));
    expect(irqs).toEqual([
      { irq: 25, nic: 'eth0', affinity: '0-1', overlapsExclusive: false },
      { irq: 26, nic: 'eth0', affinity: '6', overlapsExclusive: true },
      // No effective affinity yet (IRQ never fired): the requested mask is what counts.
      { irq: 27, nic: 'eth0', affinity: '2,6', overlapsExclusive: true },
      { irq: 11, nic: 'eth1', affinity: '0', overlapsExclusive: false },
    ]);
  });
  it('a FIFO in place of an affinity file reads as empty rather than hanging the audit', () => {
    // Under --root anything can stand at a /proc path; a blocking read of a FIFO with no writer would
    // stop `isolate check` (and the agent's audit) for good.
    const root = host();
    const fifo = join(root, 'proc/irq/26/effective_affinity_list');
    rmSync(fifo);
    execFileSync('mkfifo', [fifo]);
    const irqs = nicIrqs(root, CpuSet.parse('6-7'));
    expect(irqs.find((i) => i.irq === 26)).toEqual({
      irq: 26,
      nic: 'eth0',
      affinity: '0-7',
      overlapsExclusive: true,
    });
  });
});
