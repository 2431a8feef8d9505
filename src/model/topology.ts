import type { CpuSet } from './cpuset.js';

/** One logical CPU (a hardware thread). */
export interface Cpu {
  id: number;
  online: boolean;
  /** `physical_package_id`: a label, not an index (can be -1 or sparse on real machines). */
  package: number | null;
  die: number | null;
  cluster: number | null;
  /** NUMA node holding this CPU; null when no node lists it (broken firmware). */
  node: number | null;
  /** Physical core: the lowest CPU id among its SMT siblings. Null for offline CPUs (no topology/). */
  core: number | null;
  /** Online SMT siblings including itself, as the kernel reports them. */
  siblings: CpuSet;
  /** L3 group: lowest CPU id sharing this CPU's L3 cache; null when sysfs has no L3 entry. */
  l3: number | null;
  /** Hybrid parts only: P-core or E-core. */
  coreType: 'performance' | 'efficiency' | null;
}

/** A physical core: the unit exclusive workloads are given. */
export interface Core {
  /** Lowest CPU id among its siblings. */
  id: number;
  package: number | null;
  node: number | null;
  l3: number | null;
  coreType: 'performance' | 'efficiency' | null;
  /** Online siblings. */
  cpus: CpuSet;
}

export interface NumaNode {
  id: number;
  /** Online CPUs on this node. */
  cpus: CpuSet;
  /** MemTotal from the node's meminfo; 0 for a node without memory. */
  memoryBytes: number;
  hasMemory: boolean;
  /** SLIT distance to each node, by node id. */
  distances: Record<number, number>;
}

export type DeviceKind = 'nic' | 'disk' | 'scsi';

export interface Device {
  kind: DeviceKind;
  name: string;
  /** NUMA node the device is attached to; null when the kernel says -1 (unknown). */
  node: number | null;
  /** SCSI hosts: the driver's proc_name (megaraid_sas, hpsa, ...). */
  driver?: string;
}

export interface Topology {
  /** The root directory the tree was read from. */
  root: string;
  cpus: Cpu[];
  cores: Core[];
  nodes: NumaNode[];
  devices: Device[];
  online: CpuSet;
  offline: CpuSet;
  possible: CpuSet;
  /** Boot-time isolated CPUs (`isolcpus=`); these may only go into an isolated partition. */
  isolated: CpuSet;
  /** Oddities found while reading that an SRE should know about. */
  warnings: string[];
  /** How this kernel reports the machine, said once (INFO): worth knowing, nothing to fix. */
  notes: string[];
}
