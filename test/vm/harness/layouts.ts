/**
 * qemu machine shapes. Each gives the guest kernel a real CPU/NUMA topology to report in /sys, so the
 * topology reader and the cgroup code can be tested against what Linux actually produces.
 *
 * `Skylake-Server-v1` is used because an AMD model makes the guest see no SMT at all. CPU-to-node
 * placement uses the legacy `-numa node,cpus=` form: qemu 7.2 accepts it and it keeps layouts readable.
 */
export interface VmLayout {
  name: string;
  /** Value of qemu `-smp`. */
  smp: string;
  /** Extra qemu argv for the NUMA shape (`-object memory-backend-ram,...`, `-numa node,...`). */
  numa: string[];
  /** Guest RAM (qemu `-m`); must equal the sum of the memory backends in `numa`. */
  memMiB: number;
  /** qemu `-cpu`; default `Skylake-Server-v1`. */
  cpuModel?: string;
  /** Appended to the kernel command line. */
  kernelArgs?: string;
  extraQemuArgs?: string[];
}

function ramNode(id: number, cpus: string, sizeMiB: number): string[] {
  return [
    '-object',
    `memory-backend-ram,id=m${id},size=${sizeMiB}M`,
    '-numa',
    `node,nodeid=${id},cpus=${cpus},memdev=m${id}`,
  ];
}

export const LAYOUTS = {
  /** 2 sockets x 2 cores x 2 threads, one node per socket. Siblings adjacent: (0,1) (2,3) ... */
  twoSocketSmt2: {
    name: 'twoSocketSmt2',
    smp: '8,sockets=2,cores=2,threads=2',
    numa: [...ramNode(0, '0-3', 1024), ...ramNode(1, '4-7', 1024)],
    memMiB: 2048,
  },
  /** One socket, 4 cores x SMT2, split into 4 nodes of one core each (sub-NUMA clustering). */
  oneSocket4Nodes: {
    name: 'oneSocket4Nodes',
    smp: '8,sockets=1,cores=4,threads=2',
    numa: [
      ...ramNode(0, '0-1', 512),
      ...ramNode(1, '2-3', 512),
      ...ramNode(2, '4-5', 512),
      ...ramNode(3, '6-7', 512),
    ],
    memMiB: 2048,
  },
  /** 2 sockets x 2 cores, threads=1: every CPU is its own core. */
  noSmt: {
    name: 'noSmt',
    smp: '4,sockets=2,cores=2,threads=1',
    numa: [...ramNode(0, '0-1', 1024), ...ramNode(1, '2-3', 1024)],
    memMiB: 2048,
  },
  /** One socket, 2 cores x 4 threads (POWER-like SMT4), one node. */
  smt4: {
    name: 'smt4',
    smp: '8,sockets=1,cores=2,threads=4',
    numa: [...ramNode(0, '0-7', 2048)],
    memMiB: 2048,
  },
  /** Like twoSocketSmt2, but node 1 has CPUs 4-7 and no memory at all. */
  memorylessNode: {
    name: 'memorylessNode',
    smp: '8,sockets=2,cores=2,threads=2',
    numa: [...ramNode(0, '0-3', 2048), '-numa', 'node,nodeid=1,cpus=4-7'],
    memMiB: 2048,
  },
} satisfies Record<string, VmLayout>;

export type LayoutName = keyof typeof LAYOUTS;
