// Which object a change acts on, and whether that object can still be recognised after a reboot.
// A journal entry names its object: two changes of the same object fold into one entry (the first
// `previous` is what rollback restores), two changes of different objects never do. Some changes
// name their object in their value, not their target: a per-device io line ("8:16 wbps=…"), a
// process or thread move (the PID/TID is `to`), and cgroup v1's hierarchy is a field of its own.
import path from 'node:path';
import { ioDeviceOf, isIoFile, isIoProperty } from '../model/io.js';
import type { Change } from '../model/plan.js';
import { readTextFile } from '../sys/read.js';

/** The parts of a change that say which object it changed. */
export interface ChangeObject {
  backend: Change['backend'];
  /** cgroup v1 hierarchy (`cpuset`, `cpu,cpuacct`); '' for everything else. */
  hierarchy: string;
  target: string;
  setting: string;
  /** A process or thread moved: its PID/TID (in `to`), which names a task only within one boot. */
  task?: { kind: 'process' | 'thread'; id: string };
  /** A per-device io line or property: the device as it is written (`8:16`, `/dev/block/8:16`). */
  device?: string;
}

export function changeObject(c: Change): ChangeObject {
  const base: ChangeObject = {
    backend: c.backend,
    hierarchy: c.backend === 'cgroupfs' ? (c.hierarchy ?? '') : '',
    target: c.target,
    setting: c.setting,
  };
  if (c.backend === 'cgroupfs' && (c.setting === 'cgroup.procs' || c.setting === 'tasks')) {
    return { ...base, task: { kind: c.setting === 'tasks' ? 'thread' : 'process', id: c.to.trim() } };
  }
  const perDevice =
    (c.backend === 'cgroupfs' && isIoFile(c.setting)) || (c.backend === 'systemd' && isIoProperty(c.setting));
  if (perDevice) return { ...base, device: ioDeviceOf(c.to) };
  return base;
}

/** The key of a change's object: equal keys, same object (journal folding, undo previews). */
export function objectKey(c: Change): string {
  const o = changeObject(c);
  return [
    o.backend,
    o.hierarchy,
    o.target,
    o.setting,
    o.task ? `${o.task.kind}:${o.task.id}` : '',
    o.device ?? '',
    // An IRQ number or NIC name another device holds now is another object (irq/owner.ts): a fold
    // must keep the first owner's entry and the second's apart.
    c.backend === 'irq' && c.owner
      ? JSON.stringify([c.owner.actions ?? null, c.owner.chip ?? null, c.owner.pci])
      : '',
  ].join('\0');
}

/** MAJ:MIN of the device a per-device change names (`8:16`, `/dev/block/8:16`), null otherwise. */
export function majMinOf(c: Change): string | null {
  const dev = changeObject(c).device;
  if (dev === undefined) return null;
  return /^(?:\/dev\/block\/)?(\d+:\d+)$/.exec(dev)?.[1] ?? null;
}

/** What "unknown" is recorded as, for a boot or a device identity that could not be read. */
export const UNKNOWN = 'unknown';

const BOOT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Small sysfs/proc attributes: a boot id is 37 bytes, a WWID a few hundred. */
const ATTR_MAX_BYTES = 4096;

/** A small attribute's text; null when it cannot be read, for any reason (the caller says unknown). */
function readAttr(file: string): string | null {
  try {
    return readTextFile(file, { maxBytes: ATTR_MAX_BYTES }).trim();
  } catch {
    return null;
  }
}

/**
 * This boot's id (`/proc/sys/kernel/random/boot_id` under `root`), or "unknown" when it cannot be
 * read or is not a boot id: a failed read is unknown, never "the same boot".
 */
export function readBootId(root: string): string {
  const id = readAttr(path.join(root, 'proc/sys/kernel/random/boot_id'));
  return id !== null && BOOT_ID.test(id) ? id : UNKNOWN;
}

/** A device identity journaled with a per-device entry: a WWID or serial, as its file spells it. */
const IDENTITY = /^[\x21-\x7e][\x20-\x7e]{0,254}$/;

/**
 * The identity of block device MAJ:MIN that survives a reboot: its WWID (`wwid`, SCSI/ATA under
 * `device/`, NVMe namespaces on the block device itself), else its serial; "unknown" when none reads.
 */
export function readDeviceIdentity(root: string, majMin: string): string {
  const dir = path.join(root, 'sys/dev/block', majMin);
  for (const f of ['device/wwid', 'wwid', 'device/serial', 'serial']) {
    const v = readAttr(path.join(dir, f));
    if (v !== null && IDENTITY.test(v)) return `${f.replace('device/', '')}:${v}`;
  }
  return UNKNOWN;
}

/** The identity to journal with a change (an entry's fields): a device's for a per-device entry, none for the rest. */
export function identityOf(root: string, c: Change): { identity?: string } {
  const majMin = majMinOf(c);
  return majMin === null ? {} : { identity: readDeviceIdentity(root, majMin) };
}

/** Whether a journal written in boot `then` was written in boot `now`: true, false or unknown. */
export function sameBoot(then: string | undefined, now: string): boolean | 'unknown' {
  if (then === undefined || then === UNKNOWN || now === UNKNOWN) return UNKNOWN;
  return then === now;
}

/**
 * Why an entry written in another boot (known to be another) cannot be undone safely (null: it can): PIDs and TIDs name
 * other tasks after a reboot, and MAJ:MIN another disk unless the disk's identity says it is the
 * same. Objects named by a stable name (a cgroup path, a unit, a RAID drive) are left to their
 * backend. IRQ numbers are judged by the irq backend.
 */
export function rebootSkipReason(
  root: string,
  c: Change,
  journaled: { boot: string | undefined; identity: string | undefined },
  now: string,
): string | null {
  // Unknown is not "another boot": a journal from before boots were stamped (format 1), or a host
  // whose boot_id cannot be read, is undone as before, the executors checking what they can.
  if (sameBoot(journaled.boot, now) !== false) return null;
  const o = changeObject(c);
  const where = `${o.target}${o.hierarchy ? ` (${o.hierarchy})` : ''} ${o.setting}`;
  const written = `written in boot ${journaled.boot ?? UNKNOWN}, host is now in boot ${now}`;
  if (o.task) return `${written}: ${o.task.kind} ${o.task.id} in ${where} not identity-checked, skipped`;
  const majMin = majMinOf(c);
  if (o.device === undefined) return null;
  const was = journaled.identity ?? UNKNOWN;
  const is = majMin === null ? UNKNOWN : readDeviceIdentity(root, majMin);
  if (was !== UNKNOWN && was === is) return null;
  return `${written}: device ${o.device} of ${where} not identity-checked (journaled ${was}, now ${is}), skipped`;
}
