// Where NIC interrupts may be delivered: an IRQ on an exclusive core interrupts Kafka.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CpuSet } from '../model/cpuset.js';

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
      try {
        const n = Number(readFileSync(path.join(dev, 'irq'), 'latin1').trim());
        if (n > 0) irqs.add(n);
      } catch {}
    }
    for (const irq of [...irqs].sort((a, b) => a - b)) {
      let aff: string | null = null;
      for (const f of ['effective_affinity_list', 'smp_affinity_list']) {
        try {
          aff = readFileSync(path.join(root, 'proc/irq', String(irq), f), 'latin1').trim();
          if (aff) break;
        } catch {}
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
