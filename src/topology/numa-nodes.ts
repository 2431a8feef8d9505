// NUMA nodes from sysfs: each node's CPUs (those present only), its memory and its distances,
// every statement cross-checked against the CPU directories; one node holding everything when the
// kernel shows no NUMA at all.
import { CpuSet } from '../model/cpuset.js';
import { UserError } from '../model/errors.js';
import type { NumaNode } from '../model/topology.js';
import { CPU_DIR, NODE_DIR, numbered, type SysfsReader } from './sysfs-reader.js';

export function readNodes(
  fs: SysfsReader,
  cpuIds: number[],
  possible: CpuSet | null,
  warnings: string[],
  notes: string[],
): NumaNode[] {
  const ids = numbered(fs.entries(NODE_DIR), 'node');
  if (ids.length === 0) {
    // No NUMA support compiled in or exposed: one node 0 holds every CPU and all memory.
    const mem = readMemTotal(fs, 'proc/meminfo', /^MemTotal:\s+(\d+)\s*kB/m);
    return [
      {
        id: 0,
        cpus: CpuSet.of(cpuIds),
        memoryBytes: mem ?? 0,
        hasMemory: mem === null || mem > 0,
        distances: { 0: 10 },
      },
    ];
  }
  const hasMemory = fs.list(`${NODE_DIR}/has_memory`);
  const dirs = CpuSet.of(cpuIds);
  // Present CPUs have a cpuN directory; without the file (very old kernels), the directories say it.
  const present = fs.list(`${CPU_DIR}/present`) ?? dirs;
  // A node's cpumask is nr_cpu_ids bits wide: no kernel names a CPU past the last possible one.
  const nrCpuIds = possible ? (possible.toArray().at(-1) ?? -1) + 1 : Number.POSITIVE_INFINITY;
  const nodes: NumaNode[] = [];
  const claimedBy = new Map<number, string>();
  const hint = 'sysfs contradicts itself — check the kernel and the --root tree';
  for (const id of ids) {
    const base = `${NODE_DIR}/node${id}`;
    const listFile = fs.text(`${base}/cpulist`) !== null ? `${base}/cpulist` : `${base}/cpumap`;
    const listed = fs.list(`${base}/cpulist`) ?? fs.mask(`${base}/cpumap`) ?? CpuSet.EMPTY;
    const impossible = CpuSet.of(listed.toArray().filter((c) => c >= nrCpuIds));
    if (!impossible.isEmpty) {
      throw new UserError(
        `${fs.path(listFile)} lists CPUs ${impossible}, beyond the last possible CPU (${fs.path(`${CPU_DIR}/possible`)}: ${possible}); ${hint}`,
      );
    }
    // POWER kernels put possible CPUs that are not present (no cpuN directory, not in `present`)
    // in a node's cpulist: nothing runs on them and nothing can be given them, so they are left out.
    const notPresent = listed.minus(present).minus(dirs);
    if (!notPresent.isEmpty) {
      const one = notPresent.size === 1;
      notes.push(
        `node ${id}'s ${listFile.slice(base.length + 1)} names ${one ? 'cpu' : 'cpus'} ${notPresent}, which ${one ? 'is' : 'are'} not present; ignored`,
      );
    }
    const cpus = listed.minus(notPresent);
    for (const c of cpus) {
      const other = claimedBy.get(c);
      if (other) {
        throw new UserError(
          `${fs.path(listFile)} and ${fs.path(other)} both list cpu${c}; a CPU is on one NUMA node; ${hint}`,
        );
      }
      claimedBy.set(c, listFile);
    }
    const unknown = cpus.minus(dirs);
    if (!unknown.isEmpty) {
      throw new UserError(
        `${fs.path(listFile)} lists CPUs ${unknown} that have no directory in ${fs.path(CPU_DIR)}; ${hint}`,
      );
    }
    // A node without meminfo is not "a node without memory": the file is always there on a real
    // kernel, so its absence means the tree is incomplete.
    const mem = readMemTotal(fs, `${base}/meminfo`, /^Node\s+\d+\s+MemTotal:\s+(\d+)\s*kB/m);
    if (mem === null) {
      throw new UserError(
        `${fs.path(`${base}/meminfo`)}: missing; every NUMA node directory has one — the sysfs tree looks incomplete, check that --root points at a real /sys capture`,
      );
    }
    const distText = fs.text(`${base}/distance`);
    const distances: Record<number, number> = {};
    if (distText) {
      // The kernel prints one distance per online node, in node id order.
      const values = distText.split(/\s+/).map(Number);
      if (values.length === ids.length && values.every(Number.isFinite)) {
        ids.forEach((other, i) => {
          distances[other] = values[i]!;
        });
      } else {
        warnings.push(
          `${fs.path(`${base}/distance`)}: ${values.length} distances for ${ids.length} nodes; ignored`,
        );
      }
    }
    nodes.push({
      id,
      cpus,
      memoryBytes: mem,
      hasMemory: hasMemory ? hasMemory.has(id) && mem > 0 : mem > 0,
      distances,
    });
  }
  return nodes;
}

function readMemTotal(fs: SysfsReader, rel: string, re: RegExp): number | null {
  const t = fs.text(rel);
  if (t === null) return null;
  const m = re.exec(t);
  if (!m) throw fs.bad(rel, new Error('no MemTotal line'));
  return Number(m[1]) * 1024;
}
