// Reads CPU, NUMA and device topology from a sysfs tree under `root` (default `/`), so the same code
// runs on a live host and on fixture trees captured from real kernels. Synchronous on purpose: a
// few hundred tiny files read in a tight loop is faster than as many promises, and `plan` must start fast.
// The parts: sysfs-reader.ts (files), cpus.ts (CPUs and cores), numa-nodes.ts, devices.ts.
import { normalize } from 'node:path';
import { CpuSet } from '../model/cpuset.js';
import { UserError } from '../model/errors.js';
import type { Cpu, Topology } from '../model/topology.js';
import { readHeadSync } from '../sys/read.js';
import { buildCores, readCpus } from './cpus.js';
import { readDevices } from './devices.js';
import { readNodes } from './numa-nodes.js';
import { CPU_DIR, NODE_DIR, numbered, SysfsReader } from './sysfs-reader.js';

const STAMP_FILES = [`${CPU_DIR}/online`, `${NODE_DIR}/online`, `${NODE_DIR}/has_memory`];

/**
 * The few kernel files whose contents change when the topology does (CPU or memory hotplug): a
 * long-running reader compares this stamp each round and re-reads the whole tree only on a change.
 */
export function topologyStamp(root = '/'): string {
  // `offline` is `possible` (fixed at boot) minus `online`, and `isolated` is set at boot only
  // (isolcpus=): neither can change without one of these changing or a reboot. Read every round of
  // the agent, never parsed (a change only triggers readTopology).
  return STAMP_FILES.map((f) => readHeadSync(normalize(`${root}/${f}`), 4096) ?? '-').join('|');
}

/** Read the whole topology under `root`. Throws UserError naming the file when sysfs is malformed. */
export function readTopology(root = '/'): Topology {
  const fs = new SysfsReader(root);
  const warnings: string[] = [];

  const cpuIds = numbered(fs.entries(CPU_DIR), 'cpu');
  if (cpuIds.length === 0) {
    throw new UserError(
      `${fs.path(CPU_DIR)}: no cpuN directories found; --root must point at a tree containing sys/devices/system/cpu`,
    );
  }
  const possibleList = fs.list(`${CPU_DIR}/possible`);
  const possible = possibleList ?? CpuSet.of(cpuIds);
  const onlineList = fs.list(`${CPU_DIR}/online`);
  const offlineList = fs.list(`${CPU_DIR}/offline`);
  const isolated = fs.list(`${CPU_DIR}/isolated`) ?? CpuSet.EMPTY;
  checkOnline(fs, cpuIds, onlineList, offlineList);

  // Hybrid parts publish their P-core and E-core CPUs as two PMU devices.
  const pCores = fs.list('sys/devices/cpu_core/cpus');
  const eCores = fs.list('sys/devices/cpu_atom/cpus');

  const notes: string[] = [];
  const nodes = readNodes(fs, cpuIds, possibleList, warnings, notes);
  const nodeOfCpu = new Map<number, number>();
  for (const n of nodes) for (const c of n.cpus) nodeOfCpu.set(c, n.id);

  const cpus = readCpus(fs, cpuIds, { onlineList, nodeOfCpu, pCores, eCores });
  const offline = CpuSet.of(cpus.filter((c) => !c.online).map((c) => c.id));
  warnings.push(...unplacedCpus(cpus, offline));

  const cores = buildCores(cpus, warnings);
  const online = CpuSet.of(cpus.filter((c) => c.online).map((c) => c.id));
  // Nodes list CPUs that are online only (a node's cpulist may still carry offline ones).
  const nodesOnline = nodes.map((n) => ({ ...n, cpus: n.cpus.intersect(online) }));

  return {
    root,
    cpus,
    cores,
    nodes: nodesOnline,
    devices: readDevices(fs),
    online,
    offline,
    possible,
    isolated,
    warnings,
    notes,
  };
}

/** CPUs that cannot be fenced: offline ones (their core is unknown) and those on no NUMA node. */
function unplacedCpus(cpus: readonly Cpu[], offline: CpuSet): string[] {
  const warnings: string[] = [];
  // Offline siblings are not listed in their core's sibling set, so an offline thread cannot be
  // attributed to a core: say so, since it would not be fenced if it came back online.
  if (!offline.isEmpty) {
    warnings.push(
      `CPUs ${offline} are offline; their cores cannot be determined, and a CPU brought online later is not fenced until the next plan`,
    );
  }
  for (const c of cpus) {
    if (c.online && c.node === null) {
      warnings.push(
        `cpu${c.id} belongs to no NUMA node (firmware table problem); it is never given to exclusive workloads`,
      );
    }
  }
  return warnings;
}

/** `online`, `offline` and the cpuN directories are three statements of one fact: they must agree. */
function checkOnline(fs: SysfsReader, cpuIds: number[], online: CpuSet | null, offline: CpuSet | null): void {
  const onlineFile = fs.path(`${CPU_DIR}/online`);
  const hint = 'sysfs contradicts itself — check the kernel and the --root tree';
  if (online?.isEmpty) throw new UserError(`${onlineFile}: empty, yet some CPU runs this program; ${hint}`);
  if (online) {
    const missing = online.minus(CpuSet.of(cpuIds));
    if (!missing.isEmpty) {
      throw new UserError(
        `${onlineFile} lists CPUs ${missing} that have no directory in ${fs.path(CPU_DIR)}; ${hint}`,
      );
    }
  }
  if (online && offline?.overlaps(online)) {
    throw new UserError(
      `${onlineFile} and ${fs.path(`${CPU_DIR}/offline`)} both list CPUs ${online.intersect(offline)}; ${hint}`,
    );
  }
}
