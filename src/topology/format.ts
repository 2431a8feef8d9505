import { formatBytes, plural } from '../model/units.js';
import type { Topology } from '../model/topology.js';

/** The `--json` shape of `isolate topology`. */
export function topologyToJson(t: Topology) {
  return {
    cpus: t.cpus.map((c) => ({
      id: c.id,
      online: c.online,
      package: c.package,
      die: c.die,
      cluster: c.cluster,
      node: c.node,
      core: c.core,
      siblings: c.siblings.toArray(),
      l3: c.l3,
      coreType: c.coreType,
    })),
    nodes: t.nodes.map((n) => ({
      id: n.id,
      cpus: n.cpus.toArray(),
      memoryBytes: n.memoryBytes,
      hasMemory: n.hasMemory,
      distances: n.distances,
    })),
    cores: t.cores.map((c) => ({
      id: c.id,
      node: c.node,
      package: c.package,
      l3: c.l3,
      coreType: c.coreType,
      cpus: c.cpus.toArray(),
    })),
    devices: t.devices,
    online: t.online.toArray(),
    offline: t.offline.toArray(),
    possible: t.possible.toArray(),
    isolated: t.isolated.toArray(),
    warnings: t.warnings,
    notes: t.notes,
  };
}

/** Human view: package → NUMA node → core → CPUs, with memory and devices per node. */
export function formatTopology(t: Topology, hostFacts?: string): string {
  const lines: string[] = [];
  if (hostFacts) lines.push(hostFacts);
  const smt = Math.max(...t.cores.map((c) => c.cpus.size), 1);
  lines.push(
    `${plural(t.online.size, 'online CPU')} (${t.online}), ${plural(t.cores.length, 'physical core')}, ${plural(t.nodes.length, 'NUMA node')}, up to ${plural(smt, 'thread')} per core`,
  );
  if (!t.offline.isEmpty) lines.push(`offline CPUs: ${t.offline}`);
  if (!t.isolated.isEmpty) lines.push(`isolated CPUs (isolcpus): ${t.isolated}`);
  // Columns line up across the whole listing, whatever the width of ids and CPU lists.
  const idWidth = Math.max(4, ...t.cores.map((c) => String(c.id).length));
  const cpusWidth = Math.max(...t.cores.map((c) => c.cpus.toString().length), 1);
  const packages = [...new Set(t.cores.map((c) => c.package))].sort((a, b) => (a ?? -1) - (b ?? -1));
  for (const pkg of packages) {
    lines.push(`package ${pkg ?? '?'}`);
    const nodeIds = [...new Set(t.cores.filter((c) => c.package === pkg).map((c) => c.node))];
    for (const nodeId of nodeIds.sort((a, b) => (a ?? -1) - (b ?? -1))) {
      const node = t.nodes.find((n) => n.id === nodeId);
      const mem = node ? (node.hasMemory ? formatBytes(node.memoryBytes) : 'no memory') : '?';
      const devs = t.devices.filter((d) => d.node === nodeId && nodeId !== null);
      lines.push(
        `  node ${nodeId ?? '?'}  memory ${mem}${devs.length ? `  devices ${devs.map((d) => `${d.kind}:${d.name}${d.driver ? `(${d.driver})` : ''}`).join(' ')}` : ''}`,
      );
      for (const core of t.cores.filter((c) => c.package === pkg && c.node === nodeId)) {
        const extra = [
          core.l3 !== null ? `L3 ${core.l3}` : '',
          core.coreType === 'efficiency' ? 'E-core' : core.coreType === 'performance' ? 'P-core' : '',
        ]
          .filter(Boolean)
          .join(', ');
        const cpus = core.cpus.toString();
        lines.push(
          `    core ${String(core.id).padEnd(idWidth)} cpus ${extra ? `${cpus.padEnd(cpusWidth)}  (${extra})` : cpus}`,
        );
      }
    }
  }
  const memOnly = t.nodes.filter((n) => n.cpus.isEmpty);
  for (const n of memOnly) lines.push(`node ${n.id}  memory ${formatBytes(n.memoryBytes)}, no CPUs`);
  const unknown = t.devices.filter((d) => d.node === null);
  if (unknown.length) {
    lines.push(
      `devices on an unknown node: ${unknown.map((d) => `${d.kind}:${d.name}${d.driver ? `(${d.driver})` : ''}`).join(' ')}`,
    );
  }
  for (const n of t.notes) lines.push(`note: ${n}`);
  for (const w of t.warnings) lines.push(`warning: ${w}`);
  return `${lines.join('\n')}\n`;
}
