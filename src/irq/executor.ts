// The IRQ backend: writes an IRQ's smp_affinity_list (verified by where the kernel really delivers
// it, effective_affinity_list), a NIC queue's RPS/XPS mask and the unbound workqueues' cpumask, each
// through the one kernel-file writer, and restores the exact previous value on undo.
import { UserError } from '../model/errors.js';
import {
  type ChangeExecutor,
  type PreflightStep,
  StepError,
  type UndoResult,
  type WriteResult,
} from '../apply/executor.js';
import { sameCpuList } from '../model/cpuset.js';
import { changeSubject } from '../model/describe.js';
import {
  describeOwner,
  IRQ_REFUSED,
  type IrqOwner,
  irqTargetProblem,
  parseCpusOrNull,
  sameMask,
  sameOwner,
} from '../model/irq.js';
import type { Change } from '../model/plan.js';
import { readBoundedIfPresent, readLiveSync, UnreadableError } from '../sys/read.js';
import { parseCounts, splitActions } from './counts.js';
import { liveIrqOwners, liveNicOwner } from './owner.js';
import { WriteRefused, writeKernelFile } from '../sys/write.js';
import path from 'node:path';

/** What the kernel's answer to a write here means (kernel/irq/proc.c, net-sysfs.c, workqueue.c). */
const MEANING: Record<string, string> = {
  EIO: 'the kernel does not let user space move this IRQ: it is kernel-managed (multiqueue NVMe, virtio-blk, ...), per-CPU, or its interrupt chip cannot set an affinity',
  EINVAL:
    'the kernel rejected the value: no online (or no housekeeping) CPU in it, or a CPU beyond this kernel',
  ENOENT: 'it no longer exists (the driver was unloaded or the device removed since the plan)',
  EACCES: 'permission denied (isolate must run as root)',
  EPERM:
    "operation not permitted (isolate must run as root with CAP_NET_ADMIN, which a NIC queue's RPS/XPS mask needs — check the unit's CapabilityBoundingSet=)",
  EROFS: 'the file system is read-only here (a container runtime mounts /proc/irq and /sys read-only)',
  ENOMEM: 'the kernel could not allocate the map',
};

/** /proc/irq is not a capability's to grant: EPERM there is a read-only or hidden /proc/irq. */
const IRQ_EPERM =
  "operation not permitted: /proc/irq is read-only or hidden where isolate runs (inside a container, or a security policy that masks it); an IRQ's affinity is set from the host itself, as root";

const meaning = (change: Change, code: string | undefined): string | undefined =>
  code === 'EPERM' && change.setting === 'smp_affinity_list' ? IRQ_EPERM : code && MEANING[code];

/**
 * What the kernel answers on an undo that no retry changes: the IRQ is kernel-managed now (EIO),
 * gone (ENOENT, ENODEV), or the old value names no CPU it takes any more (EINVAL). Said in a note,
 * never a failure: one such entry must not leave the host unable to roll back, nor block every
 * later apply. EACCES, EPERM and EROFS stay failures: running isolate where it may write fixes them.
 */
const UNDO_REFUSALS = new Set(['EIO', 'ENOENT', 'ENODEV', 'EINVAL']);

const errCode = (err: unknown) => (err as NodeJS.ErrnoException).code;

/**
 * How long one read of every IRQ's owner serves the writes after it: a table of megabytes is not
 * parsed again per IRQ, and a number handed on later than this is still caught by the next read.
 */
const OWNERS_FRESH_MS = 1000;

/** How long a just-written affinity may take to show in effective_affinity_list before it counts as not taken. */
const EFFECTIVE_WAIT_MS = 200;

/**
 * A deferred move (below, movesAtNextInterrupt) is made at an interrupt, but not always the first:
 * when the vector of an earlier move (irqbalance's, or a write just before) is still being cleaned up,
 * the kernel keeps the move pending and tries again at the next interrupt (irq_move_masked_irq on
 * -EBUSY, kernel/irq/migration.c); the cleanup waits for an interrupt on the new CPU. So a deferred move
 * counts as refused only after this many interrupts since the write, watched for up to DEFERRED_WAIT_MS.
 * Seen in a cold CI run's quiet-cores guest (irqbalance running): a virtio-net queue (PCI-MSI) had fired
 * since isolate's write 200 ms before and still delivered on its old CPU; the apply was rolled back.
 */
const DEFERRED_INTERRUPTS = 3;
const DEFERRED_WAIT_MS = 2000;

export class IrqExecutor implements ChangeExecutor {
  constructor(readonly root: string) {}

  /** The file a change writes: only one of the three kinds of target, checked before any path is built. */
  file(change: Change): string {
    const bad = irqTargetProblem(change.target, change.setting);
    if (bad) throw new StepError(`${changeSubject(change)}: ${bad}`);
    return path.join(this.root, change.target.slice(1), change.setting);
  }

  async preflight(steps: PreflightStep[]): Promise<void> {
    for (const { index, change } of steps) {
      const bad = irqTargetProblem(change.target, change.setting);
      if (bad)
        throw new UserError(
          `step ${index + 1}: ${bad}; isolate writes only IRQ, NIC queue and workqueue files`,
          1,
        );
    }
  }

  /** The live value (trimmed); null only when the file is absent (the IRQ or queue is gone). */
  async read(change: Change): Promise<string | null> {
    return readLiveSync(this.file(change));
  }

  satisfied(change: Change, live: string | null): boolean {
    return live !== null && this.same(change, live, change.to);
  }

  same(change: Change, a: string | null, b: string | null): boolean {
    if (a === null || b === null) return a === b;
    return change.setting === 'smp_affinity_list' ? sameCpuList(a, b) : sameMask(a, b);
  }

  /** An affinity the kernel holds but does not deliver by: the IRQ still lands on a CPU outside it. */
  async notInForce(change: Change, live: string | null): Promise<string | null> {
    if (change.setting !== 'smp_affinity_list' || live === null) return null;
    // A move the kernel defers: written, and made at the IRQ's next interrupt; writing it again would not help.
    if (this.movesAtNextInterrupt(change)) return null;
    return this.deliveredOutside(change, live);
  }

  private deliveredOutside(change: Change, wanted: string): string | null {
    let effective: string | null;
    try {
      effective = readLiveSync(path.join(path.dirname(this.file(change)), 'effective_affinity_list'));
    } catch (err) {
      if (err instanceof UnreadableError) return null;
      throw err;
    }
    // No such file (older kernels, some architectures) or empty (never activated): nothing to compare.
    if (!effective) return null;
    const eff = parseCpusOrNull(effective, 'list');
    const want = parseCpusOrNull(wanted, 'list');
    if (!eff || !want || eff.isSubsetOf(want)) return null;
    return `the kernel delivers it on CPUs ${eff} (effective_affinity_list), outside ${want}`;
  }

  /** How often this IRQ has fired, over all CPUs (its /proc/interrupts row); null without a row or file. */
  private firedCount(change: Change): number | null {
    let text: string | null;
    try {
      text = readLiveSync(path.join(this.root, 'proc/interrupts'));
    } catch (err) {
      if (err instanceof UnreadableError) return null;
      throw err;
    }
    const id = change.target.split('/').at(-1);
    const row = text?.split('\n').find((l) => l.trimStart().startsWith(`${id}:`));
    if (!row) return null;
    const f = row
      .slice(row.indexOf(':') + 1)
      .trim()
      .split(/\s+/);
    let sum = 0;
    for (const n of f) {
      if (!/^\d+$/.test(n)) break;
      sum += Number(n);
    }
    return sum;
  }

  /** IRQ number → its chip words in /proc/interrupts, read once per executor (one apply or round). */
  private chips: Map<string, string> | null = null;

  /**
   * x86 without interrupt remapping (most virtual machines; the chip then reads IO-APIC or PCI-MSI,
   * not IR-IO-APIC or IR-PCI-MSI) moves an interrupt only when it next fires: the kernel holds the new
   * mask as pending (IRQD_SETAFFINITY_PENDING, kernel/irq/migration.c), and effective_affinity_list
   * names the old CPU until then. Seen on 6.1 guests: i8042's IRQ 1 stayed on CPU 3 after "0-1" was
   * taken; in the quiet-cores guest the idle queues of virtio-net (PCI-MSI) kept their old CPU, then
   * delivered one interrupt there and moved. One that never fires never lands anywhere.
   */
  private movesAtNextInterrupt(change: Change): boolean {
    if (this.chips === null) {
      this.chips = new Map();
      try {
        const text = readBoundedIfPresent(path.join(this.root, 'proc/interrupts'), {
          maxBytes: 64 * 1024 * 1024,
        });
        for (const row of text ? parseCounts(text).rows : [])
          this.chips.set(row.id, splitActions(row.rest).chip);
      } catch {
        // Unreadable: no IRQ is taken for a deferred move.
      }
    }
    const irq = change.target.split('/').at(-1) ?? '';
    return /^(IO-APIC|PCI-MSI)/.test(this.chips.get(irq) ?? '');
  }

  private async write(change: Change, value: string, what: string): Promise<void> {
    try {
      // A mask or list is never empty here ("0"/"00" for no CPU): one write(2) of the value.
      await writeKernelFile(this.file(change), Buffer.from(value));
    } catch (err) {
      if (err instanceof WriteRefused) throw new StepError(`${what}: ${err.message}`);
      if (err instanceof StepError) throw err;
      const code = errCode(err);
      throw new StepError(
        `${what}: writing "${value}" to ${this.file(change)} failed: ${code ?? String(err)} (${meaning(change, code) ?? 'unexpected error'})`,
        code,
      );
    }
  }

  /**
   * The object at the change's target now, when it is not the one the change names (`owner`): an
   * IRQ number another device got, a NIC name another NIC has. Null: the same, or nothing to check.
   * Throws UnreadableError when the owner now cannot be read (unknown, not "changed").
   */
  private ownerChange(change: Change): { was: IrqOwner; now: IrqOwner } | null {
    const was = change.backend === 'irq' ? change.owner : undefined;
    if (!was) return null;
    const name = change.target.split('/')[change.setting === 'smp_affinity_list' ? 3 : 4] ?? '';
    const now =
      change.setting === 'smp_affinity_list' ? this.irqOwners()(name) : liveNicOwner(this.root, name);
    return sameOwner(was, now) ? null : { was, now };
  }

  /** IRQ owners read for the changes of one moment; re-read when older than OWNERS_FRESH_MS. */
  private owners: { at: number; of: (irq: string) => IrqOwner } | null = null;

  private irqOwners(): (irq: string) => IrqOwner {
    const now = Date.now();
    if (!this.owners || now - this.owners.at > OWNERS_FRESH_MS)
      this.owners = { at: now, of: liveIrqOwners(this.root) };
    return this.owners.of;
  }

  /** The object a change's target names, as a note says it: `IRQ 36`, `NIC eth0's rx-0`. */
  private objectOf(change: Change): string {
    const parts = change.target.split('/');
    return change.setting === 'smp_affinity_list' ? `IRQ ${parts[3]}` : `NIC ${parts[4]}'s ${parts[6]}`;
  }

  async apply(change: Change, _previous: string | null): Promise<WriteResult> {
    const what = changeSubject(change);
    let moved: { was: IrqOwner; now: IrqOwner } | null;
    try {
      moved = this.ownerChange(change);
    } catch (err) {
      if (err instanceof UnreadableError)
        throw new StepError(`${what}: ${err.message} (who holds ${this.objectOf(change)} now is unknown)`);
      throw err;
    }
    // A stale plan: the number or name is another device's now. Writing would move that device.
    if (moved) {
      return {
        skipped: `${this.objectOf(change)} is not the one the plan was made for: planned for ${describeOwner(moved.was)}, now ${describeOwner(moved.now)}; not written (the next plan places it)`,
      };
    }
    // Only a move (the IRQ now delivered outside the new mask) can be deferred: count its interrupts then.
    const fired =
      change.setting === 'smp_affinity_list' && this.deliveredOutside(change, change.to)
        ? this.firedCount(change)
        : null;
    try {
      await this.write(change, change.to, what);
    } catch (err) {
      const refused = err instanceof StepError ? refusalOf(change, err) : null;
      if (refused) return refused;
      throw err;
    }
    const now = readLiveSync(this.file(change));
    if (!this.satisfied(change, now)) {
      throw new StepError(
        `${what}: read back "${now ?? '(missing)'}" after writing "${change.to}" (the kernel narrowed or replaced it: isolcpus= or nohz_full= CPUs are taken out of RPS and workqueue masks)`,
      );
    }
    if (change.setting === 'smp_affinity_list') {
      const outside = await this.outsideAfterMove(change, fired);
      if (outside) throw new StepError(`${what}: the kernel took "${change.to}" but ${outside}`);
    }
    return {};
  }

  /**
   * Why a just-written affinity is not delivered by, once the kernel had its chance; null: it is, or
   * its move is still pending. A deferred move is judged only after DEFERRED_INTERRUPTS interrupts since
   * the write (`fired`: the count before it) still landed outside the new mask.
   */
  private async outsideAfterMove(change: Change, fired: number | null): Promise<string | null> {
    const deferred = this.movesAtNextInterrupt(change);
    const firedSince = () => {
      const n = this.firedCount(change);
      return n === null || fired === null ? 0 : n - fired;
    };
    let outside = this.deliveredOutside(change, change.to);
    // Every 20 ms at first. Past that only a deferred move that has fired is watched (an idle IRQ
    // would only make the apply wait), reading /proc/interrupts (megabytes on large hosts) every 100 ms.
    for (let waited = 0; outside; ) {
      if (waited >= (deferred ? DEFERRED_WAIT_MS : EFFECTIVE_WAIT_MS)) break;
      if (waited >= EFFECTIVE_WAIT_MS) {
        const n = firedSince();
        if (n === 0 || n >= DEFERRED_INTERRUPTS) break;
      }
      const step = waited < EFFECTIVE_WAIT_MS ? 20 : 100;
      await new Promise((r) => setTimeout(r, step));
      waited += step;
      outside = this.deliveredOutside(change, change.to);
    }
    if (!outside || (deferred && firedSince() < DEFERRED_INTERRUPTS)) return null;
    return outside;
  }

  async undo(change: Change, previous: string | null): Promise<UndoResult> {
    if (previous === null) return {};
    const what = `undo ${changeSubject(change)}`;
    const live = readLiveSync(this.file(change));
    if (live === null) return { note: `${change.target} ${MEANING.ENOENT}; nothing to restore` };
    const moved = this.ownerSinceApply(change, previous);
    if (moved) return { note: moved };
    // Byte for byte: a mask keeps the width and spelling the kernel printed.
    if (live === previous) return {};
    try {
      await this.write(change, previous, what);
    } catch (err) {
      if (err instanceof StepError && err.code && UNDO_REFUSALS.has(err.code))
        return { note: `${err.message}; not restored, and not tried again` };
      throw err;
    }
    const now = readLiveSync(this.file(change));
    // The kernel took the write and holds something else (it narrows masks by isolcpus=): its call.
    if (!this.same(change, now, previous))
      return { note: `${what}: the kernel holds "${now ?? '(missing)'}" after "${previous}" was restored` };
    return {};
  }

  /** Why an entry is not undone because its object is another's now; null: undo it. */
  private ownerSinceApply(change: Change, previous: string): string | null {
    let moved: { was: IrqOwner; now: IrqOwner } | null;
    try {
      moved = this.ownerChange(change);
    } catch (err) {
      if (!(err instanceof UnreadableError)) throw err;
      return `${this.objectOf(change)}: ${err.message}; who holds it now is unknown, so "${previous}" was not restored`;
    }
    if (!moved) return null;
    const renamed =
      change.setting === 'smp_affinity_list'
        ? 'a driver reload, controller reset, ethtool -L, hot-plug or reboot renumbers IRQs'
        : 'interfaces are named anew by a reboot, hot-plug or udev';
    return `${this.objectOf(change)} is no longer the one isolate changed: it was ${describeOwner(moved.was)}, now ${describeOwner(moved.now)} (${renamed}); "${previous}" was not restored to it`;
  }
}

/**
 * A write the kernel refused that is an outcome, not a failure of the apply: an IRQ freed since the
 * plan (IRQ numbers are not stable; the next plan rescans), or one user space may not move (EIO:
 * kernel-managed, per-CPU). Said on every apply that meets it (printed, logged, journaled as
 * skipped), never silently: a kernel-managed IRQ is the kernel's to place, and isolate does not fight it.
 */
export function refusalOf(change: Change, err: StepError): WriteResult | null {
  if (err.code === 'ENOENT') return { skipped: `${change.target} ${MEANING.ENOENT}` };
  if (err.code === 'EIO' && change.setting === 'smp_affinity_list') {
    return {
      skipped: `${IRQ_REFUSED} ${change.target.split('/').at(-1)} (EIO): ${MEANING.EIO}; it stays where the kernel put it, and only the boot parameter isolcpus=managed_irq,<exclusive CPUs> keeps a managed IRQ off them`,
    };
  }
  return null;
}
