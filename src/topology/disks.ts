// The whole disks under each workload's data directories, read-only under --root: directory →
// mount (/proc/self/mountinfo) → block device (/sys/dev/block/MAJ:MIN) → through partitions,
// device-mapper/LVM and md (their `slaves/`) → whole disks, with the NUMA node, scheduler and
// rotational flag of each. sysfs and /proc are untrusted here: a read that fails or holds something
// unexpected makes that one fact unknown and is said as a finding; nothing is guessed. Here: the
// directories, server.properties and the mount table; below the mount, in block-devices.ts.
import type { DataDir, MountRef, WholeDisk, WorkloadDisks } from '../model/disks.js';
import type { Finding } from '../model/finding.js';
import { byNatural } from '../model/order.js';
import type { DiskSource } from '../model/policy.js';
import { ReadRefused, readBoundedIfPresent } from '../sys/read.js';
import { type Mount, mountOf, parseMountinfo } from './mountinfo.js';
import { SysBlocks } from './block-devices.js';
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
  /** Where data paths and server.properties are looked up: the host's mount namespace (hostview.ts). */
  private readonly view: HostView;
  /** Below each mount: its block device and the whole disks under it (block-devices.ts). */
  private readonly blocks: SysBlocks;

  constructor(readonly root: string) {
    this.base = root.replace(/\/+$/, '');
    this.view = hostView(root);
    this.blocks = new SysBlocks(this.base);
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
    return this.blocks.show(file);
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
    const top = this.blocks.deviceOf(m, path, target, findings);
    if (!top) return out;
    this.blocks.walk(top, out, 0, target, findings, disks);
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
}
