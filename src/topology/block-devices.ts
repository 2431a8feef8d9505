// Down from a mount's block device to the whole disks under it, in the root's sysfs: through
// partitions, device-mapper/LVM and md (their `slaves/`), with each whole disk's MAJ:MIN, NUMA node,
// I/O scheduler, rotational flag and, for a RAID controller's virtual drive, its vendor and driver.
// sysfs is untrusted: a read that fails or holds something unexpected is a finding, never a guess.
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { BlockLayer, DataDir, RaidVirtualDrive, WholeDisk } from '../model/disks.js';
import type { Finding } from '../model/finding.js';
import { byNatural } from '../model/order.js';
import { readBoundedIfPresent } from '../sys/read.js';
import type { Mount } from './mountinfo.js';

const SYSFS_MAX_BYTES = 64 * 1024;
/** dm over md over partitions is three deep; a loop in slaves/ must not recurse forever. */
const MAX_DEPTH = 8;

/**
 * SCSI vendor strings that only RAID controllers put on a disk: the drive is a virtual drive the
 * controller presents, not a physical disk. HPE Smart Array says so in the model instead.
 */
const RAID_VD_VENDORS = new Set(['LSI', 'AVAGO', 'BROADCOM']);
function raidVirtualDrive(vendor: string, model: string): boolean {
  return (
    RAID_VD_VENDORS.has(vendor.toUpperCase()) ||
    (vendor.toUpperCase() === 'DELL' && /^PERC\b/i.test(model)) ||
    model.toUpperCase() === 'LOGICAL VOLUME'
  );
}

/** Filesystems that never sit on a block device of this host: said by name, not looked up. */
const NO_DEVICE_FS =
  /^(tmpfs|ramfs|overlay|aufs|nfs4?|cifs|smb3|9p|virtiofs|fuse(\..+)?|ceph|glusterfs|proc|sysfs|devtmpfs|squashfs)$/;

/** The block devices of the root's sysfs, each path resolved and kept inside its sys/. */
export class SysBlocks {
  private sysReal: string | null | undefined;

  constructor(private readonly base: string) {}

  /** A host path as the findings show it: under the root when there is one. */
  show(file: string): string {
    return this.base === '' ? file : `${this.base}${file}`;
  }

  private sys(): string | null {
    if (this.sysReal === undefined) {
      try {
        this.sysReal = realpathSync.native(`${this.base}/sys`);
      } catch {
        this.sysReal = null;
      }
    }
    return this.sysReal;
  }

  /** A sysfs path resolved, kept only when it stays inside the root's sys/. */
  private sysPath(rel: string): string | null {
    const sys = this.sys();
    if (!sys) return null;
    try {
      const real = realpathSync.native(`${sys}/${rel}`);
      return real.startsWith(`${sys}/`) ? real : null;
    } catch {
      return null;
    }
  }

  /** The sysfs directory of the block device a mount is on, or null with a finding. */
  deviceOf(m: Mount, path: string, target: string, findings: Finding[]): string | null {
    const what = `${path} is on ${m.fstype} (${m.source}, mounted at ${m.point})`;
    if (NO_DEVICE_FS.test(m.fstype)) {
      findings.push({
        severity: 'warning',
        target,
        message: `${what}: no block device, so there is no disk whose I/O can be protected; put the directory on a local disk's filesystem`,
      });
      return null;
    }
    if (!m.dev.startsWith('0:')) {
      const dir = this.sysPath(`dev/block/${m.dev}`);
      if (dir) return dir;
      findings.push({
        severity: 'unknown',
        target,
        message: `${what}: device ${m.dev} is not in ${this.show('/sys/dev/block')}; its disk is unknown`,
      });
      return null;
    }
    // Major 0 on a disk filesystem: btrfs gives each mount an anonymous device; its source names the disk.
    const dev = m.source.startsWith('/dev/') ? this.sourceDevice(m.source) : null;
    if (dev) return dev;
    findings.push({
      severity: 'warning',
      target,
      message: `${what}: device ${m.dev} is not a block device and the source names none; there is no disk whose I/O can be protected`,
    });
    return null;
  }

  /** `/dev/sda2`, `/dev/mapper/vg0-data`: the block device a mount source names. */
  private sourceDevice(source: string): string | null {
    const mapper = /^\/dev\/mapper\/([^/]+)$/.exec(source);
    if (mapper) {
      for (const name of this.entries(`${this.base}/sys/block`)) {
        if (!name.startsWith('dm-')) continue;
        if (this.sysText(`${this.base}/sys/block/${name}/dm/name`) === mapper[1])
          return this.sysPath(`block/${name}`);
      }
      return null;
    }
    const name = basename(source);
    return /^[A-Za-z0-9_.:-]+$/.test(name) ? this.sysPath(`class/block/${name}`) : null;
  }

  private entries(dir: string): string[] {
    try {
      return readdirSync(dir).sort(byNatural);
    } catch {
      return [];
    }
  }

  /** A sysfs attribute, trimmed and without stray NULs; null when absent or unreadable. */
  private sysText(file: string): string | null {
    try {
      return readBoundedIfPresent(file, { maxBytes: SYSFS_MAX_BYTES })?.replace(/\0/g, '').trim() ?? null;
    } catch {
      return null;
    }
  }

  /** Down from one block device to the whole disks under it. */
  walk(
    dir: string,
    out: DataDir,
    depth: number,
    target: string,
    findings: Finding[],
    disks: Map<string, WholeDisk>,
    stack: readonly string[] = [],
  ): void {
    const name = basename(dir);
    if (stack.includes(dir)) {
      findings.push({
        severity: 'unknown',
        target,
        message: `${out.path}: ${name}'s slaves/ in sysfs lead back to ${name}; the disks under it are unknown`,
      });
      return;
    }
    if (depth > MAX_DEPTH) {
      findings.push({
        severity: 'unknown',
        target,
        message: `${out.path}: block devices stacked more than ${MAX_DEPTH} deep under ${name}; the disks below are unknown`,
      });
      return;
    }
    const layer = (l: BlockLayer) => {
      if (!out.layers.some((x) => x.name === l.name)) out.layers.push(l);
    };
    if (existsSync(`${dir}/partition`)) {
      layer({ name, kind: 'partition' });
      this.walk(dirname(dir), out, depth + 1, target, findings, disks, [...stack, dir]);
      return;
    }
    const slaves = this.entries(`${dir}/slaves`);
    if (existsSync(`${dir}/dm`)) {
      const uuid = this.sysText(`${dir}/dm/uuid`) ?? '';
      const dmName = this.sysText(`${dir}/dm/name`);
      layer({
        name,
        kind: uuid.startsWith('LVM-') ? 'lvm' : 'device-mapper',
        ...(dmName ? { detail: dmName } : {}),
      });
    } else if (existsSync(`${dir}/md`)) {
      const level = this.sysText(`${dir}/md/level`);
      layer({ name, kind: 'md', ...(level ? { detail: level } : {}) });
    } else if (existsSync(`${dir}/loop`)) {
      const file = this.sysText(`${dir}/loop/backing_file`);
      layer({ name, kind: 'loop', ...(file ? { detail: file } : {}) });
      findings.push({
        severity: 'warning',
        target,
        message: `${out.path} is on loop device ${name}${file ? ` (backed by ${file})` : ''}: the disk under the backing file is not followed; put the directory on a real disk`,
      });
      return;
    } else if (slaves.length === 0) {
      this.wholeDisk(dir, out, target, findings, disks);
      return;
    }
    if (slaves.length === 0) {
      findings.push({
        severity: 'unknown',
        target,
        message: `${out.path}: ${name} has no slaves/ in sysfs; the disks under it are unknown`,
      });
      return;
    }
    for (const s of slaves) {
      const real = this.sysRealOf(`${dir}/slaves/${s}`);
      if (real) this.walk(real, out, depth + 1, target, findings, disks, [...stack, dir]);
      else {
        findings.push({
          severity: 'unknown',
          target,
          message: `${out.path}: ${name}'s slave ${s} cannot be followed in sysfs; the disks under it are unknown`,
        });
      }
    }
  }

  private sysRealOf(abs: string): string | null {
    const sys = this.sys();
    try {
      const real = realpathSync.native(abs);
      return sys && real.startsWith(`${sys}/`) ? real : null;
    } catch {
      return null;
    }
  }

  private wholeDisk(
    dir: string,
    out: DataDir,
    target: string,
    findings: Finding[],
    disks: Map<string, WholeDisk>,
  ): void {
    const name = basename(dir);
    if (!out.disks.includes(name)) out.disks.push(name);
    if (disks.has(name)) return;
    const unknown = (file: string, what: string, text: string | null) => {
      findings.push({
        severity: 'unknown',
        target,
        message: `${this.show(this.relToRoot(`${dir}/${file}`))}: ${text === null ? 'cannot be read' : `unexpected "${text.slice(0, 40)}"`}; ${name}'s ${what} is unknown`,
      });
    };
    const devText = this.sysText(`${dir}/dev`);
    const dev = devText !== null && /^\d+:\d+$/.test(devText) ? devText : null;
    if (dev === null) unknown('dev', 'MAJ:MIN', devText);

    const schedText = this.sysText(`${dir}/queue/scheduler`);
    let scheduler: string | null = null;
    let schedulers: string[] = [];
    if (schedText !== null && /^(\[?[a-z0-9_-]+\]?)( \[?[a-z0-9_-]+\]?)*$/.test(schedText)) {
      schedulers = schedText.split(' ').map((s) => s.replace(/[[\]]/g, ''));
      scheduler = /\[([a-z0-9_-]+)\]/.exec(schedText)?.[1] ?? null;
    }
    if (scheduler === null) unknown('queue/scheduler', 'I/O scheduler', schedText);

    const rotText = this.sysText(`${dir}/queue/rotational`);
    const rotational = rotText === '1' ? true : rotText === '0' ? false : null;
    if (rotational === null) unknown('queue/rotational', 'rotational flag', rotText);

    const disk: WholeDisk = { name, dev, node: this.nodeOf(dir), scheduler, schedulers, rotational };
    const raid = this.raidOf(dir);
    if (raid) disk.raid = raid;
    disks.set(name, disk);
  }

  private relToRoot(abs: string): string {
    const sys = this.sys();
    return sys && abs.startsWith(`${sys}/`) ? `/sys/${abs.slice(sys.length + 1)}` : abs;
  }

  /** The nearest numa_node up from the disk's own directory (its controller's PCI function has it). */
  private nodeOf(dir: string): number | null {
    const sys = this.sys();
    for (let d = dir, i = 0; sys && i < 16 && d.startsWith(`${sys}/`); d = dirname(d), i++) {
      const text = this.sysText(`${d}/numa_node`);
      if (text === null) continue;
      return /^\d+$/.test(text) ? Number(text) : null;
    }
    return null;
  }

  /** A RAID virtual drive by its SCSI vendor/model, with the SCSI host's driver when sysfs shows it. */
  private raidOf(dir: string): RaidVirtualDrive | undefined {
    const vendor = this.sysText(`${dir}/device/vendor`);
    const model = this.sysText(`${dir}/device/model`);
    if (!vendor || !model || !raidVirtualDrive(vendor, model)) return undefined;
    const clean = (s: string) => s.replace(/[^\x20-\x7e]/g, '?').slice(0, 64);
    const vd: RaidVirtualDrive = { vendor: clean(vendor), model: clean(model) };
    const host = /\/(host\d+)\//.exec(this.sysRealOf(`${dir}/device`) ?? '')?.[1];
    const driver = host ? this.sysText(`${this.base}/sys/class/scsi_host/${host}/proc_name`) : null;
    if (driver && /^[a-z0-9_]+$/.test(driver)) vd.driver = driver;
    return vd;
  }
}
