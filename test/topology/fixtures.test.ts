// The topology reader against sysfs trees captured from real kernels (and hand-made trees modelled
// on real machines), checked against `lscpu -p` run in the same guest — not against our own output.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTopology } from '../../src/topology/read.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/sysfs');
const trees = readdirSync(FIXTURES).filter(
  (d) => !d.startsWith('.') && !d.endsWith('.mjs') && !d.endsWith('.md'),
);

interface LscpuRow {
  cpu: number;
  core: number | null;
  socket: number | null;
  node: number | null;
  online: boolean;
}

function lscpu(tree: string): LscpuRow[] {
  const text = readFileSync(join(FIXTURES, tree, 'lscpu.txt'), 'utf8');
  const num = (s: string | undefined) => (s === undefined || s === '' ? null : Number(s));
  return text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const [cpu, core, socket, node, online] = l.split(',');
      return {
        cpu: Number(cpu),
        core: num(core),
        socket: num(socket),
        node: num(node),
        online: online === 'Y',
      };
    });
}

describe('topology from real sysfs trees', () => {
  it('has the layouts the planner must handle', () => {
    for (const t of [
      'qemu-2s-smt2',
      'qemu-1s-4nodes',
      'qemu-nosmt',
      'qemu-smt4',
      'qemu-memoryless-node',
      'qemu-offline-cpus',
    ]) {
      expect(trees).toContain(t);
    }
    for (const t of ['intel-2s-ht-split', 'intel-hybrid', 'amd-epyc-l3', 'power9-2s-smt4']) {
      expect(trees).toContain(t);
    }
  });

  it.each(trees)('%s agrees with lscpu', (tree) => {
    const topo = readTopology(join(FIXTURES, tree));
    const rows = lscpu(tree);
    expect(topo.cpus.map((c) => c.id)).toEqual(rows.map((r) => r.cpu));
    // lscpu numbers sockets logically too, in order of first appearance; physical_package_id is a
    // label (0 and 8 on POWER9, -1 or sparse elsewhere): compare the label's rank in that order.
    const socketOf = new Map<number | null, number>();
    for (const c of topo.cpus) {
      if (c.online && !socketOf.has(c.package)) socketOf.set(c.package, socketOf.size);
    }
    for (const r of rows) {
      const c = topo.cpus.find((x) => x.id === r.cpu)!;
      expect(c.online, `cpu${r.cpu} online`).toBe(r.online);
      if (!r.online) {
        expect(c.core).toBeNull();
        continue;
      }
      expect(c.node, `cpu${r.cpu} node`).toBe(r.node);
      expect(socketOf.get(c.package), `cpu${r.cpu} socket`).toBe(r.socket);
    }
    // lscpu numbers cores logically; the reader names a core by its lowest CPU. The groupings must match.
    const online = rows.filter((r) => r.online);
    for (const a of online) {
      for (const b of online) {
        const sameLscpu = a.core === b.core && a.socket === b.socket;
        const ca = topo.cpus.find((x) => x.id === a.cpu)!;
        const cb = topo.cpus.find((x) => x.id === b.cpu)!;
        expect(ca.core === cb.core, `cpu${a.cpu} and cpu${b.cpu} share a core?`).toBe(sameLscpu);
      }
    }
    // A core is named by its lowest online CPU, and its CPUs are exactly the CPUs naming it.
    for (const core of topo.cores) {
      expect(core.id).toBe(core.cpus.first);
      expect(topo.cpus.filter((c) => c.core === core.id).map((c) => c.id)).toEqual(core.cpus.toArray());
    }
    // Every node's CPUs are the online CPUs lscpu puts on it.
    for (const n of topo.nodes) {
      expect(n.cpus.toArray()).toEqual(online.filter((r) => r.node === n.id).map((r) => r.cpu));
    }
  });

  it('qemu-2s-smt2: two sockets, SMT2 adjacent, node memory, NIC and NVMe on node 1', () => {
    const t = readTopology(join(FIXTURES, 'qemu-2s-smt2'));
    expect(t.cores.map((c) => c.cpus.toString())).toEqual(['0-1', '2-3', '4-5', '6-7']);
    expect(t.nodes.map((n) => n.hasMemory)).toEqual([true, true]);
    expect(t.nodes[0]!.memoryBytes).toBeGreaterThan(900 * 1024 ** 2);
    expect(t.nodes[1]!.distances).toEqual({ 0: 20, 1: 10 });
    expect(t.devices.find((d) => d.name === 'eth0')).toEqual({ kind: 'nic', name: 'eth0', node: 1 });
    expect(t.devices.find((d) => d.name === 'nvme0n1')?.node).toBe(1);
    expect(t.devices.find((d) => d.name === 'vda')?.node).toBeNull();
    expect(t.devices.find((d) => d.kind === 'scsi')).toEqual({
      kind: 'scsi',
      name: 'host0',
      node: null,
      driver: 'virtio_scsi',
    });
  });

  it('qemu-memoryless-node: node 1 has CPUs but no memory', () => {
    const t = readTopology(join(FIXTURES, 'qemu-memoryless-node'));
    const n1 = t.nodes.find((n) => n.id === 1)!;
    expect(n1.cpus.isEmpty).toBe(false);
    expect(n1.hasMemory).toBe(false);
    expect(n1.memoryBytes).toBe(0);
  });

  it('qemu-offline-cpus: a lone offline sibling leaves a one-thread core, and is reported', () => {
    const t = readTopology(join(FIXTURES, 'qemu-offline-cpus'));
    const rows = lscpu('qemu-offline-cpus');
    const offline = rows.filter((r) => !r.online).map((r) => r.cpu);
    expect(t.offline.toArray()).toEqual(offline);
    // Some core lost one of two threads: its online sibling set has a single CPU.
    const loners = t.cores.filter((c) => c.cpus.size === 1);
    expect(loners.length).toBeGreaterThan(0);
    expect(t.warnings.join(' ')).toMatch(new RegExp(`CPUs ${t.offline} are offline`));
  });

  it('intel-2s-ht-split: siblings are N and N+8', () => {
    const t = readTopology(join(FIXTURES, 'intel-2s-ht-split'));
    expect(t.cores.find((c) => c.id === 0)!.cpus.toString()).toBe('0,8');
    for (const c of t.cores) expect(c.cpus.toArray()).toEqual([c.id, c.id + 8]);
  });

  it('intel-hybrid: P-cores and E-cores from cpu_core/cpu_atom', () => {
    const t = readTopology(join(FIXTURES, 'intel-hybrid'));
    const p = t.cores.filter((c) => c.coreType === 'performance');
    const e = t.cores.filter((c) => c.coreType === 'efficiency');
    expect(p.every((c) => c.cpus.size === 2)).toBe(true);
    expect(e.every((c) => c.cpus.size === 1)).toBe(true);
    expect(p.length).toBeGreaterThan(0);
    expect(e.length).toBeGreaterThan(0);
  });

  it('power9-2s-smt4: SMT4 siblings adjacent, chips and nodes 0 and 8, possible-but-not-present CPUs ignored', () => {
    const t = readTopology(join(FIXTURES, 'power9-2s-smt4'));
    expect(t.cores).toHaveLength(32);
    for (const c of t.cores) expect(c.cpus.toArray()).toEqual([c.id, c.id + 1, c.id + 2, c.id + 3]);
    expect(t.nodes.map((n) => [n.id, n.cpus.toString()])).toEqual([
      [0, '0-63'],
      [8, '64-127'],
    ]);
    expect(new Set(t.cpus.map((c) => c.package))).toEqual(new Set([0, 8]));
    expect(t.possible.toString()).toBe('0-159');
    expect(t.notes).toContain("node 0's cpulist names cpus 128-159, which are not present; ignored");
  });

  it('amd-epyc-l3: several L3 groups per node', () => {
    const t = readTopology(join(FIXTURES, 'amd-epyc-l3'));
    for (const n of t.nodes) {
      const groups = new Set(t.cores.filter((c) => c.node === n.id).map((c) => c.l3));
      expect(groups.size).toBeGreaterThan(1);
    }
  });
});
