// What isolate knows about the disks under a workload's data directories: each directory's mount,
// the block devices stacked under it, and the whole disks at the bottom, whose MAJ:MIN the cgroup io
// controller is keyed by. Every field read from sysfs may be unknown (null): a failed read says so.
import type { Finding } from './finding.js';

/** A SCSI disk presented by a RAID controller as one virtual drive (its own vendor and model). */
export interface RaidVirtualDrive {
  vendor: string;
  model: string;
  /** The SCSI host's driver (`megaraid_sas`, `hpsa`, …) when sysfs shows it: the RAID section's key. */
  driver?: string;
}

/** A whole disk: the device io settings apply to (partitions, LVM and md resolve down to these). */
export interface WholeDisk {
  name: string;
  /** MAJ:MIN, as io.weight / io.max / io.latency lines name it; null when `dev` could not be read. */
  dev: string | null;
  /** NUMA node of its controller; null when the kernel says -1 or there is none. */
  node: number | null;
  /** The active I/O scheduler (`bfq`, `mq-deadline`, `none`, …); null when unknown. */
  scheduler: string | null;
  /** Every scheduler the kernel offers for it. */
  schedulers: string[];
  /** true: spinning (HDD); false: solid state; null: unknown. */
  rotational: boolean | null;
  raid?: RaidVirtualDrive;
  /**
   * The operating system's own filesystems on this disk too (`/`, `/var`, `/tmp`): io settings on it
   * then act on their writes as well, which the plan says.
   */
  alsoHolds?: string[];
}

/** A block device between a mount and its whole disks. */
export interface BlockLayer {
  name: string;
  kind: 'partition' | 'lvm' | 'device-mapper' | 'md' | 'loop';
  /** `vg0-data` for LVM, the md level (`raid1`) for md, the backing file for a loop device. */
  detail?: string;
}

export interface MountRef {
  /** The mount point the directory lies under. */
  point: string;
  fstype: string;
  /** The mount source as the kernel reports it (`/dev/mapper/vg0-data`, `tmpfs`). */
  source: string;
  /** MAJ:MIN of the mounted filesystem (0:N for filesystems without a block device). */
  dev: string;
  /** A bind mount: the directory of the filesystem mounted at `point`. */
  bindOf?: string;
}

export interface DataDir {
  /** As configured (policy or server.properties). */
  path: string;
  /** After following symbolic links, when different. */
  resolved?: string;
  mount?: MountRef;
  /** The block devices from the mount down to (not including) the whole disks. */
  layers: BlockLayer[];
  /** Names of the whole disks the directory's data lives on. */
  disks: string[];
}

export interface WorkloadDisks {
  workload: string;
  /** `paths` or `kafkaConfig /etc/kafka/server.properties`: where the directories came from. */
  source: string;
  dirs: DataDir[];
  /** The distinct whole disks under every directory, in natural name order. */
  disks: WholeDisk[];
  /** Directories that do not exist or have no disk, reads that failed: said, never guessed past. */
  findings: Finding[];
  /**
   * What the policy names under the workload's `disks:` and this host lacks (a kafkaConfig file that
   * cannot be read, a `paths` entry that does not exist), by its field there: plan warns, `policy
   * validate --root` refuses (the role validates on the host before it installs a policy).
   */
  lacking?: { field: (string | number)[]; message: string }[];
}
