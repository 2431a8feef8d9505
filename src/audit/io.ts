// I/O on Kafka's disks over the check's window: each workload's io.stat (v1: blkio throttle
// counters) per disk of the exclusive workloads' data directories, and each workload's io.pressure,
// read twice and differenced, as the interrupts are (irq/delivered.ts). The judgement: Kafka's tasks
// stalled on I/O a large share of the window while a batch workload did I/O on Kafka's own disks is
// the contention the io settings exist to prevent, and worth a warning; either alone is not.
import path from 'node:path';
import {
  type IoCounters,
  type IoStat,
  type IoStatRead,
  readBlkioStat,
  readIoStat,
} from '../cgroup/iostat.js';
import { type Psi, parsePsi } from '../cgroup/psi.js';
import type { Finding } from '../model/finding.js';
import { ReadRefused, readBoundedIfPresent } from '../sys/read.js';

/**
 * Kafka's io pressure is high from this share of the window on: some of its tasks waited on I/O
 * 100 ms of every second, which producers see as append latency (a quiet broker reads under 1 %).
 */
export const KAFKA_IO_PRESSURE_HIGH = 0.1;
/**
 * A batch workload does I/O on Kafka's disks from this rate on, summed over those disks: 1 MiB/s, or
 * 5 requests a second (3 % of a 7200 rpm disk's ~150 random IOPS, enough to queue before Kafka's fsync).
 */
export const BATCH_IO_BYTES_PER_SEC = 1024 * 1024;
export const BATCH_IO_OPS_PER_SEC = 5;
/** Shorter windows (the agent's first audit) are reported but not judged: rates over them are noise. */
export const MIN_JUDGED_WINDOW_MS = 250;

/** Whose I/O is read: a workload's cgroup directory (v2) or blkio cgroup directory (v1). */
export interface IoTarget {
  workload: string;
  class: 'exclusive' | 'batch';
  /** The cgroup as reports name it (`/kafka.slice`). */
  target: string;
  /** Its directory under --root; null when the workload has no cgroup to read (v1 process match). */
  dir: string | null;
  v1: boolean;
  /** Why `dir` is null. */
  why?: string;
}

interface WorkloadRead {
  target: string;
  stat: IoStat | null;
  psi: Psi | null;
  problems: string[];
  notes: string[];
}

/** One read of every target's counters; the closing read of one window is the next one's start. */
export interface IoCounts {
  /** Monotonic milliseconds when read. */
  at: number;
  workloads: Record<string, WorkloadRead>;
}

/** I/O over the window on one disk. */
export type IoUse = IoCounters;

export interface IoPressure {
  /** Share of the window some (full: all) of the workload's tasks stalled on I/O; null: not measurable. */
  some: number | null;
  full: number | null;
  /** Stall time over the window, microseconds (the `total=` difference). */
  someStalledUs: number | null;
  fullStalledUs: number | null;
  /** The kernel's 10 s averages at the window's end, as shares (0-1). */
  someAvg10: number | null;
  fullAvg10: number | null;
}

export interface IoWorkloadReport {
  name: string;
  class: 'exclusive' | 'batch';
  target: string;
  /** By disk name: the I/O over the window; null when it is unknown (a failed read is not zero). */
  disks: Record<string, IoUse | null>;
  /** null: the workload's io.pressure could not be read (PSI off, cgroup v1, a failed read). */
  pressure: IoPressure | null;
}

export interface IoDiskRef {
  name: string;
  /** MAJ:MIN. */
  dev: string;
  /** The exclusive workloads whose data lives on it. */
  of: string[];
}

export interface IoReport {
  windowMs: number;
  disks: IoDiskRef[];
  workloads: IoWorkloadReport[];
  /** What could not be read or compared, one line each. */
  unknown: string[];
  /** Facts about how the counters were read (v1 without recursive counters). */
  notes: string[];
}

const PSI_MAX = { maxBytes: 4096 };

function readPressure(dir: string, shown: string, problems: string[]): Psi | null {
  let text: string | null;
  try {
    text = readBoundedIfPresent(path.join(dir, 'io.pressure'), PSI_MAX);
  } catch (err) {
    problems.push(
      `${shown}/io.pressure: ${err instanceof ReadRefused ? `${err.code} (${err.reason})` : (err as Error).message}`,
    );
    return null;
  }
  if (text === null) {
    problems.push(`${shown}/io.pressure does not exist (PSI is off: boot without psi=0, or CONFIG_PSI)`);
    return null;
  }
  const psi = parsePsi(text);
  if (!psi.some) {
    problems.push(`${shown}/io.pressure does not read as pressure stall information ("some avg10=…")`);
    return null;
  }
  return psi;
}

/** Every target's io counters and io.pressure now. */
export function readIoCounts(targets: readonly IoTarget[]): IoCounts {
  const workloads: Record<string, WorkloadRead> = {};
  for (const t of targets) {
    const r: WorkloadRead = { target: t.target, stat: null, psi: null, problems: [], notes: [] };
    workloads[t.workload] = r;
    if (t.dir === null) {
      r.problems.push(`${t.workload}: ${t.why ?? 'no cgroup to read'}`);
      continue;
    }
    const read: IoStatRead & { note?: string } = t.v1
      ? readBlkioStat(t.dir, t.target)
      : readIoStat(t.dir, t.target);
    if (read.stat === null) r.problems.push(read.problem);
    else r.stat = read.stat;
    if (read.note) r.notes.push(read.note);
    // cgroup v1 has no per-cgroup pressure files.
    if (!t.v1) r.psi = readPressure(t.dir, t.target, r.problems);
  }
  return { at: performance.now(), workloads };
}

function stalled(a: Psi | null, b: Psi | null, kind: 'some' | 'full'): number | null {
  const x = a?.[kind];
  const y = b?.[kind];
  // A smaller total: the cgroup was made again in between, so the window has no start.
  if (!x || !y || y.total < x.total) return null;
  return y.total - x.total;
}

/** The window's differences, for the workloads in `targets` and the disks in `disks`. */
export function ioOver(
  before: IoCounts,
  after: IoCounts,
  targets: readonly IoTarget[],
  disks: readonly IoDiskRef[],
): IoReport {
  const windowMs = Math.max(0, Math.round(after.at - before.at));
  const unknown: string[] = [];
  const notes = new Set<string>();
  const workloads: IoWorkloadReport[] = [];
  for (const t of targets) {
    const a = before.workloads[t.workload];
    const b = after.workloads[t.workload];
    const report: IoWorkloadReport = {
      name: t.workload,
      class: t.class,
      target: t.target,
      disks: {},
      pressure: null,
    };
    workloads.push(report);
    for (const n of b?.notes ?? []) notes.add(n);
    for (const p of new Set([...(a?.problems ?? []), ...(b?.problems ?? [])])) unknown.push(p);
    // A target that moved (a new policy, another unit cgroup) has no start in this window.
    const same = a && b && a.target === b.target;
    if (a && b && !same) unknown.push(`${t.workload}: its cgroup changed during the window; not counted`);
    for (const d of disks) {
      const x = same ? a.stat?.get(d.dev) : undefined;
      const y = same ? b.stat?.get(d.dev) : undefined;
      if (!same || !a.stat || !b.stat) {
        report.disks[d.name] = null;
        continue;
      }
      const zero = { rbytes: 0, wbytes: 0, rios: 0, wios: 0 };
      const from = x ?? zero;
      const to = y ?? zero;
      if ((['rbytes', 'wbytes', 'rios', 'wios'] as const).some((k) => to[k] < from[k])) {
        unknown.push(
          `${t.workload}: ${d.name} (${d.dev}) counters went down during the window (the cgroup was made again); not counted`,
        );
        report.disks[d.name] = null;
        continue;
      }
      report.disks[d.name] = {
        rbytes: to.rbytes - from.rbytes,
        wbytes: to.wbytes - from.wbytes,
        rios: to.rios - from.rios,
        wios: to.wios - from.wios,
      };
    }
    const psiA = same ? a.psi : null;
    const psiB = same ? b.psi : (b?.psi ?? null);
    if (psiB?.some) {
      const some = stalled(psiA, psiB, 'some');
      const full = stalled(psiA, psiB, 'full');
      const share = (us: number | null) =>
        us === null || windowMs === 0 ? null : Math.min(1, us / (windowMs * 1000));
      report.pressure = {
        some: share(some),
        full: share(full),
        someStalledUs: some,
        fullStalledUs: full,
        someAvg10: psiB.some.avg10 / 100,
        fullAvg10: psiB.full ? psiB.full.avg10 / 100 : null,
      };
    }
  }
  return { windowMs, disks: [...disks], workloads, unknown, notes: [...notes] };
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

function mib(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 2 ** 20).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(0)} KiB`;
}

/** One disk's I/O in words: "sdb 12.0 MiB read in 40 requests, 3.0 MiB written in 12". */
export function describeUse(disk: string, u: IoUse): string {
  return `${disk} ${mib(u.rbytes)} read in ${u.rios}, ${mib(u.wbytes)} written in ${u.wios}`;
}

/** The share of the window Kafka stalled on I/O: measured over the window, else the kernel's avg10. */
function stallShare(p: IoPressure): { share: number; how: string } {
  if (p.some !== null) return { share: p.some, how: 'of the window' };
  return { share: p.someAvg10 ?? 0, how: 'avg10' };
}

/** Findings of one window, per exclusive workload with disks. */
export function ioFindings(r: IoReport): Finding[] {
  const out: Finding[] = [];
  const secs = `${(r.windowMs / 1000).toFixed(1)} s`;
  if (r.unknown.length > 0) {
    out.push({
      severity: 'info',
      message: `io on Kafka's disks partly unknown: ${r.unknown.slice(0, 3).join('; ')}${r.unknown.length > 3 ? `; and ${r.unknown.length - 3} more (--json)` : ''}`,
    });
  }
  if (r.windowMs < MIN_JUDGED_WINDOW_MS) return out;
  const owners = [...new Set(r.disks.flatMap((d) => d.of))];
  for (const owner of owners) {
    const w = r.workloads.find((x) => x.name === owner);
    if (!w?.pressure) continue;
    const { share, how } = stallShare(w.pressure);
    if (share < KAFKA_IO_PRESSURE_HIGH) continue;
    const mine = r.disks.filter((d) => d.of.includes(owner));
    const busy: string[] = [];
    for (const b of r.workloads.filter((x) => x.class === 'batch')) {
      const uses = mine
        .map((d) => [d.name, b.disks[d.name]] as const)
        .filter((e): e is readonly [string, IoUse] => !!e[1] && e[1].rios + e[1].wios > 0);
      const bytes = uses.reduce((n, [, u]) => n + u.rbytes + u.wbytes, 0);
      const ops = uses.reduce((n, [, u]) => n + u.rios + u.wios, 0);
      const secsW = r.windowMs / 1000;
      if (bytes / secsW >= BATCH_IO_BYTES_PER_SEC || ops / secsW >= BATCH_IO_OPS_PER_SEC)
        busy.push(`${b.name} (${uses.map(([d, u]) => describeUse(d, u)).join('; ')})`);
    }
    const full = w.pressure.full ?? w.pressure.fullAvg10;
    const stall = `${owner}'s tasks waited on I/O ${pct(share)} ${how === 'avg10' ? '(avg10)' : `of ${secs}`}${full !== null ? ` (all of them at once ${pct(full)})` : ''}`;
    if (busy.length > 0) {
      out.push({
        severity: 'warning',
        target: w.target,
        message: `${stall} while batch workloads did I/O on its disks ${mine.map((d) => d.name).join(', ')}: ${busy.join('; ')}; "isolate plan" shows the io settings that protect its disks (docs/disks.md)`,
      });
    } else {
      out.push({
        severity: 'info',
        target: w.target,
        message: `${stall}, and no batch workload did I/O on its disks ${mine.map((d) => d.name).join(', ')} over ${secs} beyond ${mib(BATCH_IO_BYTES_PER_SEC)}/s or ${BATCH_IO_OPS_PER_SEC} requests/s: the disks or ${owner}'s own load, not the batch workloads`,
      });
    }
  }
  return out;
}
