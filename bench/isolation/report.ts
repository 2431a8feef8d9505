/**
 * Turns the arms' console sections into the report: percentiles per arm, ratios to "alone", the
 * topology isolate saw, and a verdict against the target (p99 with isolation ≤ 1.2× alone).
 */
import { type Histogram, type Percentiles, parseHistogram, percentiles } from './histogram.js';
import { buildIoReport, formatIoText, type IoReport } from './io-report.js';
import type { ArmName, Params } from './params.js';

export const TARGET_P99_RATIO = 1.2;

export const ARM_LABELS: Record<ArmName, string> = {
  alone: 'probe alone',
  unisolated: 'probe + batch, no isolation',
  isolated: 'probe + batch, isolate applied (strict: false)',
  strict: 'probe + batch, isolate applied (strict: true)',
};

export interface Where {
  kind: 'guest' | 'host';
  /** kvm or tcg in a guest; absent on a host. */
  accel?: 'kvm' | 'tcg';
  accelReason?: string;
  /** True under TCG: the latencies then measure the emulator, not isolation. */
  emulated: boolean;
  detail: string;
}

export interface ArmResult {
  name: ArmName;
  label: string;
  ok: boolean;
  error?: string;
  /** What the kernel let the bench cgroups use during the arm (cpuset.cpus.effective, partition). */
  cpus: string;
  percentiles?: Percentiles;
  /** Each percentile divided by the same percentile of "alone". */
  ratioToAlone?: { p50: number; p99: number; p999: number; max: number };
  probe?: Record<string, unknown>;
  histogram?: Histogram;
}

export interface Report {
  title: string;
  generatedAt: string;
  where: Where;
  params: Omit<Params, 'outDir'>;
  topology: { text: string; json: unknown };
  batch: string;
  arms: ArmResult[];
  verdict: {
    targetP99Ratio: number;
    unisolatedP99Ratio?: number;
    isolated: Array<{ arm: ArmName; p99Ratio: number; meetsTarget: boolean }>;
    meaningful: boolean;
    summary: string;
  };
  /** The I/O bench, when it ran. */
  io?: IoReport;
  wallSeconds: number;
  /** Seconds since the arms started, at each step. */
  steps: string;
}

function tryJson(text: string | undefined): unknown {
  try {
    return JSON.parse(text ?? '');
  } catch {
    return null;
  }
}

function armResult(name: ArmName, s: Record<string, string>): ArmResult {
  const base = { name, label: ARM_LABELS[name], cpus: (s[`cpus-${name}`] ?? '').trim() };
  const applyRc = s[`apply-${name}-rc`];
  if (applyRc !== undefined && applyRc.trim() !== '0')
    return { ...base, ok: false, error: `isolate apply failed: ${(s[`apply-${name}`] ?? '').trim()}` };
  const raw = s[`probe-${name}`];
  if (raw === undefined) return { ...base, ok: false, error: 'the arm did not run (no probe output)' };
  const rc = (s[`probe-${name}-rc`] ?? '').trim();
  const out = tryJson(raw) as Record<string, unknown> | null;
  if (!out || !rc.startsWith('0'))
    return { ...base, ok: false, error: `probe failed (exit ${rc || '?'}): ${raw.trim().slice(0, 300)}` };
  const histogram = parseHistogram(out.buckets, out.maxNs);
  const { buckets: _b, ...probe } = out;
  const p = percentiles(histogram);
  if (p.count === 0) return { ...base, ok: false, error: 'the probe recorded no requests', probe };
  return { ...base, ok: true, percentiles: p, probe, histogram };
}

export function buildReport(opts: {
  sections: Record<string, string>;
  params: Params;
  where: Where;
  wallMs: number;
  now?: Date;
  /** Why the I/O arm left a mechanism out on this host (from its io plan). */
  ioNotes?: string[];
}): Report {
  const { sections: s, params } = opts;
  const arms = params.arms.map((a) => armResult(a, s));
  const alone = arms.find((a) => a.name === 'alone')?.percentiles;
  for (const a of arms) {
    if (!alone || !a.percentiles) continue;
    const r = (k: 'p50' | 'p99' | 'p999' | 'max') => a.percentiles![k] / Math.max(1, alone[k]);
    a.ratioToAlone = { p50: r('p50'), p99: r('p99'), p999: r('p999'), max: r('max') };
  }
  const ratio = (n: ArmName) => arms.find((a) => a.name === n)?.ratioToAlone?.p99;
  const isolated = (['isolated', 'strict'] as const)
    .map((arm) => ({ arm, p99Ratio: ratio(arm) }))
    .filter((x): x is { arm: 'isolated' | 'strict'; p99Ratio: number } => x.p99Ratio !== undefined)
    .map((x) => ({ ...x, meetsTarget: x.p99Ratio <= TARGET_P99_RATIO }));
  const unisolatedP99Ratio = ratio('unisolated');
  const meaningful = !opts.where.emulated;
  const parts = [
    unisolatedP99Ratio !== undefined ? `unisolated p99 ${fmtRatio(unisolatedP99Ratio)} alone` : undefined,
    ...isolated.map(
      (i) => `${i.arm} p99 ${fmtRatio(i.p99Ratio)} alone (${i.meetsTarget ? 'meets' : 'misses'} the target)`,
    ),
  ].filter(Boolean);
  const summary = `${parts.join('; ') || (arms.length === 0 ? 'the CPU bench did not run' : 'no ratios: an arm failed')}.${
    meaningful ? '' : ' Emulated (TCG): these numbers are emulation noise, not a measurement of isolation.'
  }`;
  const { outDir: _o, ...paramsOut } = params;
  return {
    title: 'isolate: isolation-effect benchmark',
    generatedAt: (opts.now ?? new Date()).toISOString(),
    where: opts.where,
    params: paramsOut,
    topology: { text: (s.topology ?? '').trimEnd(), json: tryJson(s['topology-json']) },
    batch: (s['batch-info'] ?? '').trim(),
    arms,
    ...(params.ioArms.length > 0 ? { io: buildIoReport(s, params.ioArms, opts.ioNotes ?? []) } : {}),
    verdict: {
      targetP99Ratio: TARGET_P99_RATIO,
      ...(unisolatedP99Ratio !== undefined ? { unisolatedP99Ratio } : {}),
      isolated,
      meaningful,
      summary,
    },
    wallSeconds: Math.round(opts.wallMs / 1000),
    steps: (s.marks ?? '').trim(),
  };
}

export function fmtRatio(r: number): string {
  return `${r.toFixed(2)}×`;
}

export function fmtNs(ns: number): string {
  if (ns >= 1e9) return `${(ns / 1e9).toFixed(2)} s`;
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(2)} ms`;
  return `${(ns / 1e3).toFixed(0)} µs`;
}

export function formatText(r: Report): string {
  const L: string[] = [];
  L.push(`${r.title} — ${r.generatedAt}`);
  L.push(`where: ${r.where.detail}`);
  if (r.where.emulated)
    L.push('!!! TCG emulation: every number below is emulation noise, not a measurement of isolation. !!!');
  if (r.arms.length === 0) return closeText(r, L);
  const p = r.params;
  L.push(
    `load: ${p.rate} req/s offered, open loop; warm-up ${p.warmupS} s, measured ${p.durationS} s per arm; ` +
      `probe cores when isolated: ${p.cores}${p.probeOpts ? `; probe options: ${p.probeOpts}` : ''}`,
  );
  const probe = r.arms.find((a) => a.probe)?.probe;
  if (probe)
    L.push(
      `probe: ${probe.net} network threads, ${probe.handlers} handlers, ${probe.conns} connections, ` +
        `${probe.partitions} partitions × ${probe.logKiB} KiB, ${probe.payload} B appends, ${probe.fetch} B fetches`,
    );
  if (r.batch) L.push(`batch: ${r.batch.split('\n')[0]?.replace(/^batch: /, '')}`);
  L.push('');
  L.push('topology (isolate topology):');
  for (const line of r.topology.text.split('\n')) L.push(`  ${line}`);
  L.push('');
  const head = ['arm', 'p50', 'p90', 'p99', 'p99.9', 'max', 'p99/alone', 'p99.9/alone', 'requests'];
  const rows = r.arms.map((a) =>
    a.percentiles
      ? [
          a.name,
          fmtNs(a.percentiles.p50),
          fmtNs(a.percentiles.p90),
          fmtNs(a.percentiles.p99),
          fmtNs(a.percentiles.p999),
          fmtNs(a.percentiles.max),
          a.ratioToAlone ? fmtRatio(a.ratioToAlone.p99) : '-',
          a.ratioToAlone ? fmtRatio(a.ratioToAlone.p999) : '-',
          String(a.percentiles.count),
        ]
      : [a.name, `FAILED: ${(a.error ?? '').replace(/\s+/g, ' ')}`],
  );
  const widths = head.map((h, i) =>
    Math.max(h.length, ...rows.map((row) => (row.length > 2 ? (row[i] ?? '').length : 0))),
  );
  const line = (cells: string[]) =>
    cells.length === 2
      ? `${cells[0]!.padEnd(widths[0]!)}  ${cells[1]}`
      : cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  L.push(line(head));
  for (const row of rows) L.push(line(row));
  L.push('');
  L.push('where each arm ran (cpuset.cpus.effective of the bench cgroups):');
  for (const a of r.arms) {
    L.push(`  ${a.name} — ${a.label}`);
    for (const c of a.cpus.split('\n').filter(Boolean)) L.push(`    ${c}`);
    const late = Number(a.probe?.pacerLateMaxNs ?? 0);
    if (late > 1e6)
      L.push(
        `    the load generator itself ran up to ${fmtNs(late)} late (counted in the latencies: open loop)`,
      );
    const lost = Number(a.probe?.lost ?? 0);
    if (lost > 0)
      L.push(`    ${lost} requests unanswered when the probe gave up draining: a stall longer than that`);
  }
  L.push('');
  L.push(`target: p99 with isolation ≤ ${fmtRatio(r.verdict.targetP99Ratio)} alone.`);
  L.push(`result: ${r.verdict.summary}`);
  return closeText(r, L);
}

/** The I/O bench's part (when it ran) and the wall time end the text, whether CPU arms ran or not. */
function closeText(r: Report, L: string[]): string {
  if (r.io && r.params.io)
    L.push(
      '',
      ...formatIoText(r.io, { ...r.params.io, warmupS: r.params.warmupS, durationS: r.params.durationS }),
    );
  L.push(`wall time: ${r.wallSeconds} s${r.steps ? ` (steps: ${r.steps.replace(/\n/g, ', ')})` : ''}`);
  return `${L.join('\n')}\n`;
}
