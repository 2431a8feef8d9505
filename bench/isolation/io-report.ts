/**
 * The I/O bench's part of the report: per arm, the appender's write, fsync and read percentiles and
 * their ratios to "alone", what the batch wrote meanwhile (from the kernel's per-cgroup counters),
 * and the io settings the isolated arm read back from its cgroups.
 */
import { type Histogram, type Percentiles, parseHistogram, percentiles } from './histogram.js';
import type { IoArmName } from './params.js';

export const IO_OPS = ['write', 'fsync', 'read'] as const;
export type IoOp = (typeof IO_OPS)[number];

export const IO_ARM_LABELS: Record<IoArmName, string> = {
  alone: 'appender alone',
  unisolated: 'appender + random-write batch, no io settings',
  isolated: 'appender + random-write batch, io settings on the bench cgroups',
};

export interface IoArmResult {
  name: IoArmName;
  label: string;
  ok: boolean;
  error?: string;
  ops?: Record<IoOp, Percentiles>;
  /** Each op's p50/p99/p99.9 divided by the same of "alone". */
  ratioToAlone?: Record<IoOp, { p50: number; p99: number; p999: number }>;
  /** What the batch cgroup wrote to the disks under test while the appender ran. */
  batch?: { wiops: number; wbps: number; seconds: number };
  /** io settings as read back from the kernel (isolated arm). */
  settings?: string;
  appender?: Record<string, unknown>;
  histograms?: Record<IoOp, Histogram>;
}

export interface IoReport {
  info: string;
  batchInfo: string;
  /** Why a mechanism was not used on this host (v1 has no io.latency, weights need BFQ, …). */
  notes: string[];
  arms: IoArmResult[];
  summary: string;
}

function tryJson(text: string | undefined): Record<string, unknown> | null {
  try {
    const v = JSON.parse(text ?? '');
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** `wios=N wbytes=N ms=N` from the arms script, as rates; undefined when garbled or empty. */
export function parseBatchCounters(text: string | undefined): IoArmResult['batch'] {
  const m = /wios=(\d+) wbytes=(\d+) ms=(\d+)/.exec(text ?? '');
  if (!m || Number(m[3]) <= 0) return undefined;
  const seconds = Number(m[3]) / 1000;
  return { wiops: Number(m[1]) / seconds, wbps: Number(m[2]) / seconds, seconds };
}

function ioArm(name: IoArmName, s: Record<string, string>): IoArmResult {
  const base: IoArmResult = { name, label: IO_ARM_LABELS[name], ok: false };
  const settingsRc = s[`io-settings-${name}-rc`];
  const settings = s[`io-settings-${name}`]?.trim();
  if (settings !== undefined) base.settings = settings;
  if (settingsRc !== undefined && settingsRc.trim() !== '0')
    return { ...base, error: `io settings failed: ${settings ?? ''}` };
  const raw = s[`io-probe-${name}`];
  if (raw === undefined) return { ...base, error: 'the arm did not run (no appender output)' };
  const rc = (s[`io-probe-${name}-rc`] ?? '').trim();
  const out = tryJson(raw);
  if (!out || !rc.startsWith('0'))
    return { ...base, error: `appender failed (exit ${rc || '?'}): ${raw.trim().slice(0, 300)}` };
  const rawOps = out.ops as Record<string, { buckets?: unknown; maxNs?: unknown }> | undefined;
  if (!rawOps) return { ...base, error: 'appender output has no ops' };
  const histograms = {} as Record<IoOp, Histogram>;
  const ops = {} as Record<IoOp, Percentiles>;
  for (const op of IO_OPS) {
    histograms[op] = parseHistogram(rawOps[op]?.buckets, rawOps[op]?.maxNs);
    ops[op] = percentiles(histograms[op]);
  }
  const { ops: _o, ...appender } = out;
  const batch = parseBatchCounters(s[`io-batch-${name}`]);
  if (ops.write.count === 0 || ops.fsync.count === 0)
    return { ...base, error: 'the appender recorded no writes or no fsyncs', appender };
  return { ...base, ok: true, ops, histograms, appender, ...(batch && name !== 'alone' ? { batch } : {}) };
}

export function buildIoReport(
  sections: Record<string, string>,
  arms: readonly IoArmName[],
  notes: string[],
): IoReport {
  const results = arms.map((a) => ioArm(a, sections));
  const alone = results.find((a) => a.name === 'alone')?.ops;
  for (const a of results) {
    if (!alone || !a.ops) continue;
    const ratios = {} as Record<IoOp, { p50: number; p99: number; p999: number }>;
    for (const op of IO_OPS) {
      const r = (k: 'p50' | 'p99' | 'p999') => a.ops![op][k] / Math.max(1, alone[op][k]);
      ratios[op] = { p50: r('p50'), p99: r('p99'), p999: r('p999') };
    }
    a.ratioToAlone = ratios;
  }
  const parts = results
    .filter((a) => a.name !== 'alone' && a.ratioToAlone)
    .map(
      (a) =>
        `${a.name}: fsync p99 ${a.ratioToAlone!.fsync.p99.toFixed(2)}× alone, write p99 ${a.ratioToAlone!.write.p99.toFixed(2)}× alone`,
    );
  return {
    info: (sections['io-info'] ?? '').trim(),
    batchInfo: (sections['io-batch-info'] ?? '').trim(),
    notes,
    arms: results,
    summary: parts.length > 0 ? `${parts.join('; ')}.` : 'no ratios: an I/O arm failed or only "alone" ran.',
  };
}

function fmtNs(ns: number): string {
  if (ns >= 1e9) return `${(ns / 1e9).toFixed(2)} s`;
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(2)} ms`;
  return `${(ns / 1e3).toFixed(0)} µs`;
}

function fmtRate(bps: number): string {
  return bps >= 1e6 ? `${(bps / 1e6).toFixed(1)} MB/s` : `${(bps / 1e3).toFixed(0)} kB/s`;
}

export function formatIoText(
  io: IoReport,
  params: { rate: number; appendBytes: number; fsyncMs: number; warmupS: number; durationS: number },
): string[] {
  const L: string[] = [];
  L.push('I/O bench (Kafka-shaped appender beside random direct writes on the same disk):');
  L.push(`  ${io.info}`);
  L.push(
    `  appender: ${params.rate} appends/s of ${params.appendBytes} B (open loop), fdatasync every ${params.fsyncMs} ms, reads of the last 64 KiB 100×/s; warm-up ${params.warmupS} s, measured ${params.durationS} s per arm`,
  );
  if (io.batchInfo) L.push(`  batch: ${io.batchInfo.split('\n')[0]?.replace(/^iobatch: [\w-]+: /, '')}`);
  for (const n of io.notes) L.push(`  note: ${n}`);
  L.push('');
  const head = ['arm', 'op', 'p50', 'p99', 'p99.9', 'max', 'p99/alone', 'p99.9/alone', 'count'];
  const rows: string[][] = [];
  for (const a of io.arms) {
    if (!a.ops) {
      rows.push([a.name, `FAILED: ${(a.error ?? '').replace(/\s+/g, ' ')}`]);
      continue;
    }
    for (const op of IO_OPS) {
      const p = a.ops[op];
      const r = a.ratioToAlone?.[op];
      rows.push([
        op === 'write' ? a.name : '',
        op,
        fmtNs(p.p50),
        fmtNs(p.p99),
        fmtNs(p.p999),
        fmtNs(p.max),
        r ? `${r.p99.toFixed(2)}×` : '-',
        r ? `${r.p999.toFixed(2)}×` : '-',
        String(p.count),
      ]);
    }
  }
  const widths = head.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => (r.length > 2 ? (r[i] ?? '').length : 0))),
  );
  const line = (cells: string[]) =>
    cells.length === 2
      ? `${cells[0]!.padEnd(widths[0]!)}  ${cells[1]}`
      : cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  L.push(line(head));
  for (const r of rows) L.push(line(r));
  L.push('');
  for (const a of io.arms) {
    if (!a.batch && !a.settings) continue;
    L.push(`  ${a.name} — ${a.label}`);
    if (a.batch)
      L.push(
        `    batch wrote ${a.batch.wiops.toFixed(0)} IOPS, ${fmtRate(a.batch.wbps)} while the appender ran`,
      );
    for (const s of (a.settings ?? '').split('\n').filter(Boolean)) L.push(`    ${s}`);
  }
  L.push(`I/O result: ${io.summary}`);
  return L;
}
