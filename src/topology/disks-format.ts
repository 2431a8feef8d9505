// How a workload's disks are shown by `isolate topology` and `isolate plan`: each data directory and
// the device stack under it, then one row per whole disk with what io settings are keyed by (MAJ:MIN)
// and what decides how they act (scheduler, rotational), and its NUMA node beside the workload's cores.
import type { BlockLayer, DataDir, WholeDisk, WorkloadDisks } from '../model/disks.js';
import type { Finding } from '../model/finding.js';

export interface WorkloadDisksJson {
  source: string;
  dirs: DataDir[];
  disks: WholeDisk[];
  findings: Finding[];
}

/** The `--json` shape: by workload name, as the plan's allocation is. */
export function workloadDisksToJson(list: readonly WorkloadDisks[]): Record<string, WorkloadDisksJson> {
  const out: Record<string, WorkloadDisksJson> = {};
  for (const w of list) {
    out[w.workload] = { source: w.source, dirs: w.dirs, disks: w.disks, findings: w.findings };
  }
  return out;
}

/** Layers as a chain; side-by-side ones of one kind (an md mirror's partitions) as one step. */
function layerSteps(layers: readonly BlockLayer[]): string[] {
  const steps: string[] = [];
  for (let i = 0; i < layers.length; ) {
    const l = layers[i]!;
    if (l.detail) {
      steps.push(`${l.name} (${l.kind} ${l.detail})`);
      i++;
      continue;
    }
    let j = i;
    while (j < layers.length && layers[j]!.kind === l.kind && !layers[j]!.detail) j++;
    const names = layers.slice(i, j).map((x) => x.name);
    steps.push(`${names.join(', ')} (${l.kind}${names.length > 1 ? 's' : ''})`);
    i = j;
  }
  return steps;
}

function dirLine(d: DataDir): string {
  const path = d.resolved ? `${d.path} → ${d.resolved}` : d.path;
  if (!d.mount) return `${path}: no disk`;
  const m = d.mount;
  const on = `on ${m.point} (${m.fstype} ${m.source}${m.bindOf ? `, bind of ${m.bindOf}` : ''})`;
  const stack = [...layerSteps(d.layers), d.disks.join(', ') || 'no disk'];
  return `${path}  ${on} → ${stack.join(' → ')}`;
}

const yesNo = (v: boolean | null, yes: string, no: string) => (v === null ? '?' : v ? yes : no);

/**
 * Indented lines for one or more workloads' disks; empty when there are none. `findings: false` where
 * the caller lists them already (a plan's warnings).
 */
export function formatWorkloadDisks(
  list: readonly WorkloadDisks[],
  {
    indent = '  ',
    findings = true,
    raidDrives,
  }: {
    indent?: string;
    findings?: boolean;
    /** Disk name → the RAID logical drive it is (`perccli:/c0/v239`), when the plan tied them. */
    raidDrives?: ReadonlyMap<string, string>;
  } = {},
): string[] {
  const lines: string[] = [];
  for (const w of list) {
    lines.push(`${indent}${w.workload} (${w.source})`);
    for (const d of w.dirs) lines.push(`${indent}  ${dirLine(d)}`);
    if (w.disks.length > 0) {
      const rows = [
        ['disk', 'dev', 'node', 'scheduler', 'rotational', ''],
        ...w.disks.map((d) => [
          d.name,
          d.dev ?? '?',
          d.node === null ? '?' : String(d.node),
          d.scheduler ?? '?',
          yesNo(d.rotational, 'yes (HDD)', 'no (SSD)'),
          d.raid
            ? `RAID virtual drive ${d.raid.vendor} ${d.raid.model}${d.raid.driver ? ` (${d.raid.driver})` : ''}${raidDrives?.has(d.name) ? ` = ${raidDrives.get(d.name)}` : ''}`
            : raidDrives?.has(d.name)
              ? `RAID logical drive ${raidDrives.get(d.name)}`
              : '',
        ]),
      ];
      const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
      for (const r of rows) {
        lines.push(
          `${indent}  ${r
            .map((c, i) => c.padEnd(widths[i]!))
            .join('  ')
            .trimEnd()}`,
        );
      }
    }
    if (findings) for (const f of w.findings) lines.push(`${indent}  ${f.severity}: ${f.message}`);
  }
  return lines;
}
