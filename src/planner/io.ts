// Which cgroup io mechanism can act on each of a workload's disks, and why, as plan notes, and what each
// workload's cgroup gets on those disks: a weight only where one would act (BFQ, or iocost enabled),
// said instead where none would, so the plan never writes a setting that cannot work.
import type { WholeDisk, WorkloadDisks } from '../model/disks.js';
import {
  devicePath,
  formatLatency,
  IO_PROPERTY_SHOWN,
  IOLATENCY_OPTION,
  type IoFacts,
  type IoLatencySupport,
  type IoFile,
  type IoProperty,
  ioEntryOf,
  sameIoEntry,
} from '../model/io.js';
import type { SystemdChange } from '../model/plan.js';
import type { ObservedState } from '../model/observed.js';
import type { UserError } from '../model/errors.js';
import { IO_LIMIT_KEYS, type IoLimitKey, type Policy, type WorkloadSpec } from '../model/policy.js';
import { HDD_LATENCY_USEC, SSD_LATENCY_USEC } from '../policy/io.js';
import { policyError } from './allocate.js';
import { ancestors, parentOf } from './targets.js';

/** The io controller's state from the observed cgroup root: v1 controllers, unreadable, or listed. */
export function ioControllerOf(observed: ObservedState): IoFacts['controller'] {
  const cg = observed.cgroup;
  if (observed.v1 || cg.layout === 'hybrid' || cg.layout === 'legacy') return 'v1';
  if (cg.layout === 'none' || cg.rootControllers.length === 0) return 'unknown';
  return cg.rootControllers.includes('io') ? 'available' : 'missing';
}

/** Why io.latency is an option wherever the kernel has it: it throttles siblings' queue depth, whatever the scheduler. */
const ANY = 'it acts under any scheduler';

/** io.latency in this kernel; facts from before it was observed count as unknown. */
export function latencySupport(facts: IoFacts): IoLatencySupport {
  return facts.latency ?? { state: 'unknown', evidence: 'not observed' };
}

function mechanism(d: WholeDisk, facts: IoFacts): string {
  const dev = d.dev as string;
  const iocostOn = typeof facts.iocost === 'object' && facts.iocost.enabled.includes(dev);
  // The kernel's io.latency is said once per workload with its evidence (ioLatencyNotes); here briefly.
  const l = latencySupport(facts).state;
  const latency =
    l === 'present'
      ? 'io.latency acts under any scheduler'
      : l === 'absent'
        ? 'this kernel has no io.latency'
        : 'io.latency acts only if this kernel has it (unknown)';
  const weights = l === 'present' ? 'io.weight and io.latency' : 'io.weight';
  if (d.scheduler === 'bfq') {
    return `${weights}: BFQ is the active scheduler (weights act through io.bfq.weight); ${latency}`;
  }
  if (iocostOn) {
    return `${weights}: iocost is enabled for ${dev} (enable=1 in ${facts.iocostFile}); ${latency}`;
  }
  const sched = d.scheduler === null ? 'the scheduler is unknown' : `the scheduler is ${d.scheduler}`;
  const head =
    l === 'present'
      ? `io.latency (${ANY})`
      : l === 'absent'
        ? 'io.max caps only (this kernel has no io.latency)'
        : 'io.latency only if this kernel has it (unknown)';
  if (facts.iocost === 'unknown') {
    return `${head}; whether io.weight would act is unknown: ${sched} and ${facts.iocostFile} could not be read`;
  }
  if (d.scheduler === null) {
    return `${head}; whether io.weight would act is unknown: ${sched} and iocost is not enabled for ${dev}`;
  }
  const iocost =
    facts.iocost === 'unsupported'
      ? `this kernel has no iocost (no ${facts.iocostFile})`
      : `iocost is not enabled for ${dev} in ${facts.iocostFile}`;
  const fix =
    facts.iocost === 'unsupported'
      ? 'select bfq in queue/scheduler for weights'
      : 'select bfq in queue/scheduler or enable iocost for weights';
  return `${l === 'present' ? `io.latency only (${ANY})` : head}: io.weight would do nothing, since ${sched} and ${iocost}; ${fix}`;
}

/**
 * `latency: auto` where the kernel has no io.latency, or may not: one note per exclusive workload that
 * no target is planned, why, and what acts instead. (An explicit target there is refused: ioLatencyRefusal.)
 */
export function ioLatencyNotes(policy: Policy, facts: IoFacts): string[] {
  if (facts.controller !== 'available') return [];
  const l = latencySupport(facts);
  if (l.state === 'present') return [];
  return policy.workloads
    .filter((w) => w.class === 'exclusive' && w.io?.latency === 'auto')
    .map((w) =>
      l.state === 'absent'
        ? `io ${w.name}: no latency target is planned (latency: auto): this kernel has no io.latency (${l.evidence}; ${IOLATENCY_OPTION}); its weight acts instead where BFQ or iocost runs, and the batch workloads' caps (io.max) anywhere; latency: off says so in the policy`
        : `io ${w.name}: no latency target is planned (latency: auto): whether this kernel has io.latency cannot be told (${l.evidence}); set latency: 25ms explicitly if you know it is built with ${IOLATENCY_OPTION}=y`,
    );
}

/**
 * An explicit latency target on a kernel without io.latency: refused with the option and the fix, as
 * cgroup v1 refuses it (v1.ts), instead of a plan whose apply systemd or the kernel would reject.
 */
export function ioLatencyRefusal(policy: Policy, facts: IoFacts | undefined): UserError | null {
  if (facts?.controller !== 'available') return null;
  const l = latencySupport(facts);
  if (l.state !== 'absent') return null;
  const w = policy.workloads.find(
    (x) => x.class === 'exclusive' && x.disks && typeof x.io?.latency === 'object',
  );
  if (!w) return null;
  return policyError(
    policy,
    [...w.path, 'io', 'latency'],
    `this kernel has no io.latency (${l.evidence}), so no latency target can be set; set latency: off (the weights and caps still act), or run a kernel built with ${IOLATENCY_OPTION}=y`,
  );
}

/** What else a Kafka disk holds, said beside its note: io settings on it act on those writes too. */
function alsoHolds(d: WorkloadDisks['disks'][number]): string {
  if (!d.alsoHolds?.length) return '';
  return `; ${d.name} also holds ${d.alsoHolds.join(', ')}: the io settings on it act on every write there, the OS's and the batch jobs' own (logs, /tmp) included, not only on Kafka's directories`;
}

/** One note per workload for the controller when it is not usable, else one per disk. */
export function ioPreconditionNotes(list: readonly WorkloadDisks[], facts: IoFacts): string[] {
  const notes: string[] = [];
  for (const w of list) {
    if (w.disks.length === 0) continue;
    const names = w.disks.map((d) => d.name).join(', ');
    if (facts.controller === 'missing') {
      notes.push(
        `io ${w.workload}: the io controller is not in ${facts.controllersFile}, so no io setting can protect ${names} (a kernel without CONFIG_BLK_CGROUP, or io bound to a cgroup v1 hierarchy)`,
      );
      continue;
    }
    if (facts.controller === 'v1') {
      notes.push(
        `io ${w.workload}: this host runs cgroup v1 controllers, where blkio offers weights (BFQ only) and throttles only: no io.latency or iocost for ${names}`,
      );
      continue;
    }
    if (facts.controller === 'unknown') {
      notes.push(
        `io ${w.workload}: ${facts.controllersFile} could not be read, so whether io settings can act on ${names} is unknown`,
      );
      continue;
    }
    for (const d of w.disks) {
      if (d.dev === null) {
        notes.push(`io ${w.workload}: ${d.name}: its MAJ:MIN is unknown, so no io setting can name it`);
        continue;
      }
      notes.push(`io ${w.workload}: ${d.name} (${d.dev}): ${mechanism(d, facts)}${alsoHolds(d)}`);
    }
  }
  return notes;
}

/** One device's io setting a workload's cgroup gets, in the cgroupfs form (model/io.ts). */
export interface IoWant {
  file: IoFile;
  /** MAJ:MIN of the whole disk. */
  dev: string;
  /** The disk's name, for notes. */
  disk: string;
  /** The device's line: "8:16 target=25000", "8:16 1000", "8:16 wbps=83886080". */
  value: string;
}

/** The weight file that acts on a disk (iocost's io.weight first, else BFQ's), or null: none would. */
export function weightFileFor(d: WholeDisk, facts: IoFacts): 'io.weight' | 'io.bfq.weight' | null {
  if (typeof facts.iocost === 'object' && d.dev !== null && facts.iocost.enabled.includes(d.dev))
    return 'io.weight';
  return d.scheduler === 'bfq' ? 'io.bfq.weight' : null;
}

/** The disks io settings go to: every exclusive workload's (the only disks isolate protects), by MAJ:MIN. */
export function protectedDisks(observed: ObservedState): WholeDisk[] {
  const out = new Map<string, WholeDisk>();
  for (const w of observed.disks ?? [])
    for (const d of w.disks) if (d.dev !== null && !out.has(d.dev)) out.set(d.dev, d);
  return [...out.values()];
}

/**
 * What one workload's cgroup gets on each disk: an exclusive workload a latency target and a weight on
 * its own disks, a batch workload a weight and its caps on every exclusive workload's disks. Nothing
 * when the io controller cannot act (ioPreconditionNotes says why), no weight where none would act.
 */
export function ioWantsOf(spec: WorkloadSpec, observed: ObservedState): IoWant[] {
  const facts = observed.io;
  if (!spec.io || !facts || facts.controller !== 'available') return [];
  const disks =
    spec.class === 'exclusive'
      ? (observed.disks?.find((w) => w.workload === spec.name)?.disks ?? []).filter((d) => d.dev !== null)
      : protectedDisks(observed);
  const out: IoWant[] = [];
  for (const d of disks) {
    const dev = d.dev as string;
    const { latency, weight, max } = spec.io;
    // auto plans a target only where the kernel has io.latency; an explicit one was refused where it has none.
    const latencyOn = latency === 'auto' ? latencySupport(facts).state === 'present' : latency !== 'off';
    if (latencyOn && spec.class === 'exclusive') {
      const usec =
        latency === 'auto'
          ? d.rotational === false
            ? SSD_LATENCY_USEC
            : HDD_LATENCY_USEC
          : (latency as { usec: number }).usec;
      out.push({ file: 'io.latency', dev, disk: d.name, value: `${dev} target=${usec}` });
    }
    const wf = weightFileFor(d, facts);
    if (weight !== 'off' && wf) out.push({ file: wf, dev, disk: d.name, value: `${dev} ${weight}` });
    const caps = IO_LIMIT_KEYS.filter((k) => max[k] !== undefined).map((k) => `${k}=${max[k]}`);
    if (caps.length > 0) out.push({ file: 'io.max', dev, disk: d.name, value: `${dev} ${caps.join(' ')}` });
  }
  return out;
}

/**
 * io.latency throttles a cgroup's siblings only: Kafka's target holds back a batch workload only where
 * the two are siblings (`/kafka.slice` and `/hadoop-yarn`). One warning per pair that is not.
 */
export function ioSiblingWarnings(
  pairs: readonly { exclusive: { name: string; target: string }; batch: { name: string; target: string } }[],
): string[] {
  const out: string[] = [];
  for (const { exclusive: e, batch: b } of pairs) {
    if (parentOf(e.target) === parentOf(b.target)) continue;
    const a = [...ancestors(e.target), e.target];
    const meet = [...ancestors(b.target)].reverse().find((p) => a.includes(p)) ?? '/';
    out.push(
      `io ${e.name}: io.latency holds back only ${e.target}'s siblings, and ${b.name} (${b.target}) is none (they meet at ${meet}): its target does not throttle ${b.name}, only the weights and caps do; run ${e.name} in a top-level slice of its own (strict: true) next to ${b.target}`,
    );
  }
  return out;
}

/** systemd's property for each io.max key. */
const CAP_PROPERTY: Record<IoLimitKey, IoProperty> = {
  rbps: 'IOReadBandwidthMax',
  wbps: 'IOWriteBandwidthMax',
  riops: 'IOReadIOPSMax',
  wiops: 'IOWriteIOPSMax',
};

/**
 * A want as the unit properties systemd writes it from (the unit's cgroup is systemd's: it rewrites
 * io files on every reload), each diffed against the unit's entry for that device. systemd enables io
 * from the root down to the unit itself for them, and writes IODeviceWeight= into io.weight and, for
 * BFQ, io.bfq.weight.
 */
export function ioUnitChanges(unit: string, want: IoWant, props: Record<string, string>): SystemdChange[] {
  const path = devicePath(want.dev);
  const entries: [IoProperty, string][] = [];
  const parts = want.value.split(' ').slice(1);
  if (want.file === 'io.latency') {
    const usec = Number(parts[0]!.slice('target='.length));
    entries.push(['IODeviceLatencyTargetSec', `${path} ${formatLatency(usec)}`]);
  } else if (want.file === 'io.max') {
    for (const p of parts) {
      const [k, v] = p.split('=') as [IoLimitKey, string];
      entries.push([CAP_PROPERTY[k], `${path} ${v}`]);
    }
  } else {
    entries.push(['IODeviceWeight', `${path} ${parts[0]}`]);
  }
  const out: SystemdChange[] = [];
  for (const [setting, to] of entries) {
    const from = ioEntryOf(props[IO_PROPERTY_SHOWN[setting]], path);
    if (sameIoEntry(setting, from, to)) continue;
    out.push({
      backend: 'systemd',
      target: unit,
      setting,
      from,
      to,
      note: `${want.disk}: systemd writes ${setting !== 'IODeviceWeight' ? want.file : want.file === 'io.weight' ? 'io.weight' : "io.bfq.weight (scaled: BFQ's weights run 1-1000)"} and enables io from the root down to ${unit}`,
    });
  }
  return out;
}
