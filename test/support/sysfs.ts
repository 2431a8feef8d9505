// Writes a Topology back out as a sysfs tree, in the kernel's formats, so CLI tests and benchmarks
// can run `isolate --root DIR` on shapes that no qemu guest here can produce.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CpuSet } from '../../src/model/cpuset.js';
import type { Topology } from '../../src/model/topology.js';

function put(root: string, rel: string, content: string): void {
  const file = join(root, rel);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
}

export function writeSysfs(t: Topology, root = mkdtempSync(join(tmpdir(), 'isolate-sysfs-'))): string {
  const cpu = 'sys/devices/system/cpu';
  put(root, `${cpu}/possible`, `${t.possible}\n`);
  put(root, `${cpu}/online`, `${t.online}\n`);
  put(root, `${cpu}/offline`, `${t.offline}\n`);
  put(root, `${cpu}/isolated`, `${t.isolated}\n`);
  for (const c of t.cpus) {
    const base = `${cpu}/cpu${c.id}`;
    if (c.id !== 0) put(root, `${base}/online`, c.online ? '1\n' : '0\n');
    if (!c.online) {
      mkdirSync(join(root, base), { recursive: true });
      continue;
    }
    put(root, `${base}/topology/physical_package_id`, `${c.package ?? -1}\n`);
    put(root, `${base}/topology/core_id`, `${c.core}\n`);
    put(root, `${base}/topology/core_cpus_list`, `${c.siblings}\n`);
    put(root, `${base}/topology/thread_siblings_list`, `${c.siblings}\n`);
    if (c.l3 !== null) {
      const sharing = CpuSet.of(t.cpus.filter((o) => o.online && o.l3 === c.l3).map((o) => o.id));
      put(root, `${base}/cache/index3/level`, '3\n');
      put(root, `${base}/cache/index3/type`, 'Unified\n');
      put(root, `${base}/cache/index3/shared_cpu_list`, `${sharing}\n`);
    }
  }
  const node = 'sys/devices/system/node';
  const ids = CpuSet.of(t.nodes.map((n) => n.id));
  put(root, `${node}/online`, `${ids}\n`);
  put(root, `${node}/possible`, `${ids}\n`);
  put(root, `${node}/has_cpu`, `${CpuSet.of(t.nodes.filter((n) => !n.cpus.isEmpty).map((n) => n.id))}\n`);
  put(root, `${node}/has_memory`, `${CpuSet.of(t.nodes.filter((n) => n.hasMemory).map((n) => n.id))}\n`);
  for (const n of t.nodes) {
    put(root, `${node}/node${n.id}/cpulist`, `${n.cpus}\n`);
    put(
      root,
      `${node}/node${n.id}/meminfo`,
      `Node ${n.id} MemTotal:       ${Math.floor(n.memoryBytes / 1024)} kB\nNode ${n.id} MemFree:        0 kB\n`,
    );
    put(root, `${node}/node${n.id}/distance`, `${t.nodes.map((m) => n.distances[m.id] ?? 10).join(' ')}\n`);
  }
  for (const d of t.devices) {
    if (d.kind === 'nic') put(root, `sys/class/net/${d.name}/device/numa_node`, `${d.node ?? -1}\n`);
    if (d.kind === 'disk') put(root, `sys/class/block/${d.name}/device/numa_node`, `${d.node ?? -1}\n`);
  }
  return root;
}
