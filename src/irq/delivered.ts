// Interrupts delivered to given CPUs over a window: two reads of /proc/interrupts (device IRQs, the
// numbered rows; per-CPU IPIs such as LOC, RES, CAL, TLB are not device interrupts and are left
// out) and /proc/softirqs (NET_RX: receive processing), and their differences per source.
import path from 'node:path';
import type { CpuSet } from '../model/cpuset.js';
import { ReadRefused, readBoundedIfPresent } from '../sys/read.js';
import { type CountTable, parseCounts, splitActions } from './counts.js';

const MAX_BYTES = { maxBytes: 64 * 1024 * 1024 };
/** Softirqs that are packet processing: what RPS and the NIC's IRQ placement decide the CPU of. */
const SOFTIRQS = ['NET_RX'];
/** Per-CPU counters of /proc/interrupts are unsigned int: a difference below zero wrapped once. */
const WRAP = 2 ** 32;

export interface InterruptCounts {
  /** Monotonic milliseconds when read. */
  at: number;
  interrupts: CountTable | null;
  softirqs: CountTable | null;
  /** Why a file could not be used. */
  problems: string[];
}

/** One source of interrupts on the CPUs asked about, over the window. */
export interface DeliveredSource {
  kind: 'irq' | 'softirq';
  /** The IRQ number, or the softirq's name (`NET_RX`). */
  id: string;
  /** Action names of the IRQ (`virtio2-input.1`); the softirq's name. */
  name: string;
  /** Interrupts on each of the CPUs (only CPUs with some), by CPU id. */
  perCpu: Record<string, number>;
  total: number;
}

export interface DeliveredReport {
  windowMs: number;
  cpus: string;
  sources: DeliveredSource[];
  /** Sources that could not be compared (an IRQ reused by another device in between, a bad file). */
  unknown: string[];
}

function readTable(root: string, rel: string, problems: string[]): CountTable | null {
  const file = path.join(root, rel);
  try {
    const text = readBoundedIfPresent(file, MAX_BYTES);
    if (text === null) return null;
    const t = parseCounts(text);
    for (const p of t.problems.slice(0, 3)) problems.push(`${rel}: ${p}`);
    return t;
  } catch (err) {
    problems.push(
      `${rel}: ${err instanceof ReadRefused ? `${err.code} (${err.reason})` : (err as Error).message}`,
    );
    return null;
  }
}

/** Both counter files now; null when neither exists under root (not a Linux /proc). */
export function readInterruptCounts(root: string): InterruptCounts | null {
  const problems: string[] = [];
  const interrupts = readTable(root, 'proc/interrupts', problems);
  const softirqs = readTable(root, 'proc/softirqs', problems);
  if (!interrupts && !softirqs && problems.length === 0) return null;
  return { at: performance.now(), interrupts, softirqs, problems };
}

/** What each source delivered to `cpus` between two reads, largest first. */
export function deliveredOn(before: InterruptCounts, after: InterruptCounts, cpus: CpuSet): DeliveredReport {
  const sources: DeliveredSource[] = [];
  const unknown: string[] = [...new Set([...before.problems, ...after.problems])];
  const diff = (
    kind: DeliveredSource['kind'],
    a: CountTable | null,
    b: CountTable | null,
    keep: (id: string) => boolean,
  ) => {
    if (!a || !b) return;
    const earlier = new Map(a.rows.map((r) => [r.id, r]));
    for (const row of b.rows) {
      if (!keep(row.id)) continue;
      const old = earlier.get(row.id);
      if (!old) continue; // appeared in between: no start to count from
      const name = kind === 'irq' ? splitActions(row.rest).actions.join(', ') : row.id;
      if (kind === 'irq' && splitActions(old.rest).actions.join(', ') !== name) {
        unknown.push(
          `IRQ ${row.id}: its handlers changed during the window (a driver reloaded); not counted`,
        );
        continue;
      }
      const perCpu: Record<string, number> = {};
      let total = 0;
      for (const cpu of cpus) {
        const now = row.counts.get(cpu);
        const then = old.counts.get(cpu);
        // A CPU that came online or went offline in between has no pair of counts.
        if (now === undefined || then === undefined) continue;
        const d = now >= then ? now - then : now + WRAP - then;
        if (d > 0) {
          perCpu[String(cpu)] = d;
          total += d;
        }
      }
      if (total > 0) sources.push({ kind, id: row.id, name: name || `IRQ ${row.id}`, perCpu, total });
    }
  };
  diff('irq', before.interrupts, after.interrupts, (id) => /^\d+$/.test(id));
  diff('softirq', before.softirqs, after.softirqs, (id) => SOFTIRQS.includes(id));
  sources.sort((x, y) => y.total - x.total || x.id.localeCompare(y.id, 'en', { numeric: true }));
  return { windowMs: Math.max(0, Math.round(after.at - before.at)), cpus: cpus.toString(), sources, unknown };
}
