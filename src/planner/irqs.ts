// Quiet cores: where each IRQ, each NIC queue's packet steering and the unbound workqueues may run,
// so that nothing but the exclusive workload's own work lands on its cores. Pure, like the rest of
// the planner: the observation comes in (src/irq/observe.ts), changes with their reasons go out.
import { CpuSet, formatMask } from '../model/cpuset.js';
import {
  type IrqSetting,
  type IrqOwner,
  irqLabel,
  IRQ_DIR,
  irqOwner,
  irqTarget,
  managedIrqParam,
  type ObservedIrq,
  type ObservedIrqs,
  type ObservedNic,
  queueTarget,
  WORKQUEUE_DIR,
} from '../model/irq.js';
import type { Allocation, Change, WorkloadAllocation } from '../model/plan.js';
import type { Policy, WorkloadSpec } from '../model/policy.js';
import type { Topology } from '../model/topology.js';
import { plural } from '../model/units.js';
import { irqbalanceChanges } from './irqbalance.js';

/** How many items a warning names before it says "and N more". */
const LIST_CAP = 8;

interface NicPlan {
  nic: ObservedNic;
  workload: WorkloadAllocation;
  /** Where the NIC's interrupts and steering go. */
  cpus: CpuSet;
  /** `own`: one CPU per IRQ, physical cores first; housekeeping: the whole set to each IRQ. */
  spread: number[] | null;
  why: string;
}

const change = (
  target: string,
  setting: IrqSetting,
  from: string | null,
  to: string,
  note: string,
  workload?: string,
  owner?: IrqOwner,
): Change => ({
  backend: 'irq',
  target,
  setting,
  from,
  to,
  note,
  ...(workload ? { workload } : {}),
  ...(owner ? { owner } : {}),
});

/** A NIC queue's owner: the NIC's PCI function (a name alone may be another NIC's after a reboot). */
const nicOwner = (nic: ObservedNic): IrqOwner | undefined =>
  nic.pci === undefined ? undefined : { pci: nic.pci };

function capped(items: string[]): string {
  return items.length <= LIST_CAP
    ? items.join(', ')
    : `${items.slice(0, LIST_CAP).join(', ')} and ${items.length - LIST_CAP} more`;
}

const irqName = irqLabel;

/** An IRQ's affinity to `want`, its note naming the IRQ and saying why. */
const affinityChange = (irq: ObservedIrq, want: CpuSet, why: string, workload?: string): Change =>
  change(
    irqTarget(irq.irq),
    'smp_affinity_list',
    irq.affinity!.toString(),
    want.toString(),
    `IRQ ${irqName(irq)}: ${why}`,
    workload,
    irqOwner(irq),
  );

/** The changes that keep interrupts, packet steering and unbound kernel work off the exclusive CPUs. */
export function irqChanges(
  topology: Topology,
  policy: Policy,
  allocation: Allocation,
  observed: ObservedIrqs,
  warnings: string[],
  notes: string[],
): Change[] {
  const exclusive = allocation.workloads
    .filter((w) => w.class === 'exclusive')
    .reduce((acc, w) => acc.union(w.cpus), CpuSet.EMPTY);
  if (exclusive.isEmpty) return [];
  // The loader's defaults (policy/load.ts) when a policy is built without it.
  const quiet = {
    irqs: policy.quiet?.irqs ?? true,
    workqueues: policy.quiet?.workqueues ?? policy.strict,
  };
  const changes: Change[] = [];
  if (observed.unknown.length > 0) {
    warnings.push(
      `irq: ${plural(observed.unknown.length, 'item')} could not be read and ${observed.unknown.length === 1 ? 'is' : 'are'} left alone: ${capped(observed.unknown)}`,
    );
  }
  if (quiet.irqs) {
    const nicPlans = planNics(topology, policy, allocation, observed, exclusive, warnings);
    // First: irqbalance, restarted with its ban, no longer moves what the writes below place.
    changes.push(...irqbalanceChanges(observed, exclusive, pinnedIrqs(observed, nicPlans), warnings, notes));
    changes.push(...irqAffinities(topology, allocation, observed, exclusive, nicPlans, warnings, notes));
    changes.push(...steering(observed, exclusive, nicPlans));
    changes.push(...defaultAffinity(topology, allocation, observed, exclusive));
  }
  if (quiet.workqueues) changes.push(...workqueue(topology, observed, exclusive, warnings));
  return changes;
}

/** The IRQs isolate places for a workload's NIC: irqbalance must leave them where they are. */
function pinnedIrqs(observed: ObservedIrqs, nics: Map<string, NicPlan>): number[] {
  return observed.irqs
    .filter((i) => i.nic !== null && nics.has(i.nic) && !i.managed && i.affinity !== null)
    .map((i) => i.irq);
}

/** Each exclusive workload's NICs and the CPUs their interrupts go to. */
function planNics(
  topology: Topology,
  policy: Policy,
  allocation: Allocation,
  observed: ObservedIrqs,
  exclusive: CpuSet,
  warnings: string[],
): Map<string, NicPlan> {
  const out = new Map<string, NicPlan>();
  const specs = new Map(policy.workloads.map((w) => [w.name, w]));
  for (const a of allocation.workloads) {
    if (a.class !== 'exclusive' || a.cpus.isEmpty) continue;
    const spec = specs.get(a.name) as WorkloadSpec;
    const names = spec.irqs?.nics ?? spec.near.filter((d) => d.kind === 'nic').map((d) => d.name);
    const on = spec.irqs?.on ?? 'housekeeping';
    for (const name of names) {
      const nic = observed.nics.find((n) => n.name === name);
      if (!nic) {
        warnings.push(
          `${a.name}: NIC ${name} is not on this host (/sys/class/net); its interrupts are not placed`,
        );
        continue;
      }
      const owner = out.get(name);
      if (owner) {
        warnings.push(
          `${a.name}: NIC ${name} already serves ${owner.workload.name}; its interrupts stay where ${owner.workload.name}'s policy puts them`,
        );
        continue;
      }
      const source = spec.irqs?.nics ? `irqs.nics` : `near: nic:${name}`;
      if (on === 'own') {
        out.set(name, {
          nic,
          workload: a,
          cpus: a.cpus,
          spread: spreadOrder(topology, a.cpus),
          why: `${name} serves ${a.name} (${source}); irqs.on: own spreads its queues over ${a.name}'s own CPUs ${a.cpus}`,
        });
        continue;
      }
      // Its node: the NIC's own when the workload has cores there, else the workload's first.
      const nicNode = topology.devices.find((d) => d.kind === 'nic' && d.name === name)?.node ?? nic.node;
      const node = nicNode !== null && a.nodes.includes(nicNode) ? nicNode : a.nodes[0]!;
      const hk = housekeeping(topology, allocation, node, exclusive);
      if (!hk) {
        warnings.push(
          `${a.name}: NIC ${name}: node ${node} has no CPU outside the exclusive cores and no housekeeping CPU is left anywhere; its interrupts are not placed`,
        );
        continue;
      }
      const crowded = crowdedQueues(observed, name, hk.cpus);
      if (crowded) {
        warnings.push(
          `${a.name}: NIC ${name}: its ${crowded} IRQs, RPS and XPS all go to ${plural(hk.cpus.size, 'CPU')} ${hk.cpus} (${hk.why}): under load those CPUs serve every queue; give node ${node} more housekeeping CPUs (reserved: { cores: N, per: node }) or spread the queues over ${a.name}'s own CPUs (irqs: { on: own })`,
        );
      }
      out.set(name, {
        nic,
        workload: a,
        cpus: hk.cpus,
        spread: null,
        why: `${name} serves ${a.name} (${source}): its queues go to ${hk.why}${nicNode === null ? ` (${name}'s own node is unknown: numa_node -1)` : nicNode !== node ? ` (${name} sits on node ${nicNode}, ${a.name} on node ${node})` : ''}`,
      });
    }
  }
  return out;
}

/**
 * How many IRQs a NIC steers to `cpus` when they outnumber those CPUs by more than QUEUES_PER_CPU (a
 * 48-queue NIC on one physical core's two CPUs); null when they do not. Kernel-managed vectors are
 * the kernel's to place and are not counted.
 */
function crowdedQueues(observed: ObservedIrqs, nic: string, cpus: CpuSet): number | null {
  const n = observed.irqs.filter((i) => i.nic === nic && !i.managed).length;
  return n > QUEUES_PER_CPU * cpus.size ? n : null;
}

/** IRQs per housekeeping CPU past which a NIC's placement is warned about. */
const QUEUES_PER_CPU = 8;

/** A node's housekeeping CPUs: the reserved ones there, else its CPUs outside the exclusive cores. */
function housekeeping(
  topology: Topology,
  allocation: Allocation,
  node: number,
  exclusive: CpuSet,
): { cpus: CpuSet; why: string } | null {
  const cpus = topology.nodes.find((n) => n.id === node)?.cpus ?? CpuSet.EMPTY;
  const reserved = allocation.reserved.intersect(cpus).minus(exclusive);
  if (!reserved.isEmpty) return { cpus: reserved, why: `node ${node}'s housekeeping CPUs ${reserved}` };
  const rest = cpus.minus(exclusive);
  if (!rest.isEmpty) {
    return {
      cpus: rest,
      why: `node ${node}'s CPUs outside the exclusive cores, ${rest} (reserved holds none of node ${node}'s CPUs)`,
    };
  }
  const any = allocation.reserved.minus(exclusive).intersect(topology.online);
  return any.isEmpty
    ? null
    : { cpus: any, why: `the housekeeping CPUs ${any} (node ${node} has none to spare)` };
}

/** CPUs one per physical core first, then their siblings: queues land on distinct cores before sharing one. */
function spreadOrder(topology: Topology, cpus: CpuSet): number[] {
  const byCore = topology.cores
    .filter((c) => c.cpus.overlaps(cpus))
    .map((c) => c.cpus.intersect(cpus).toArray());
  const out: number[] = [];
  for (let k = 0; byCore.some((c) => k < c.length); k++)
    for (const c of byCore) if (k < c.length) out.push(c[k]!);
  return out;
}

function irqAffinities(
  topology: Topology,
  allocation: Allocation,
  observed: ObservedIrqs,
  exclusive: CpuSet,
  nics: Map<string, NicPlan>,
  warnings: string[],
  notes: string[],
): Change[] {
  const out: Change[] = [];
  const managed: ObservedIrq[] = [];
  const pinned: ObservedIrq[] = [];
  const unknown: ObservedIrq[] = [];
  let idle = 0;
  const perNic = new Map<string, number>();
  for (const irq of observed.irqs) {
    if (irq.affinity === null) {
      if (irq.actions.length > 0) unknown.push(irq);
      continue;
    }
    const nic = irq.nic ? nics.get(irq.nic) : undefined;
    if (irq.managed === 'nobalancing') {
      if (irq.affinity.overlaps(exclusive)) pinned.push(irq);
      continue;
    }
    if (irq.managed) {
      if (irq.affinity.overlaps(exclusive)) managed.push(irq);
      continue;
    }
    if (nic) {
      const k = perNic.get(nic.nic.name) ?? 0;
      perNic.set(nic.nic.name, k + 1);
      const want = nic.spread ? CpuSet.of([nic.spread[k % nic.spread.length]!]) : nic.cpus;
      if (!irq.affinity.equals(want)) {
        out.push(affinityChange(irq, want, nic.why, nic.workload.name));
      }
      continue;
    }
    if (irq.actions.length === 0) {
      // No handler: it never fires. Its affinity matters only once a driver requests it, and then
      // the agent's next round sees it with a name.
      idle++;
      continue;
    }
    if (!irq.affinity.overlaps(exclusive)) continue;
    let want = irq.affinity.minus(exclusive);
    let why = `off the exclusive CPUs ${exclusive}`;
    if (want.intersect(topology.online).isEmpty) {
      // Only exclusive (or offline) CPUs in its mask: the kernel refuses a mask without an online CPU.
      const hk = irq.node !== null ? housekeeping(topology, allocation, irq.node, exclusive) : null;
      const fallback = hk?.cpus ?? topology.online.minus(exclusive);
      if (fallback.isEmpty) continue;
      want = fallback;
      why = `off the exclusive CPUs ${exclusive}, to ${hk ? hk.why : `the CPUs outside them, ${fallback}`} (its mask held no other online CPU)`;
    }
    out.push(affinityChange(irq, want, why));
  }
  if (managed.length > 0) {
    const on = managed.reduce((acc, i) => acc.union(i.affinity!.intersect(exclusive)), CpuSet.EMPTY);
    warnings.push(
      `IRQs ${capped(managed.map(irqName))} are kernel-managed (${[...new Set(managed.map((i) => (i.managed === 'refused' ? "the last apply's write was refused: EIO" : (i.driver ?? 'multiqueue driver'))))].join(', ')}) and may be delivered on the exclusive CPUs ${on}: the kernel places them itself and refuses writes (EIO), so isolate leaves them; they fire for I/O started on those CPUs, and only the boot parameter ${managedIrqParam(exclusive)} keeps them off`,
    );
  }
  if (pinned.length > 0) {
    notes.push(
      `IRQs ${capped(pinned.map(irqName))} are pinned by their handler (IRQF_NOBALANCING, as x86's timer asks): the kernel refuses to move them (EIO), so isolate leaves them; check counts any that fire on the exclusive CPUs`,
    );
  }
  if (unknown.length > 0) {
    warnings.push(`IRQs ${capped(unknown.map(irqName))}: affinity unknown (unreadable); not moved`);
  }
  if (idle > 0)
    notes.push(`${plural(idle, 'IRQ')} without a handler (no /proc/interrupts row) left as they are`);
  return out;
}

/** RPS and XPS: the exclusive workloads' NICs follow their IRQs; every other NIC's RPS leaves the exclusive CPUs. */
function steering(observed: ObservedIrqs, exclusive: CpuSet, nics: Map<string, NicPlan>): Change[] {
  const out: Change[] = [];
  for (const nic of observed.nics) {
    const plan = nics.get(nic.name);
    if (plan) {
      const order = plan.spread ?? plan.cpus.toArray();
      const steer = (q: (typeof nic.rx)[number], setting: 'rps_cpus' | 'xps_cpus', want: CpuSet) => {
        const to = maskOrNull(want, q.mask);
        const why = `${setting === 'rps_cpus' ? 'RPS' : 'XPS'}: ${plan.why}`;
        if (to)
          out.push(
            change(
              queueTarget(nic.name, q.name),
              setting,
              q.mask,
              to,
              why,
              plan.workload.name,
              nicOwner(nic),
            ),
          );
      };
      for (const q of nic.rx) {
        if (q.cpus === null || q.cpus.equals(plan.cpus)) continue;
        steer(q, 'rps_cpus', plan.cpus);
      }
      const tx = nic.tx.filter((q) => q.cpus !== null);
      tx.forEach((q, i) => {
        // XPS maps each CPU to one queue (networking/scaling.rst): the CPUs are dealt out over the queues.
        const mine =
          order.length >= tx.length
            ? order.filter((_, j) => j % tx.length === i)
            : [order[i % order.length]!];
        const want = CpuSet.of(mine);
        if (q.cpus!.equals(want)) return;
        steer(q, 'xps_cpus', want);
      });
      continue;
    }
    for (const q of nic.rx) {
      if (q.cpus === null || !q.cpus.overlaps(exclusive)) continue;
      const want = q.cpus.minus(exclusive);
      const to = maskOrNull(want, q.mask);
      if (!to) continue;
      const why = want.isEmpty
        ? `RPS off the exclusive CPUs ${exclusive}: none of its CPUs is left, so packets are processed on the CPU their interrupt came on`
        : `RPS off the exclusive CPUs ${exclusive}`;
      out.push(change(queueTarget(nic.name, q.name), 'rps_cpus', q.mask, to, why, undefined, nicOwner(nic)));
    }
  }
  return out;
}

/** The mask in the live value's width; null when a CPU does not fit it (never written wider). */
function maskOrNull(cpus: CpuSet, like: string | null): string | null {
  try {
    return formatMask(cpus, like);
  } catch {
    return null;
  }
}

/**
 * `/proc/irq/default_smp_affinity`: an IRQ requested later (a driver reload, hot-plug) starts with
 * it, and lands on the exclusive CPUs until the agent's next round moves it. The kernel refuses a
 * mask without an online CPU, so one that holds only exclusive CPUs gets the housekeeping CPUs.
 */
function defaultAffinity(
  topology: Topology,
  allocation: Allocation,
  observed: ObservedIrqs,
  exclusive: CpuSet,
): Change[] {
  const live = observed.defaultAffinity ?? null;
  if (live === null) return [];
  const now = CpuSet.parseMask(live);
  if (!now.overlaps(exclusive)) return [];
  let want = now.minus(exclusive);
  if (want.intersect(topology.online).isEmpty) {
    want = allocation.reserved.minus(exclusive).intersect(topology.online);
    if (want.isEmpty) want = topology.online.minus(exclusive);
  }
  const to = want.isEmpty ? null : maskOrNull(want, live);
  if (!to) return [];
  return [
    change(
      IRQ_DIR,
      'default_smp_affinity',
      live,
      to,
      `IRQs requested from now on (a driver reload, hot-plug) start off the exclusive CPUs ${exclusive}, until the agent's next round places them`,
    ),
  ];
}

function workqueue(
  topology: Topology,
  observed: ObservedIrqs,
  exclusive: CpuSet,
  warnings: string[],
): Change[] {
  const live = observed.workqueueMask;
  if (live === null) return [];
  const now = CpuSet.parseMask(live);
  const want = now.minus(exclusive);
  if (want.equals(now)) return [];
  if (want.intersect(topology.online).isEmpty) {
    warnings.push(
      `the unbound workqueues' cpumask ${live} holds no online CPU outside the exclusive cores; left as it is`,
    );
    return [];
  }
  const to = maskOrNull(want, live);
  if (!to) return [];
  return [
    change(
      WORKQUEUE_DIR,
      'cpumask',
      live,
      to,
      `unbound kernel workqueues off the exclusive CPUs ${exclusive} (work already queued there finishes where it is; per-CPU workqueues are not moved)`,
    ),
  ];
}
