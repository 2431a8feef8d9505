// Interrupts, packet steering and unbound kernel work as the host reports them: what the planner
// needs to keep them off the exclusive cores, and the file names and mask format the backend writes.
import { CpuSet, CpuSetParseError } from './cpuset.js';
import type { ObservedIrqbalance } from './irqbalance.js';

/** How isolate knows an IRQ is kernel-managed (its affinity fixed by the kernel; writes fail EIO). */
export type ManagedBy = 'debugfs' | 'driver' | 'refused' | 'nobalancing' | null;

/** One IRQ of `/proc/irq/N`, with what `/proc/interrupts` and sysfs say of it. */
export interface ObservedIrq {
  irq: number;
  /** `smp_affinity_list`: where it may be delivered. Null: unreadable or malformed (unknown). */
  affinity: CpuSet | null;
  /** `effective_affinity_list`; null when the kernel has no such file or it could not be read. */
  effective: CpuSet | null;
  /** `node`: the NUMA node of its device; null for -1 (unknown) or unreadable. */
  node: number | null;
  /** Action names from `/proc/interrupts` (`virtio0-input.0`, `nvme0q1`); empty: no handler. */
  actions: string[];
  /** Interrupt chip and hardware IRQ words of its `/proc/interrupts` row (`PCI-MSIX-0000:00:03.0 1-edge`). */
  chip: string;
  /** The PCI function whose MSI vector or legacy IRQ it is (`0000:00:03.0`); null: none found. */
  pci: string | null;
  /** The driver bound to that function (`virtio-pci`, `nvme`, `mlx5_core`); null: none. */
  driver: string | null;
  /** The network interface whose device raises it (`eth0`); null: not a NIC's. */
  nic: string | null;
  /**
   * Kernel-managed (multiqueue NVMe, virtio-blk, ...): `debugfs` when the kernel's IRQ debug files
   * say so, `driver` when the action name is one such drivers give their per-queue vectors, `refused`
   * when the last apply's write to it was refused (EIO), `nobalancing` when its handler asked the
   * kernel never to move it (IRQF_NOBALANCING: debugfs's IRQD_NO_BALANCING, or x86's `timer` on IRQ
   * 0, which arch/x86/kernel/time.c requests so); null: not known to be managed (a write may still
   * be refused; the executor then says so).
   */
  managed: ManagedBy;
}

/** One receive or transmit queue of a NIC and its steering mask (`rps_cpus` / `xps_cpus`). */
export interface ObservedQueue {
  /** `rx-0`, `tx-3`. */
  name: string;
  /** The hex mask as the kernel printed it (kept for its width); null: absent or unreadable. */
  mask: string | null;
  /** The mask's CPUs; null when unknown. */
  cpus: CpuSet | null;
}

export interface ObservedNic {
  name: string;
  /** The PCI function behind it (`0000:00:03.0`); null: none (lo, a bridge, veth); absent: not read. */
  pci?: string | null;
  /** Has a `device` (a physical or virtio function), unlike lo, bridges, veth. */
  physical: boolean;
  /** NUMA node of its device; null for -1 or none. */
  node: number | null;
  rx: ObservedQueue[];
  tx: ObservedQueue[];
}

export interface ObservedIrqs {
  irqs: ObservedIrq[];
  nics: ObservedNic[];
  /** `/sys/devices/virtual/workqueue/cpumask`; null when absent (old kernel) or unreadable. */
  workqueueMask: string | null;
  /**
   * `/proc/irq/default_smp_affinity`: the mask an IRQ requested later (a driver reload, hot-plug)
   * starts with. Null when absent or unreadable.
   */
  defaultAffinity?: string | null;
  /** Things that could not be read or made sense of: each leaves its item unknown, never absent. */
  unknown: string[];
  /**
   * A running irqbalance (its socket `/run/irqbalance/irqbalance<PID>.sock`, 1.9.2, and that PID
   * alive as `irqbalance`): it rewrites affinities every 10 s. Null: none found.
   */
  irqbalance: { pid: number } | null;
  /**
   * irqbalance.service as systemd has it (src/systemd/irqbalance.ts), when systemd runs the host:
   * isolate then bans the exclusive CPUs and its pinned IRQs through a drop-in. Absent: no systemd.
   */
  irqbalanceUnit?: ObservedIrqbalance;
}

/** What isolate writes here: `/proc/irq/N`, `/sys/class/net/DEV/queues/rx-N`, the workqueue mask. */
export type IrqSetting = 'smp_affinity_list' | 'rps_cpus' | 'xps_cpus' | 'cpumask' | 'default_smp_affinity';
export const IRQ_SETTINGS: readonly IrqSetting[] = [
  'smp_affinity_list',
  'rps_cpus',
  'xps_cpus',
  'cpumask',
  'default_smp_affinity',
];

/** Where default_smp_affinity lives: the target of its change. */
export const IRQ_DIR = '/proc/irq';

export const WORKQUEUE_DIR = '/sys/devices/virtual/workqueue';

/** Bytes the kernel refuses in a NIC name: '/', ':' and what its isspace() takes (lib/ctype.c: 0xa0 too). */
const NIC_NAME_REFUSED = new Set([0x2f, 0x3a, 0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0xa0]);

/**
 * A NIC name as the kernel allows one (net/core/dev.c dev_valid_name): 1 to 15 bytes (IFNAMSIZ less
 * its NUL), never `.` or `..`, no '/', ':', NUL or whitespace byte; anything else goes, UTF-8 (`ethü`)
 * included. Counted in bytes, as the kernel counts, not in UTF-16 units; a string that is not well
 * formed (a lone surrogate) has no UTF-8 bytes the kernel could hold.
 */
export function isNicName(name: string): boolean {
  if (name === '.' || name === '..') return false;
  const bytes = new TextEncoder().encode(name);
  if (new TextDecoder().decode(bytes) !== name) return false;
  if (bytes.length < 1 || bytes.length > 15) return false;
  return !bytes.some((b) => b === 0 || NIC_NAME_REFUSED.has(b));
}

const IRQ_TARGET = /^\/proc\/irq\/(\d{1,7})$/;
const QUEUE_TARGET = /^\/sys\/class\/net\/([^/]+)\/queues\/(rx|tx)-(\d{1,5})$/;

/** The change targets this backend takes, per setting: anything else is refused before a write. */
export function irqTargetProblem(target: string, setting: string): string | null {
  if (setting === 'smp_affinity_list') {
    return IRQ_TARGET.test(target) ? null : `${JSON.stringify(target)} is not /proc/irq/N`;
  }
  if (setting === 'rps_cpus' || setting === 'xps_cpus') {
    const m = QUEUE_TARGET.exec(target);
    if (!m || !isNicName(m[1]!)) return `${JSON.stringify(target)} is not /sys/class/net/DEV/queues/QUEUE`;
    if ((setting === 'rps_cpus') !== (m[2] === 'rx'))
      return `${setting} belongs to ${setting === 'rps_cpus' ? 'an rx' : 'a tx'} queue, not ${m[2]}-${m[3]}`;
    return null;
  }
  if (setting === 'default_smp_affinity')
    return target === IRQ_DIR ? null : `${JSON.stringify(target)} is not ${IRQ_DIR}`;
  if (setting === 'cpumask')
    return target === WORKQUEUE_DIR ? null : `${JSON.stringify(target)} is not ${WORKQUEUE_DIR}`;
  return `unknown setting ${JSON.stringify(setting)}`;
}

export const irqTarget = (irq: number) => `/proc/irq/${irq}`;
export const queueTarget = (nic: string, queue: string) => `/sys/class/net/${nic}/queues/${queue}`;

/** Parse a CPU list or mask, or null when it is not one (untrusted input: unknown, not empty). */
export function parseCpusOrNull(text: string, form: 'list' | 'mask'): CpuSet | null {
  try {
    return form === 'list' ? CpuSet.parse(text) : CpuSet.parseMask(text);
  } catch (err) {
    if (err instanceof CpuSetParseError) return null;
    throw err;
  }
}

/** Two masks name the same CPUs (`000000ff` = `ff`); unparsable text compares as text. */
export function sameMask(a: string, b: string): boolean {
  const x = parseCpusOrNull(a, 'mask');
  const y = parseCpusOrNull(b, 'mask');
  return x && y ? x.equals(y) : a.trim() === b.trim();
}

/** The boot parameter that alone keeps kernel-managed IRQs off CPUs (kernel-parameters.txt). */
export function managedIrqParam(cpus: CpuSet): string {
  return `isolcpus=managed_irq,${cpus}`;
}

/** How plans name an IRQ: its number and handler names (`36 (virtio2-input.1)`). */
export function irqLabel(i: Pick<ObservedIrq, 'irq' | 'actions'>): string {
  return i.actions.length ? `${i.irq} (${i.actions.join(', ')})` : `${i.irq}`;
}

/** How a journal's skipped entry says the kernel refused to move an IRQ (EIO). */
export const IRQ_REFUSED = 'the kernel refused to move IRQ';

/**
 * Whose an IRQ number or a NIC queue was when isolate planned its change: IRQ numbers are handed to
 * another device by a driver reload, a controller reset, `ethtool -L`, hot-plug or a reboot, and a
 * NIC name to another NIC. Carried in the change (plan and journal), so a write, and its undo, goes
 * only to the object it was meant for.
 */
export interface IrqOwner {
  /** An IRQ's handler names from `/proc/interrupts` (`virtio2-input.1`); empty: no handler. Absent for a NIC queue. */
  actions?: string[];
  /** An IRQ's chip, hardware IRQ and trigger words (`PCI-MSIX-0000:00:03.0 2-edge`). Absent for a NIC queue. */
  chip?: string;
  /** The PCI function raising the IRQ, or behind the NIC; null: none (a legacy line without one, lo, veth). */
  pci: string | null;
}

/** The owner of an IRQ as observed. */
export const irqOwner = (i: Pick<ObservedIrq, 'actions' | 'chip' | 'pci'>): IrqOwner => ({
  actions: [...i.actions],
  chip: i.chip,
  pci: i.pci,
});

/** The same device: every part equal (a part one side lacks counts as different). */
export function sameOwner(a: IrqOwner, b: IrqOwner): boolean {
  return (
    (a.actions ?? []).join('\0') === (b.actions ?? []).join('\0') &&
    (a.actions === undefined) === (b.actions === undefined) &&
    (a.chip ?? null) === (b.chip ?? null) &&
    a.pci === b.pci
  );
}

/** An owner in words: `virtio2-input.1 (PCI-MSIX-0000:00:03.0 2-edge, PCI 0000:00:03.0)`. */
export function describeOwner(o: IrqOwner): string {
  const pci = o.pci ? `PCI ${o.pci}` : 'no PCI function';
  if (o.actions === undefined) return pci;
  const who = o.actions.length ? o.actions.join(', ') : 'no handler';
  return `${who} (${[o.chip || 'no chip', pci].join(', ')})`;
}
