// The OS device a vendor tool says a logical drive is (`/dev/sda`): untrusted text that ties a
// workload's disk to the drive whose write cache it depends on, so anything but a plain `/dev/<kernel
// name>` is unknown rather than cleaned up into a name that might be another disk.
import type { Finding, LogicalDrive, RaidController } from '../model/raid.js';

/** A kernel block-device name as sysfs lists it: sd*, nvme*, cciss!c0d0 … (never `..`, never a path). */
const KERNEL_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
/** `/dev/cciss/c0d0`: the old Smart Array driver's subdirectory; sysfs writes its `/` as `!`. */
const CCISS = /^cciss\/(c\d+d\d+)$/;

/** `/dev/sda` → `sda`; `/dev/cciss/c0d0` → `cciss!c0d0`; anything else → null. */
export function osDeviceName(raw: string | null | undefined): string | null {
  if (typeof raw !== 'string') return null;
  const m = /^\/dev\/(.+)$/.exec(raw.trim());
  if (!m) return null;
  const rest = m[1] as string;
  const cciss = CCISS.exec(rest);
  if (cciss) return `cciss!${cciss[1]}`;
  return KERNEL_NAME.test(rest) ? rest : null;
}

/**
 * Set `d.osDevice` from what the tool printed; a printed value that is not a device name is said as an
 * info finding (the drive's disk is then unknown, not guessed). Not `unknown`: that would block every
 * cache change on the controller, and the name says nothing about the cache.
 */
export function setOsDevice(c: RaidController, d: LogicalDrive, raw: string | null): void {
  if (raw === null) return;
  d.osDevice = osDeviceName(raw);
  if (d.osDevice !== null) return;
  const shown = raw.replace(/[^\x20-\x7e]/g, '?').slice(0, 60);
  const f: Finding = {
    severity: 'info',
    target: d.target,
    message: `${d.target}: OS drive name "${shown}" is not a /dev/<disk> name; which disk this drive is stays unknown`,
  };
  c.findings.push(f);
}
