// Reads every IRQ under <root>/proc/irq, its name from /proc/interrupts, its device from sysfs (PCI
// functions' MSI vectors and legacy lines, the NIC on that function), each NIC queue's RPS/XPS
// mask and the unbound workqueues' cpumask. All of it is untrusted input: a file that cannot be read
// or makes no sense leaves its item unknown (null) and is said in `unknown`, never taken for absent.
import { readdirSync, readlinkSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { CpuSet } from '../model/cpuset.js';
import {
  isNicName,
  type ManagedBy,
  type ObservedIrq,
  type ObservedIrqs,
  type ObservedNic,
  type ObservedQueue,
  parseCpusOrNull,
  WORKQUEUE_DIR,
} from '../model/irq.js';
import { ReadRefused, readBoundedIfPresent } from '../sys/read.js';
import { parseCounts, splitActions } from './counts.js';

const SMALL = { maxBytes: 64 * 1024 };
/** /proc/interrupts of a 1024-CPU host with thousands of vectors runs to megabytes. */
const INTERRUPTS = { maxBytes: 64 * 1024 * 1024 };
const MAX_IRQS = 100_000;
const PCI_ADDRESS = /^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/;

/**
 * Per-queue vectors of drivers whose multiqueue IRQs the kernel manages (pci_alloc_irq_vectors_affinity):
 * NVMe I/O queues (the admin queue `nvme0q0` is not managed), virtio-blk's and virtio-scsi's request queues.
 */
const MANAGED_NAMES = [/^nvme\d+q[1-9]\d*$/, /^virtio\d+-req\.\d+$/, /^virtio\d+-request(\.\d+)?$/];

type Read = { value: string | null; error?: string };

function readOpt(file: string, opts = SMALL): Read {
  try {
    return { value: readBoundedIfPresent(file, opts)?.replace(/\0/g, '').trim() ?? null };
  } catch (err) {
    return { value: null, error: err instanceof ReadRefused ? `${err.code} (${err.reason})` : String(err) };
  }
}

function entries(dir: string): string[] | null {
  try {
    return readdirSync(dir);
  } catch {
    return null;
  }
}

function linkBase(file: string): string | null {
  try {
    return path.basename(readlinkSync(file));
  } catch {
    return null;
  }
}

/** Everything IRQ placement needs; undefined when there is no /proc/irq under root (not a Linux tree). */
export function observeIrqs(root: string): ObservedIrqs | undefined {
  const procIrq = path.join(root, 'proc/irq');
  const numbers = entries(procIrq);
  if (numbers === null) return undefined;
  const unknown: string[] = [];
  const say = (file: string, why: string) => unknown.push(`${path.relative(root, file)}: ${why}`);

  const rows = readInterrupts(root, say);
  const pci = readPciFunctions(root);
  const nics = readNics(root, say);
  const nicOfPci = new Map<string, string>();
  for (const n of nics.list) {
    const fn = nics.pciOf.get(n.name);
    // A function with two NICs on it (rare: a switchdev representor) is named by the first, sorted.
    if (fn && !nicOfPci.has(fn)) nicOfPci.set(fn, n.name);
  }

  // Read per IRQ only where the kernel has IRQ debug files (debugfs mounted, GENERIC_IRQ_DEBUGFS).
  const debugDir = entries(path.join(root, 'sys/kernel/debug/irq/irqs'))
    ? path.join(root, 'sys/kernel/debug/irq/irqs')
    : null;
  const irqs: ObservedIrq[] = [];
  for (const name of numbers.filter((n) => /^\d{1,7}$/.test(n)).sort((a, b) => Number(a) - Number(b))) {
    if (irqs.length >= MAX_IRQS) {
      unknown.push(`proc/irq: more than ${MAX_IRQS} IRQs; the rest are not read`);
      break;
    }
    const irq = Number(name);
    const dir = path.join(procIrq, name);
    const cpus = (file: string, form: 'list'): CpuSet | null => {
      const r = readOpt(path.join(dir, file));
      if (r.error) {
        say(path.join(dir, file), r.error);
        return null;
      }
      if (r.value === null) return null;
      const set = parseCpusOrNull(r.value, form);
      if (!set) say(path.join(dir, file), `${JSON.stringify(r.value.slice(0, 60))} is not a CPU list`);
      return set;
    };
    const affinity = cpus('smp_affinity_list', 'list');
    const effective = cpus('effective_affinity_list', 'list');
    const nodeRead = readOpt(path.join(dir, 'node'));
    let node: number | null = null;
    if (nodeRead.value !== null && /^-?\d{1,5}$/.test(nodeRead.value))
      node = Math.max(-1, Number(nodeRead.value));
    else if (nodeRead.value !== null || nodeRead.error)
      say(path.join(dir, 'node'), nodeRead.error ?? 'not a node number');
    const row = rows.get(name);
    const { chip, actions } = row ? splitActions(row) : { chip: '', actions: [] };
    const fn = pci.byIrq.get(irq) ?? null;
    irqs.push({
      irq,
      affinity,
      effective,
      node: node === null || node < 0 ? null : node,
      actions,
      chip,
      pci: fn,
      driver: fn ? (pci.driver.get(fn) ?? null) : null,
      nic: fn ? (nicOfPci.get(fn) ?? null) : null,
      managed: managedBy(debugDir, irq, actions),
    });
  }

  const wqFile = path.join(root, WORKQUEUE_DIR.slice(1), 'cpumask');
  const wq = readOpt(wqFile);
  if (wq.error) say(wqFile, wq.error);
  else if (wq.value !== null && !parseCpusOrNull(wq.value, 'mask')) say(wqFile, 'not a CPU mask');
  const workqueueMask = wq.value !== null && parseCpusOrNull(wq.value, 'mask') ? wq.value : null;
  const defaultAffinity = readDefaultAffinity(root, say);
  return {
    irqs,
    nics: nics.list,
    workqueueMask,
    defaultAffinity,
    unknown,
    irqbalance: runningIrqbalance(root),
  };
}

/** `/proc/irq/default_smp_affinity` (a hex mask); null when absent, unreadable or not a mask (said). */
export function readDefaultAffinity(root: string, say?: (file: string, why: string) => void): string | null {
  const file = path.join(root, 'proc/irq/default_smp_affinity');
  const r = readOpt(file);
  if (r.error) say?.(file, r.error);
  else if (r.value !== null && !parseCpusOrNull(r.value, 'mask')) say?.(file, 'not a CPU mask');
  return r.value !== null && parseCpusOrNull(r.value, 'mask') ? r.value : null;
}

/**
 * irqbalance 1.9.2 listens on `/run/irqbalance/irqbalance<PID>.sock` (systemd's RuntimeDirectory, gone
 * when the service stops); a socket left by a killed daemon is told apart by its PID's comm.
 */
export function runningIrqbalance(root: string): { pid: number } | null {
  for (const f of entries(path.join(root, 'run/irqbalance')) ?? []) {
    const m = /^irqbalance(\d{1,10})\.sock$/.exec(f);
    if (!m) continue;
    const comm = readOpt(path.join(root, 'proc', m[1]!, 'comm')).value;
    if (comm === 'irqbalance') return { pid: Number(m[1]) };
  }
  return null;
}

/** IRQ number → the text after its counts in /proc/interrupts (IRQs with a row only). */
function readInterrupts(root: string, say: (file: string, why: string) => void): Map<string, string> {
  const file = path.join(root, 'proc/interrupts');
  const r = readOpt(file, INTERRUPTS);
  const out = new Map<string, string>();
  if (r.error || r.value === null) {
    say(file, r.error ?? 'missing: IRQ names and handlers are unknown');
    return out;
  }
  try {
    const table = parseCounts(r.value);
    for (const p of table.problems.slice(0, 5)) say(file, p);
    for (const row of table.rows) if (/^\d+$/.test(row.id)) out.set(row.id, row.rest);
  } catch (err) {
    say(file, (err as Error).message);
  }
  return out;
}

/** Which PCI function raises each IRQ (MSI/MSI-X vectors first, then the legacy line) and its driver. */
export function readPciFunctions(root: string): { byIrq: Map<number, string>; driver: Map<string, string> } {
  const byIrq = new Map<number, string>();
  const driver = new Map<string, string>();
  const base = path.join(root, 'sys/bus/pci/devices');
  const fns = (entries(base) ?? []).filter((f) => PCI_ADDRESS.test(f)).sort();
  for (const fn of fns) {
    const d = linkBase(path.join(base, fn, 'driver'));
    if (d) driver.set(fn, d);
    for (const v of entries(path.join(base, fn, 'msi_irqs')) ?? []) {
      if (/^\d{1,7}$/.test(v)) byIrq.set(Number(v), fn);
    }
  }
  for (const fn of fns) {
    const legacy = readOpt(path.join(base, fn, 'irq')).value;
    // 0: no legacy line. A function using MSI still shows its old line here: only unclaimed ones count.
    if (legacy && /^\d{1,7}$/.test(legacy) && legacy !== '0' && !byIrq.has(Number(legacy))) {
      byIrq.set(Number(legacy), fn);
    }
  }
  return { byIrq, driver };
}

/** Every interface under /sys/class/net with its queues' masks, and the PCI function behind it. */
function readNics(
  root: string,
  say: (file: string, why: string) => void,
): { list: ObservedNic[]; pciOf: Map<string, string> } {
  const base = path.join(root, 'sys/class/net');
  const list: ObservedNic[] = [];
  const pciOf = new Map<string, string>();
  for (const name of nicNames(base, say)) {
    const { real, node, pci } = nicDevice(base, name);
    if (pci) pciOf.set(name, pci);
    const queues = (kind: 'rx' | 'tx'): ObservedQueue[] => {
      const dir = path.join(base, name, 'queues');
      const names = (entries(dir) ?? [])
        .filter((q) => new RegExp(`^${kind}-\\d{1,5}$`).test(q))
        .sort((a, b) => Number(a.slice(3)) - Number(b.slice(3)));
      return names.map((q) => {
        const file = path.join(dir, q, kind === 'rx' ? 'rps_cpus' : 'xps_cpus');
        const r = readOpt(file);
        // xps_cpus of a single-queue device reads ENOENT on 6.1: no mask to steer, not an unknown one.
        if (r.error && !r.error.startsWith('ENOENT')) say(file, r.error);
        const cpus = r.value === null ? null : parseCpusOrNull(r.value, 'mask');
        if (r.value !== null && !cpus) say(file, `${JSON.stringify(r.value.slice(0, 60))} is not a CPU mask`);
        return { name: q, mask: cpus ? r.value : null, cpus };
      });
    };
    list.push({
      name,
      pci,
      physical: real !== null,
      node: node === null || node < 0 ? null : node,
      rx: queues('rx'),
      tx: queues('tx'),
    });
  }
  return { list, pciOf };
}

/**
 * The interface names under /sys/class/net, sorted, read as the bytes the kernel holds: any name it
 * allows is taken (`ethü`). One that is not UTF-8 cannot be written into a plan or journal: said,
 * naming it, and its masks left as they are.
 */
function nicNames(base: string, say: (file: string, why: string) => void): string[] {
  let raw: Buffer[];
  try {
    raw = readdirSync(base, { encoding: 'buffer' });
  } catch {
    return [];
  }
  const names: string[] = [];
  for (const bytes of raw) {
    const name = bytes.toString('utf8');
    const shown = JSON.stringify(bytes.toString('latin1'));
    if (!Buffer.from(name, 'utf8').equals(bytes)) {
      say(
        path.join(base, name),
        `NIC ${shown}: its name is not UTF-8, which isolate's plans and journals cannot hold; its RPS/XPS masks are left as they are`,
      );
    } else if (!isNicName(name)) {
      say(path.join(base, name), `NIC ${shown}: not a name the kernel gives an interface; left alone`);
    } else names.push(name);
  }
  return names.sort();
}

/** A NIC's device directory, NUMA node and PCI function (null: none, as for lo, veth, a bridge). */
export function nicDevice(
  base: string,
  name: string,
): { real: string | null; node: number | null; pci: string | null } {
  let real: string | null = null;
  try {
    real = realpathSync.native(path.join(base, name, 'device'));
  } catch {}
  let node: number | null = null;
  // virtio: `device` is the virtio device; the PCI function (MSI vectors, numa_node) is its parent.
  for (let dir = real, i = 0; dir && i < 4; dir = path.dirname(dir), i++) {
    if (node === null) {
      const n = readOpt(path.join(dir, 'numa_node')).value;
      if (n !== null && /^-?\d{1,5}$/.test(n)) node = Number(n) < 0 ? -1 : Number(n);
    }
    if (PCI_ADDRESS.test(path.basename(dir))) return { real, node, pci: path.basename(dir) };
  }
  return { real, node, pci: null };
}

/** Kernel-managed: the IRQ debug file's state flags when debugfs is there, else the driver's vector names. */
function managedBy(debugDir: string | null, irq: number, actions: string[]): ManagedBy {
  const debug = debugDir
    ? readOpt(path.join(debugDir, String(irq)), { maxBytes: 256 * 1024 })
    : { value: null };
  if (debug.value !== null) {
    if (/\bIRQD_AFFINITY_MANAGED\b/.test(debug.value)) return 'debugfs';
    return /\bIRQD_NO_BALANCING\b/.test(debug.value) ? 'nobalancing' : null;
  }
  // x86 requests its timer IRQ 0 with IRQF_NOBALANCING: every write to it is refused with EIO.
  if (irq === 0 && actions.length === 1 && actions[0] === 'timer') return 'nobalancing';
  return actions.some((a) => MANAGED_NAMES.some((re) => re.test(a))) ? 'driver' : null;
}
