// Plan notes on buffered writeback in front of Kafka's disks. A batch job's writes land in the page
// cache first and reach the disk later, in bursts the kernel sizes by vm.dirty_*: a burst that takes
// the disk many seconds to write queues ahead of Kafka's appends and fsyncs, whatever the io settings
// say about the writer. With cgroup writeback (cgroup v2, memory and io on the unified hierarchy) a
// cgroup's dirty pages are bounded by the same ratio of its own memory (memory.high / memory.max);
// without a limit, or on cgroup v1, only by the host's. Pure: the facts come in as arguments.
import type { WholeDisk, WorkloadDisks } from '../model/disks.js';
import type { WorkloadAllocation } from '../model/plan.js';
import type { VmDirty, WbtState } from '../model/writeback.js';
import { formatBytes } from '../model/units.js';

/** "A few seconds": more dirty data than a disk writes in this long is a queue Kafka waits behind. */
export const DIRTY_SECONDS = 5;
/**
 * What a disk is assumed to write a second, sequentially: sysfs says nothing of it. A 7200 rpm disk's
 * outer tracks reach ~200 MB/s (a RAID virtual drive of several is faster: the note names the
 * assumption); a SATA SSD ~500 MB/s, NVMe more, so 1 GB/s for solid state is on the safe side for
 * neither. A disk of unknown kind is taken for an HDD, so the note errs towards being shown.
 */
export const ASSUMED_WRITE_RATE = { hdd: 200e6, ssd: 1e9 };

export interface WritebackFacts {
  dirty: VmDirty | null;
  hostMemoryBytes: number;
  /** cgroup v1: no cgroup writeback, every cgroup shares the host-wide limit. */
  v1: boolean;
  wbt: ReadonlyMap<string, WbtState>;
}

function rateOf(d: WholeDisk): number {
  return d.rotational === false ? ASSUMED_WRITE_RATE.ssd : ASSUMED_WRITE_RATE.hdd;
}

function kindOf(d: WholeDisk): string {
  return d.rotational === false
    ? 'solid state'
    : d.rotational === true
      ? 'HDD'
      : 'of unknown kind, taken for an HDD';
}

const MB = (b: number) => `${Math.round(b / 1e6)} MB/s`;

function sysctls(d: VmDirty): string {
  const v = (n: number | null) => (n === null ? 'unknown' : String(n));
  return `vm.dirty_ratio=${v(d.ratio)}, dirty_bytes=${v(d.bytes)}, dirty_background_ratio=${v(d.backgroundRatio)}, dirty_background_bytes=${v(d.backgroundBytes)}`;
}

/**
 * What one cgroup may dirty: a share of its memory limit (memory.high, else memory.max) with cgroup
 * writeback, else of the host's memory. dirty_bytes, when set, is the kernel's limit instead of the
 * ratio, and a cgroup's share of it is the same fraction of the cgroup's memory.
 */
function cgroupDirtyLimit(
  w: WorkloadAllocation,
  d: VmDirty,
  f: WritebackFacts,
): { bytes: number; how: string } | null {
  const host = f.hostMemoryBytes;
  if (host <= 0) return null;
  let fraction: number;
  let of: string;
  if (d.bytes !== null && d.bytes > 0) {
    fraction = Math.min(1, d.bytes / host);
    of = `vm.dirty_bytes ${formatBytes(d.bytes)}`;
  } else if (d.ratio !== null) {
    fraction = d.ratio / 100;
    of = `vm.dirty_ratio ${d.ratio}%`;
  } else return null;
  const limits = [w.memory.high, w.memory.max].filter((x): x is number => typeof x === 'number');
  if (f.v1) {
    const bytes = d.bytes ? Math.min(d.bytes, host) : fraction * host;
    return {
      bytes,
      how: `${of} of the host's ${formatBytes(host)}: cgroup v1 has no cgroup writeback, so every cgroup shares the host-wide limit`,
    };
  }
  if (limits.length === 0) {
    return {
      bytes: fraction * host,
      how: `${of} of the host's ${formatBytes(host)}: ${w.name} has no memory.high or memory.max, and cgroup writeback bounds a cgroup's dirty page cache by those`,
    };
  }
  const limit = Math.min(host, ...limits);
  const which = typeof w.memory.high === 'number' && w.memory.high === limit ? 'memory.high' : 'memory.max';
  return {
    bytes: fraction * limit,
    how: `${of} of its ${which} ${formatBytes(limit)}: cgroup writeback bounds a cgroup's dirty page cache by its memory.high / memory.max`,
  };
}

/** INFO notes: a batch cgroup that may dirty more than a Kafka disk writes in DIRTY_SECONDS, and wbt per disk. */
export function writebackNotes(
  disks: readonly WorkloadDisks[],
  allocation: readonly WorkloadAllocation[],
  f: WritebackFacts,
): string[] {
  const notes: string[] = [];
  const kafkaDisks = new Map<string, { disk: WholeDisk; of: string[] }>();
  for (const w of disks)
    for (const d of w.disks) {
      const e = kafkaDisks.get(d.name) ?? { disk: d, of: [] };
      e.of.push(w.workload);
      kafkaDisks.set(d.name, e);
    }
  if (kafkaDisks.size === 0) return notes;
  const owners = [...new Set(disks.map((w) => w.workload))].join(', ');
  const d = f.dirty;
  if (d === null) {
    notes.push(
      `dirty pages: /proc/sys/vm has no dirty_* files, so how much a batch cgroup may dirty ahead of ${owners}'s disks is unknown`,
    );
  } else {
    if (d.problems.length > 0) notes.push(`dirty pages: ${d.problems.join('; ')}`);
    const slowest = [...kafkaDisks.values()].sort((a, b) => rateOf(a.disk) - rateOf(b.disk))[0]!.disk;
    for (const w of allocation.filter((x) => x.class === 'batch')) {
      const limit = cgroupDirtyLimit(w, d, f);
      if (!limit) continue;
      const rate = rateOf(slowest);
      const seconds = limit.bytes / rate;
      if (seconds <= DIRTY_SECONDS) continue;
      notes.push(
        `dirty pages ${w.name}: ${sysctls(d)} let ${w.name} dirty up to ${formatBytes(Math.round(limit.bytes))} (${limit.how}); ${slowest.name} (${kindOf(slowest)}, ~${MB(rate)} assumed) needs ~${Math.round(seconds)} s to write that, more than ${DIRTY_SECONDS} s, and its writeback queues ahead of ${owners}'s appends and fsyncs: lower ${w.name}'s memory.high, or set vm.dirty_bytes and vm.dirty_background_bytes`,
      );
    }
  }
  for (const [name, { disk }] of kafkaDisks) {
    const s = f.wbt.get(name);
    if (!s) continue;
    if (s.state === 'absent')
      notes.push(`wbt ${name}: no ${s.file} (this kernel has no writeback throttling)`);
    else if (s.state === 'unknown')
      notes.push(
        `wbt ${name}: ${s.file} could not be read (${s.problem}): whether writeback throttling acts is unknown`,
      );
    else if (s.usec === 0)
      notes.push(
        `wbt ${name}: ${s.file} is 0: writeback throttling is off${disk.scheduler === 'bfq' ? ' (BFQ turns it off)' : ''}, so only the io settings (io.latency, io.weight) pace buffered writeback against ${owners}'s I/O`,
      );
    else if (disk.scheduler === 'bfq')
      // BFQ switches writeback throttling off when it takes a queue (wbt_disable_default), but 6.1's
      // sysfs still prints the default latency (seen in the kafka-disks guest; later kernels print 0).
      // A write of the file turns it back on, which sysfs cannot show.
      notes.push(
        `wbt ${name}: ${s.file} reads ${s.usec}, but BFQ turns writeback throttling off on its disks (6.1's sysfs still prints the default there), so only the io settings (io.latency, io.weight) pace buffered writeback against ${owners}'s I/O, unless someone wrote ${s.file} since BFQ was chosen`,
      );
    else
      notes.push(
        `wbt ${name}: ${s.file} is ${s.usec} (${(s.usec / 1000).toFixed(s.usec % 1000 ? 1 : 0)} ms): writeback throttling cuts back every cgroup's buffered writeback alike, ${owners}'s log flushes included, whenever reads or syncs on ${name} take longer; it acts before io.latency and io.weight see the I/O (BFQ and iocost turn it off on their disks; writing 0 turns it off by hand)`,
      );
  }
  return notes;
}
