// The change list of `plan` as a person reads it on a large host: a 96-CPU host's first plan holds
// ~160 changes, 95 % of them one IRQ or queue after another for the same reason. Runs of such
// changes are one line each (`--verbose` lists every change; `--json` always does), and hex masks
// carry their CPU list, since `default_smp_affinity: 3 → 1` reads as a move onto CPU 1 (it is CPU 0).
import { CpuSet } from '../model/cpuset.js';
import { cgroupTarget, describeChange, showValue } from '../model/describe.js';
import type { Change } from '../model/plan.js';
import { plural } from '../model/units.js';

/** Fewer changes in a row than this are listed one by one even when alike. */
const MIN_GROUP = 3;
/** Distinct values a grouped line names before it only counts them. */
const MAX_VALUES_SHOWN = 2;

const MASK_SETTINGS = new Set(['rps_cpus', 'xps_cpus', 'cpumask', 'default_smp_affinity']);

/** A value as shown in a plan: a hex CPU mask followed by the CPUs it names. */
export function showPlanned(c: Change, v: string | null): string {
  if (v === null || c.backend !== 'irq' || !MASK_SETTINGS.has(c.setting)) return showValue(v);
  try {
    const cpus = CpuSet.parseMask(v);
    return `${v} (${cpus.isEmpty ? 'no CPU' : `${cpus.size === 1 ? 'CPU' : 'CPUs'} ${cpus}`})`;
  } catch {
    return showValue(v);
  }
}

/** One change on one line: target setting: from → to, or a systemd change as its command. */
function changeLine(c: Change): string {
  return c.backend === 'systemd'
    ? `${describeChange(c)}  (now ${showValue(c.from)})`
    : `${cgroupTarget(c)} ${c.setting}: ${showPlanned(c, c.from)} → ${showPlanned(c, c.to)}`;
}

/**
 * What changes share to be shown as one line: backend, file, the reason past the IRQ's own name, and
 * for IRQ affinities the new value ("→ 0-1,4-7 or 0-1" would not say which IRQ gets which). A NIC's
 * queue masks may differ queue by queue (XPS: one CPU each) and still read as one line.
 */
function groupKey(c: Change): string | null {
  if (c.backend !== 'irq' || !/\d$/.test(c.target)) return null;
  const to = c.setting === 'smp_affinity_list' ? c.to : '';
  return [c.setting, c.target.replace(/\d+$/, ''), c.workload ?? '', reason(c), to].join('\0');
}

/** A note without the `IRQ 131 (ice-ens3f0-TxRx-0): ` each IRQ's own note starts with. */
function reason(c: Change): string {
  return (c.note ?? '').replace(/^IRQ \d+ \([^)]*\): /, '');
}

/** Several values as one: the value, two of them, or the first with how many there are. */
function values(c: Change, vs: (string | null)[]): string {
  const distinct = [...new Set(vs)];
  if (distinct.length <= MAX_VALUES_SHOWN) return distinct.map((v) => showPlanned(c, v)).join(' or ');
  return `${showPlanned(c, distinct[0] ?? null)}, … (${distinct.length} different)`;
}

/** A run of alike changes on one line: `49 × /proc/irq/{130-178} smp_affinity_list: … → 24,72  [why]`. */
function groupLine(run: Change[]): string {
  const first = run[0]!;
  const prefix = first.target.replace(/\d+$/, '');
  const ids = CpuSet.of(run.map((c) => Number(c.target.slice(prefix.length))));
  const what = `${run.length} × ${prefix}{${ids}} ${first.setting}`;
  const note = reason(first);
  return `${what}: ${values(
    first,
    run.map((c) => c.from),
  )} → ${values(
    first,
    run.map((c) => c.to),
  )}${note ? `  [${note}]` : ''}`;
}

/** Consecutive changes, each run of alike IRQ or queue changes as one entry when verbose is off. */
function runs(changes: readonly Change[], verbose: boolean): Change[][] {
  const out: Change[][] = [];
  for (const c of changes) {
    const last = out.at(-1);
    const key = verbose ? null : groupKey(c);
    if (last && key !== null && groupKey(last[0]!) === key) last.push(c);
    else out.push([c]);
  }
  // A short run reads better listed.
  return out.flatMap((r) => (r.length < MIN_GROUP ? r.map((c) => [c]) : [r]));
}

/** The numbered change list, in apply's order. */
export function formatChanges(changes: readonly Change[], verbose: boolean): string[] {
  let at = 0;
  const entries = runs(changes, verbose).map((run) => {
    const label = run.length === 1 ? `${at + 1}` : `${at + 1}-${at + run.length}`;
    at += run.length;
    const one = run[0]!;
    const text = run.length === 1 ? `${changeLine(one)}${one.note ? `  [${one.note}]` : ''}` : groupLine(run);
    return { label, text };
  });
  const width = Math.max(3, ...entries.map((e) => e.label.length));
  return entries.map((e) => `  ${e.label.padStart(width)}. ${e.text}`);
}

/** How many changes of each kind, for the plan's first lines: `5 cgroup, 56 IRQ affinity, 48 XPS`. */
export function changeCounts(changes: readonly Change[]): string {
  const counts = new Map<string, number>();
  for (const c of changes) counts.set(kind(c), (counts.get(kind(c)) ?? 0) + 1);
  return [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
}

function kind(c: Change): string {
  if (c.backend === 'cgroupfs') return 'cgroup';
  if (c.backend === 'systemd') return 'systemd';
  if (c.backend === 'raid') return 'RAID';
  const irqKinds: Record<string, string> = {
    smp_affinity_list: 'IRQ affinity',
    rps_cpus: 'RPS',
    xps_cpus: 'XPS',
    cpumask: 'workqueue',
    default_smp_affinity: 'IRQ default',
  };
  return irqKinds[c.setting] ?? c.setting;
}

/** The plan's summary line: changes per kind, then the warnings and notes printed below. */
export function summaryLine(changes: readonly Change[], warnings: number, notes: number): string {
  const what =
    changes.length === 0 ? 'no changes' : `${plural(changes.length, 'change')} (${changeCounts(changes)})`;
  const notesPart = notes > 0 ? `, ${plural(notes, 'note')} (at the end)` : '';
  return `Summary: ${what}; ${warnings > 0 ? plural(warnings, 'warning') : 'no warnings'}${notesPart}`;
}
