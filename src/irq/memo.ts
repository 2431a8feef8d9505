// The agent's IRQ observation across rounds. A full scan (observe.ts: /proc/interrupts, every PCI
// function's MSI vectors, every NIC's device) costs megabytes of text on a large host; a round needs it
// only when the set of IRQs or NICs changed. Every other round re-reads, for the IRQs isolate manages
// (those with a handler that are not kernel-managed: each is kept off the exclusive CPUs), their
// smp_affinity_list and effective_affinity_list, plus the queue and workqueue masks (a few small
// files). IRQ numbers are not stable (a driver reload, a link flap that re-requests vectors,
// hot-plug): a change in the /proc/irq listing, the handler directories of a managed IRQ, or the
// /sys/class/net listing and ifindexes forces a full scan, as does age.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import {
  type ObservedIrq,
  type ObservedIrqs,
  type ObservedQueue,
  parseCpusOrNull,
  WORKQUEUE_DIR,
} from '../model/irq.js';
import { ReadRefused, readBoundedIfPresent } from '../sys/read.js';
import { observeIrqs, readDefaultAffinity, runningIrqbalance } from './observe.js';

/** A full scan at least this often, for what no cheap read shows (a NIC moved to another node). */
export const IRQ_RESCAN_MS = 300_000;
const SMALL = { maxBytes: 64 * 1024 };

/** Why the last observe() scanned everything, once (for the agent's log). */
export type RescanReason = 'first round' | 'age' | string;

function list(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

function read(file: string): { value: string | null; error?: string } {
  try {
    return { value: readBoundedIfPresent(file, SMALL)?.replace(/\0/g, '').trim() ?? null };
  } catch (err) {
    return { value: null, error: err instanceof ReadRefused ? `${err.code} (${err.reason})` : String(err) };
  }
}

/** What a full scan saw that a cheap round compares: the IRQ and NIC listings. */
function stampOf(root: string): string {
  const irqs = list(path.join(root, 'proc/irq')).filter((n) => /^\d{1,7}$/.test(n));
  const nics = list(path.join(root, 'sys/class/net')).map(
    (n) => `${n}#${read(path.join(root, 'sys/class/net', n, 'ifindex')).value ?? '?'}`,
  );
  return `${irqs.join(',')}|${nics.join(',')}`;
}

/** An IRQ's handler directories under /proc/irq/N (one per action; the files are not counted). */
function handlersOf(root: string, irq: number): string {
  const dir = path.join(root, 'proc/irq', String(irq));
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort()
      .join(',');
  } catch {
    return '\0gone';
  }
}

const managed = (i: ObservedIrq) => i.actions.length > 0 && !i.managed;

export class IrqMemo {
  private last: {
    stamp: string;
    at: number;
    observed: ObservedIrqs;
    handlers: Map<number, string>;
  } | null = null;
  private reason: RescanReason | null = null;
  /** Full scans and cheap rounds since the agent started (tests, metrics). */
  readonly stats = { rescans: 0, rechecks: 0 };
  /**
   * IRQ number → the note of the change the kernel refused (EIO), kept across rounds: the journal
   * holds only the last apply's refusals, so a round that applied something else would otherwise
   * make the next one try the refused IRQ again (and open a journal for nothing) every other round.
   * The note names the IRQ's handlers, so a number another device took since is tried afresh.
   */
  readonly refused = new Map<number, string>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Why the last observe() rescanned, once; null when it did not. */
  takeRescan(): RescanReason | null {
    const r = this.reason;
    this.reason = null;
    return r;
  }

  /** Forget the last scan: the next observe() reads everything (a new policy, a failed apply). */
  forget(): void {
    this.last = null;
    this.refused.clear();
  }

  observe(root: string): ObservedIrqs | undefined {
    const stamp = stampOf(root);
    const last = this.last;
    let why: RescanReason | null = null;
    if (!last) why = 'first round';
    else if (last.stamp !== stamp) why = changedWhat(last.stamp, stamp);
    else if (this.now() - last.at >= IRQ_RESCAN_MS) why = 'age';
    else {
      for (const [irq, h] of last.handlers) {
        if (handlersOf(root, irq) !== h) {
          why = `IRQ ${irq}'s handlers changed`;
          break;
        }
      }
    }
    if (why === null && last) {
      this.stats.rechecks++;
      return recheck(root, last.observed);
    }
    const observed = observeIrqs(root);
    this.stats.rescans++;
    this.reason = why;
    if (!observed) {
      this.last = null;
      return undefined;
    }
    const handlers = new Map(
      observed.irqs.filter(managed).map((i) => [i.irq, handlersOf(root, i.irq)] as const),
    );
    this.last = { stamp, at: this.now(), observed: copyOf(observed), handlers };
    return observed;
  }
}

/** What differs between two stamps, for the log: `IRQs 40-43 appeared`, `NIC eth1 changed`. */
function changedWhat(before: string, after: string): string {
  const [bi = '', bn = ''] = before.split('|');
  const [ai = '', an = ''] = after.split('|');
  const diff = (a: string, b: string) => {
    const x = new Set(a.split(',').filter(Boolean));
    const y = new Set(b.split(',').filter(Boolean));
    return { gone: [...x].filter((v) => !y.has(v)), came: [...y].filter((v) => !x.has(v)) };
  };
  const parts: string[] = [];
  const irq = diff(bi, ai);
  if (irq.came.length) parts.push(`IRQs ${irq.came.slice(0, 8).join(', ')} appeared`);
  if (irq.gone.length) parts.push(`IRQs ${irq.gone.slice(0, 8).join(', ')} disappeared`);
  const nic = diff(bn, an);
  const names = (l: string[]) => [...new Set(l.map((v) => v.split('#')[0]))].join(', ');
  if (nic.came.length || nic.gone.length) parts.push(`NICs changed (${names([...nic.gone, ...nic.came])})`);
  return parts.join('; ') || 'IRQs or NICs changed';
}

/**
 * A copy a round may change (ops/plan.ts marks IRQs the kernel refused) without changing the memo.
 * CpuSets are immutable and shared; irqbalance's unit is observed every round by ops/observe.ts.
 */
function copyOf(o: ObservedIrqs): ObservedIrqs {
  return {
    irqs: o.irqs.map((i) => ({ ...i, actions: [...i.actions] })),
    nics: o.nics.map((n) => ({ ...n, rx: n.rx.map((q) => ({ ...q })), tx: n.tx.map((q) => ({ ...q })) })),
    workqueueMask: o.workqueueMask,
    defaultAffinity: o.defaultAffinity ?? null,
    unknown: [...o.unknown],
    irqbalance: o.irqbalance,
  };
}

/** The last scan with the managed IRQs' affinities and every mask read again. */
function recheck(root: string, last: ObservedIrqs): ObservedIrqs {
  const out = copyOf(last);
  const unknown: string[] = [];
  const say = (file: string, why: string) => unknown.push(`${path.relative(root, file)}: ${why}`);
  const cpus = (file: string) => {
    const r = read(file);
    if (r.error) say(file, r.error);
    if (r.value === null) return null;
    const set = parseCpusOrNull(r.value, 'list');
    if (!set) say(file, `${JSON.stringify(r.value.slice(0, 60))} is not a CPU list`);
    return set;
  };
  for (const irq of out.irqs) {
    if (!managed(irq)) continue;
    const dir = path.join(root, 'proc/irq', String(irq.irq));
    irq.affinity = cpus(path.join(dir, 'smp_affinity_list'));
    irq.effective = cpus(path.join(dir, 'effective_affinity_list'));
  }
  for (const nic of out.nics) {
    const again = (q: ObservedQueue, file: string) => {
      const r = read(path.join(root, 'sys/class/net', nic.name, 'queues', q.name, file));
      const set = r.value === null ? null : parseCpusOrNull(r.value, 'mask');
      q.mask = set ? r.value : null;
      q.cpus = set;
    };
    for (const q of nic.rx) again(q, 'rps_cpus');
    for (const q of nic.tx) if (q.mask !== null) again(q, 'xps_cpus');
  }
  if (out.workqueueMask !== null) {
    const wq = read(path.join(root, WORKQUEUE_DIR.slice(1), 'cpumask'));
    out.workqueueMask = wq.value !== null && parseCpusOrNull(wq.value, 'mask') ? wq.value : null;
  }
  out.defaultAffinity = readDefaultAffinity(root, say);
  out.unknown = unknown;
  out.irqbalance = runningIrqbalance(root);
  return out;
}
