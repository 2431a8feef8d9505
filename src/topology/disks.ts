// The whole disks under each workload's data directories, read-only under --root: directory →
// mount (/proc/self/mountinfo) → block device (/sys/dev/block/MAJ:MIN) → through partitions,
// device-mapper/LVM and md (their `slaves/`) → whole disks, with the NUMA node, scheduler and
// rotational flag of each. sysfs and /proc are untrusted here: a read that fails or holds something
// unexpected makes that one fact unknown and is said as a finding; nothing is guessed.
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import type {
  BlockLayer,
  DataDir,
  MountRef,
  RaidVirtualDrive,
  WholeDisk,
  WorkloadDisks,
} from '../model/disks.js';
import type { Finding } from '../model/finding.js';
import { byNatural } from '../model/order.js';
import type { DiskSource } from '../model/policy.js';
import { ReadRefused, readBoundedIfPresent } from '../sys/read.js';
import { type Mount, mountOf, parseMountinfo } from './mountinfo.js';
import { kafkaLogDirs, parseProperties } from './properties.js';
import { type HostView, hostView, sandboxedPath } from './hostview.js';
import { resolveUnderRoot } from './rootpath.js';

export interface DiskRequest {
  workload: string;
  source: DiskSource;
}

/** The workloads of a policy that name their data (`disks:`), as requests. */
export function diskRequestsOf(workloads: readonly { name: string; disks?: DiskSource }[]): DiskRequest[] {
  return workloads.flatMap((w) => (w.disks ? [{ workload: w.name, source: w.disks }] : []));
}

/** mountinfo of a container host can hold thousands of mounts; more than this is not a mountinfo. */
const MOUNTINFO_MAX_BYTES = 16 * 1024 * 1024;
/** server.properties is a few KiB. */
const PROPERTIES_MAX_BYTES = 1024 * 1024;
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

/** The operating system's own filesystems a Kafka disk may also hold (named in the plan when it does). */
const SYSTEM_MOUNTS = ['/', '/var', '/tmp', '/home'];

/** Every request's directories and the whole disks under them. */
export function readWorkloadDisks(root: string, requests: readonly DiskRequest[]): WorkloadDisks[] {
  if (requests.length === 0) return [];
  const host = new HostBlocks(root);
  return requests.map((r) => host.workload(r));
}

class HostBlocks {
  private readonly base: string;
  private mounts: Mount[] | null | undefined;
  private mountsProblem: string | undefined;
  private sysReal: string | null | undefined;
  /** Where data paths and server.properties are looked up: the host's mount namespace (hostview.ts). */
  private readonly view: HostView;

  constructor(readonly root: string) {
    this.base = root.replace(/\/+$/, '');
    this.view = hostView(root);
  }

  workload(req: DiskRequest): WorkloadDisks {
    const findings: Finding[] = [];
    const lacking: NonNullable<WorkloadDisks['lacking']> = [];
    const target = req.workload;
    let paths: string[];
    let source = 'paths';
    const named = req.source.kind === 'paths';
    if (req.source.kind === 'paths') paths = req.source.paths;
    else {
      source = `kafkaConfig ${req.source.file}`;
      const read = this.kafkaDirs(req.source.file, target, findings);
      if (read === null) lacking.push({ field: ['kafkaConfig'], message: findings.at(-1)!.message });
      paths = read ?? [];
    }
    const disks = new Map<string, WholeDisk>();
    const dirs = paths.map((p, i) =>
      // A directory server.properties names is the broker's to create; one the policy names is a typo.
      this.dir(
        p,
        target,
        findings,
        disks,
        named ? (message) => lacking.push({ field: ['paths', i], message }) : undefined,
      ),
    );
    const system = this.systemDisks(target);
    for (const d of disks.values()) {
      const points = system.get(d.name);
      if (points) d.alsoHolds = points;
    }
    return {
      workload: req.workload,
      source,
      lacking,
      dirs,
      disks: [...disks.values()].sort((a, b) => byNatural(a.name, b.name)),
      findings,
    };
  }

  private system: Map<string, string[]> | undefined;

  /**
   * Whole disk → the OS's own mount points on it (SYSTEM_MOUNTS), read once per host. What cannot be
   * resolved is left out: this only adds words to the plan, it decides nothing.
   */
  private systemDisks(target: string): Map<string, string[]> {
    if (this.system) return this.system;
    const out = new Map<string, string[]>();
    for (const point of SYSTEM_MOUNTS) {
      const disks = new Map<string, WholeDisk>();
      const dir = this.dir(point, target, [], disks);
      // Only a filesystem mounted there: /var on /'s filesystem is / already.
      if (dir.mount?.point !== point) continue;
      for (const name of disks.keys()) out.set(name, [...(out.get(name) ?? []), point]);
    }
    this.system = out;
    return out;
  }

  /** A file's text under the root, or null with a finding saying why it could not be read. */
  private read(
    file: string,
    maxBytes: number,
    target: string,
    findings: Finding[],
    what: string,
    prefix = this.base,
  ): string | null {
    try {
      const text = readBoundedIfPresent(prefix + file, { maxBytes });
      if (text === null) {
        findings.push({ severity: 'unknown', target, message: `${this.show(file)} does not exist: ${what}` });
      }
      return text;
    } catch (err) {
      if (!(err instanceof ReadRefused)) throw err;
      findings.push({
        severity: 'unknown',
        target,
        message: `cannot read ${this.show(file)} (${err.reason}): ${what}`,
      });
      return null;
    }
  }

  private show(file: string): string {
    return this.base === '' ? file : `${this.base}${file}`;
  }

  /** Kafka's log directories from server.properties; null when it cannot be read (a finding says why). */
  private kafkaDirs(file: string, target: string, findings: Finding[]): string[] | null {
    const where = resolveUnderRoot(this.view.files, file);
    const what = `Kafka's log directories are unknown; check workloads disks.kafkaConfig`;
    if (!where.ok) {
      findings.push({
        severity: 'unknown',
        target,
        message: `cannot read ${this.show(file)} (${where.code} at ${where.at}): ${what}`,
      });
      return null;
    }
    const text = this.read(where.path, PROPERTIES_MAX_BYTES, target, findings, what, this.view.files);
    if (text === null) return null;
    const { dirs, key, defaulted } = kafkaLogDirs(parseProperties(text));
    if (defaulted) {
      findings.push({
        severity: 'warning',
        target,
        message: `${this.show(file)} sets neither log.dirs nor log.dir: the broker writes to Kafka's default ${dirs[0]}, which is lost at reboot on many hosts; set log.dirs`,
      });
    }
    if (dirs.length === 0) {
      findings.push({
        severity: 'warning',
        target,
        message: `${this.show(file)}: ${key} is empty; the broker will not start — set ${key} to its data directories`,
      });
    }
    return dirs.filter((d) => {
      if (d.startsWith('/')) return true;
      findings.push({
        severity: 'warning',
        target,
        message: `${this.show(file)}: ${key} names "${d}", a relative directory (the broker's working directory decides where); write it as an absolute path`,
      });
      return false;
    });
  }

  /** `missing` hears of a directory that does not exist (the policy named it: validate refuses that). */
  private dir(
    path: string,
    target: string,
    findings: Finding[],
    disks: Map<string, WholeDisk>,
    missing?: (message: string) => void,
  ): DataDir {
    const out: DataDir = { path, layers: [], disks: [] };
    const hidden = (p: string) => {
      if (!this.view.problem || !sandboxedPath(p)) return false;
      findings.push({
        severity: 'unknown',
        target,
        message: `${path}: ${this.view.problem}; its disk is unknown`,
      });
      return true;
    };
    if (hidden(path)) return out;
    const where = resolveUnderRoot(this.view.files, path);
    if (!where.ok) {
      const message =
        where.code === 'ENOENT'
          ? `${path} does not exist${where.at !== path ? ` (${where.at} is missing)` : ''}: a typo, or its disk is not mounted; no disk found for it`
          : `${path}: cannot follow the path (${where.code} at ${where.at}); its disk is unknown`;
      findings.push({ severity: where.code === 'ENOENT' ? 'warning' : 'unknown', target, message });
      if (where.code === 'ENOENT') missing?.(message);
      return out;
    }
    if (where.path !== path) out.resolved = where.path;
    if (hidden(where.path)) return out;
    const mounts = this.mountTable(target, findings);
    if (!mounts) return out;
    const m = mountOf(mounts, where.path);
    if (!m) {
      findings.push({
        severity: 'unknown',
        target,
        message: `${path}: no mount in ${this.show(this.view.mountinfo)} covers it; its disk is unknown`,
      });
      return out;
    }
    const mount: MountRef = { point: m.point, fstype: m.fstype, source: m.source, dev: m.dev };
    if (m.root !== '/') mount.bindOf = m.root;
    out.mount = mount;
    const top = this.deviceOf(m, path, target, findings);
    if (!top) return out;
    this.walk(top, out, 0, target, findings, disks);
    out.disks.sort(byNatural);
    return out;
  }

  private mountTable(target: string, findings: Finding[]): Mount[] | null {
    if (this.mounts === undefined) {
      const scratch: Finding[] = [];
      const text = this.read(
        this.view.mountinfo,
        MOUNTINFO_MAX_BYTES,
        target,
        scratch,
        'no directory can be tied to its disk',
      );
      this.mounts = text === null ? null : parseMountinfo(text);
      this.mountsProblem = scratch[0]?.message;
    }
    if (this.mounts === null && this.mountsProblem) {
      if (!findings.some((f) => f.message === this.mountsProblem))
        findings.push({ severity: 'unknown', target, message: this.mountsProblem });
    }
    return this.mounts;
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
  private deviceOf(m: Mount, path: string, target: string, findings: Finding[]): string | null {
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
  private walk(
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
