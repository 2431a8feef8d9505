/**
 * The io settings the isolated I/O arm writes into the bench's own two cgroups, of the kind isolate
 * applies to Kafka's disks: a latency target for the probe (cgroup v2's io.latency), weights only where
 * they act (BFQ, or iocost enabled for the disk), and caps on the batch (v2 io.max, v1 blkio.throttle.*).
 * A mechanism that would do nothing on this disk is not written; a note says why.
 */
import { BATCH_IO_WEIGHT, EXCLUSIVE_IO_WEIGHT } from '../../src/policy/io.js';

export interface IoDisk {
  name: string;
  /** MAJ:MIN. */
  dev: string;
  /** The active scheduler; null when unknown. */
  scheduler: string | null;
  rotational: boolean | null;
  /** v2 only: io.cost.qos enables iocost on this disk. */
  iocost: boolean;
}

export interface IoSetting {
  cgroup: 'probe' | 'batch';
  file: string;
  /** May hold $CAP_WIOPS / $CAP_WBPS: the arms script fills them in from the unisolated arm. */
  value: string;
}

export interface IoPlan {
  settings: IoSetting[];
  notes: string[];
}

// isolate's own defaults for an exclusive workload with disks and for batch (docs/disks.md), so the
// isolated arm measures what an operator who leaves io: out gets.
export const PROBE_WEIGHT = { v1: EXCLUSIVE_IO_WEIGHT, v2: EXCLUSIVE_IO_WEIGHT } as const;
export const BATCH_WEIGHT = { v1: BATCH_IO_WEIGHT, v2: BATCH_IO_WEIGHT } as const;

export interface CapSpec {
  wiops: boolean;
  wbps: boolean;
}

export function ioPlan(
  kind: 'v1' | 'v2',
  disks: readonly IoDisk[],
  opts: { latencyTargetUs: number; cap: CapSpec },
): IoPlan {
  const settings: IoSetting[] = [];
  const notes: string[] = [];
  const wiops = '$CAP_WIOPS';
  const wbps = '$CAP_WBPS';
  for (const d of disks) {
    if (!/^\d+:\d+$/.test(d.dev)) throw new Error(`disk ${d.name}: bad MAJ:MIN ${JSON.stringify(d.dev)}`);
    const bfq = d.scheduler === 'bfq';
    if (kind === 'v2') {
      settings.push({
        cgroup: 'probe',
        file: 'io.latency',
        value: `${d.dev} target=${opts.latencyTargetUs}`,
      });
      if (bfq) {
        // io.bfq.weight is BFQ's own; io.weight is iocost's. Per device, as isolate keys everything.
        settings.push({ cgroup: 'probe', file: 'io.bfq.weight', value: `${d.dev} ${PROBE_WEIGHT.v2}` });
        settings.push({ cgroup: 'batch', file: 'io.bfq.weight', value: `${d.dev} ${BATCH_WEIGHT.v2}` });
      } else if (d.iocost) {
        settings.push({ cgroup: 'probe', file: 'io.weight', value: `${d.dev} ${PROBE_WEIGHT.v2}` });
        settings.push({ cgroup: 'batch', file: 'io.weight', value: `${d.dev} ${BATCH_WEIGHT.v2}` });
      } else
        notes.push(
          `${d.name}: no weights: io.weight acts only with BFQ or iocost, and ${d.name} runs ${d.scheduler ?? 'an unknown scheduler'} with iocost off`,
        );
      const caps = [opts.cap.wbps ? `wbps=${wbps}` : '', opts.cap.wiops ? `wiops=${wiops}` : ''].filter(
        Boolean,
      );
      if (caps.length > 0)
        settings.push({ cgroup: 'batch', file: 'io.max', value: `${d.dev} ${caps.join(' ')}` });
    } else {
      notes.push(
        `${d.name}: cgroup v1 has no latency target (io.latency is cgroup v2's): the probe gets none`,
      );
      if (bfq) {
        settings.push({ cgroup: 'probe', file: 'blkio.bfq.weight', value: String(PROBE_WEIGHT.v1) });
        settings.push({ cgroup: 'batch', file: 'blkio.bfq.weight', value: String(BATCH_WEIGHT.v1) });
      } else
        notes.push(
          `${d.name}: no weights: cgroup v1 weights act only with BFQ (blkio.bfq.weight), and ${d.name} runs ${d.scheduler ?? 'an unknown scheduler'}`,
        );
      if (opts.cap.wiops)
        settings.push({
          cgroup: 'batch',
          file: 'blkio.throttle.write_iops_device',
          value: `${d.dev} ${wiops}`,
        });
      if (opts.cap.wbps)
        settings.push({
          cgroup: 'batch',
          file: 'blkio.throttle.write_bps_device',
          value: `${d.dev} ${wbps}`,
        });
    }
  }
  if (!settings.some((s) => s.cgroup === 'batch'))
    notes.push('the batch gets no setting at all on this host: the isolated arm measures nothing but noise');
  return { settings, notes };
}

/**
 * The plan as a shell function for arms.sh: each line writes one file of a bench cgroup and reads it
 * back. Values are double-quoted so the cap variables expand; nothing else in them is a shell word
 * (MAJ:MIN and numbers, checked above).
 */
export function ioPlanShell(plan: IoPlan): string {
  const lines = plan.settings.map((s) => {
    if (!/^[\w.]+$/.test(s.file) || !/^[\w:= ${}]+$/.test(s.value))
      throw new Error(`io setting ${s.file}=${s.value}: not a cgroup file and value`);
    return `  io_set ${s.cgroup === 'probe' ? '"$P"' : '"$B"'} ${s.file} "${s.value}" || return 1`;
  });
  return `io_isolate() {\n${lines.join('\n')}\n  return 0\n}`;
}
