// Where NIC interrupts may be delivered: an IRQ on an exclusive core interrupts Kafka.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { CpuSet } from '../model/cpuset.js';
import { readTrimSync } from '../sys/read.js';

export interface IrqInfo {
  irq: number;
  nic: string;
  affinity: string;
  overlapsExclusive: boolean;
}

/** NIC interrupts and where they may be delivered (`/proc/irq/N/effective_affinity_list`). */
export function nicIrqs(root: string, exclusive: CpuSet): IrqInfo[] {
  const out: IrqInfo[] = [];
  const netDir = path.join(root, 'sys/class/net');
  let nics: string[] = [];
  try {
    nics = readdirSync(netDir);
  } catch {
    return out;
  }
  for (const nic of nics) {
    const dev = path.join(netDir, nic, 'device');
    const irqs = new Set<number>();
    try {
      for (const i of readdirSync(path.join(dev, 'msi_irqs'))) irqs.add(Number(i));
    } catch {}
    if (irqs.size === 0) {
      const n = Number(readTrimSync(path.join(dev, 'irq')) ?? 0);
      if (n > 0) irqs.add(n);
    }
    for (const irq of [...irqs].sort((a, b) => a - b)) {
      let aff: string | null = null;
      for (const f of ['effective_affinity_list', 'smp_affinity_list']) {
        aff = readTrimSync(path.join(root, 'proc/irq', String(irq), f));
        if (aff) break;
      }
      if (aff === null) continue;
      let overlaps = false;
      try {
        overlaps = CpuSet.parse(aff).overlaps(exclusive);
      } catch {}
      out.push({ irq, nic, affinity: aff, overlapsExclusive: overlaps });
    }
  }
  return out;
}
