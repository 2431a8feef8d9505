// What decides whether a cgroup io setting can act on a disk, observed before any is written:
// `io.weight` does something only under the BFQ scheduler or with iocost enabled for the device on
// the root (`io.cost.qos`); `io.latency` works under any scheduler; all need the io controller.

export interface IoFacts {
  /**
   * The io controller: listed in the cgroup2 root's `cgroup.controllers` (`available`) or not
   * (`missing`); `v1`: the host runs cgroup v1 for its controllers (blkio); `unknown`: unreadable.
   */
  controller: 'available' | 'missing' | 'v1' | 'unknown';
  /** The file that said so, for the note (`/sys/fs/cgroup/cgroup.controllers`). */
  controllersFile: string;
  /**
   * iocost on the root: MAJ:MIN of devices with `enable=1` in `io.cost.qos`; `unsupported`: the kernel
   * has no io.cost.qos (built without iocost); `unknown`: the file could not be read or parsed.
   */
  iocost: { enabled: string[] } | 'unsupported' | 'unknown';
  /** The io.cost.qos file, for the note. */
  iocostFile: string;
}
