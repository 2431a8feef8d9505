#!/usr/bin/env node
// Generates the hand-made sysfs fixture trees in test/fixtures/sysfs/ for machine shapes qemu cannot
// produce (split SMT numbering, hybrid cores, AMD L3 groups, POWER9 with possible-but-not-present CPUs
// in a node's cpulist). Each tree imitates a named real machine running Debian 12's 6.1 kernel, with
// the same file set and formatting as the qemu captures next to them (test/vm/capture-sysfs.test.ts),
// and powerpc's own file set for the POWER9 tree. Run: node scripts/gen-handmade-sysfs.mjs
// The output is committed; rerunning must reproduce it byte for byte.
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'fixtures', 'sysfs');

// ---------- kernel formatting ----------

/** The kernel's list format (`%*pbl`): ascending ranges, e.g. `0-3,8-11`. */
function list(ids) {
  const s = [...new Set(ids)].sort((a, b) => a - b);
  const out = [];
  for (let i = 0; i < s.length; ) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === s[j] + 1) j++;
    out.push(i === j ? `${s[i]}` : `${s[i]}-${s[j]}`);
    i = j + 1;
  }
  return out.join(',');
}

/**
 * The kernel's mask format (`%*pb` over nr_cpu_ids bits): 32-bit hex words, most significant first,
 * comma separated; the first word only as wide as the bits it holds (8 CPUs -> `ff`, 64 -> 2 words).
 */
function mask(ids, nbits) {
  const words = [];
  for (let w = 0; w * 32 < nbits; w++) {
    let v = 0;
    for (const id of ids) if (id >= w * 32 && id < w * 32 + 32) v |= 1 << (id - w * 32);
    const bits = Math.min(32, nbits - w * 32);
    words.push((v >>> 0).toString(16).padStart(Math.ceil(bits / 4), '0'));
  }
  return words.reverse().join(',');
}

/**
 * Node meminfo in the 6.1 layout, labels and spacing copied from the qemu capture
 * (qemu-2s-smt2/.../node0/meminfo), including the kernel's own misalignment of FileHugePages.
 * Values other than MemTotal/MemFree/MemUsed are a plausible idle-server split of the used memory.
 */
const MEMINFO_FIELDS = [
  ['MemTotal:       ', 'total'],
  ['MemFree:        ', 'free'],
  ['MemUsed:        ', 'used'],
  ['SwapCached:     ', 0],
  ['Active:         ', 0.3],
  ['Inactive:       ', 0.45],
  ['Active(anon):   ', 0.12],
  ['Inactive(anon): ', 0.05],
  ['Active(file):   ', 0.18],
  ['Inactive(file): ', 0.4],
  ['Unevictable:    ', 0],
  ['Mlocked:        ', 0],
  ['Dirty:          ', 0.0004],
  ['Writeback:      ', 0],
  ['FilePages:      ', 0.6],
  ['Mapped:         ', 0.04],
  ['AnonPages:      ', 0.17],
  ['Shmem:          ', 0.01],
  ['KernelStack:    ', 0.002],
  ['PageTables:     ', 0.003],
  ['SecPageTables:  ', 0],
  ['NFS_Unstable:   ', 0],
  ['Bounce:         ', 0],
  ['WritebackTmp:   ', 0],
  ['KReclaimable:   ', 0.1],
  ['Slab:           ', 0.15],
  ['SReclaimable:   ', 0.1],
  ['SUnreclaim:     ', 0.05],
  ['AnonHugePages:  ', 0.02],
  ['ShmemHugePages: ', 0],
  ['ShmemPmdMapped: ', 0],
  ['FileHugePages: ', 0],
  ['FilePmdMapped: ', 0],
];

function meminfo(node, totalKb, freeKb) {
  const used = totalKb - freeKb;
  const lines = MEMINFO_FIELDS.map(([label, f]) => {
    const v = f === 'total' ? totalKb : f === 'free' ? freeKb : f === 'used' ? used : Math.round(used * f);
    return `Node ${node} ${label}${String(v).padStart(8)} kB\n`;
  });
  for (const l of ['HugePages_Total:', 'HugePages_Free: ', 'HugePages_Surp: ']) {
    lines.push(`Node ${node} ${l}${String(0).padStart(6)}\n`);
  }
  return lines.join('');
}

// ---------- devices ----------
// Laid out like the qemu captures (and real sysfs): sys/class/* entries are relative symlinks into
// sys/devices/pci*, `device` links point at the device, and numa_node sits on the PCI function (and on
// the NVMe controller, which has its own). `pci` is the path below sys/devices ending in the function.

const fn = (pci) => pci.split('/').at(-1);

function pciNic(name, pci, node) {
  const phys = `sys/devices/${pci}/net/${name}`;
  return {
    links: {
      [`sys/class/net/${name}`]: `../../devices/${pci}/net/${name}`,
      [`${phys}/device`]: `../../../${fn(pci)}`,
    },
    files: { [`sys/devices/${pci}/numa_node`]: `${node}\n` },
  };
}

function nvme(disk, ctrl, pci, node) {
  const phys = `sys/devices/${pci}/nvme/${ctrl}/${disk}`;
  return {
    links: {
      [`sys/class/block/${disk}`]: `../../devices/${pci}/nvme/${ctrl}/${disk}`,
      [`${phys}/device`]: `../../${ctrl}`,
    },
    files: {
      [`sys/devices/${pci}/nvme/${ctrl}/numa_node`]: `${node}\n`,
      [`sys/devices/${pci}/numa_node`]: `${node}\n`,
    },
  };
}

/** `via` is the directory between the PCI function and hostN (`ata1` for libata, '' for RAID HBAs). */
function scsiHost(host, pci, via, procName, node) {
  const hostDir = `${pci}/${via ? `${via}/` : ''}${host}`;
  const phys = `sys/devices/${hostDir}/scsi_host/${host}`;
  return {
    links: {
      [`sys/class/scsi_host/${host}`]: `../../devices/${hostDir}/scsi_host/${host}`,
      [`${phys}/device`]: `../../../${host}`,
    },
    files: { [`${phys}/proc_name`]: `${procName}\n`, [`sys/devices/${pci}/numa_node`]: `${node}\n` },
  };
}

function devices(...parts) {
  const out = { links: {}, files: {} };
  for (const p of parts) {
    Object.assign(out.links, p.links);
    Object.assign(out.files, p.files);
  }
  return out;
}

// ---------- tree model ----------

/**
 * cpus: [{ id, pkg, coreId, node, siblings: number[], clusterId, clusterCpus: number[],
 *          caches: [{ level, type, shared: number[], id }] }]
 * nodes: [{ id, memKb, freeKb }], distances: number[][], possible: number[],
 * devices: { links: {path: target}, files: {path: content} }
 * POWER (`arch: 'ppc64'`): powerpc's topology directory has no die/cluster files, every CPU (cpu0
 * too) has an `online` file, cache directories have no `id`, and `kernelMax` is the kernel's
 * NR_CPUS - 1. `nodeExtraCpus: { node: number[] }` are CPUs a node's cpulist/cpumap names besides
 * its present ones (possible but not present: no cpuN directory, not in `present`).
 */
function writeMachine(m) {
  const dir = join(ROOT, m.name);
  rmSync(dir, { recursive: true, force: true });
  const files = new Map();
  const put = (p, content) => files.set(p, content);
  const nbits = Math.max(...m.possible) + 1; // nr_cpu_ids
  const present = m.cpus.map((c) => c.id);
  const C = 'sys/devices/system/cpu';
  put(`${C}/online`, `${list(present)}\n`);
  put(`${C}/offline`, `${list(m.possible.filter((p) => !present.includes(p)))}\n`);
  put(`${C}/possible`, `${list(m.possible)}\n`);
  put(`${C}/present`, `${list(present)}\n`);
  put(`${C}/isolated`, '\n');
  put(`${C}/kernel_max`, `${m.kernelMax ?? 8191}\n`);
  const ppc = m.arch === 'ppc64';
  const byPkg = (pkg) => m.cpus.filter((c) => c.pkg === pkg).map((c) => c.id);
  for (const c of m.cpus) {
    const d = `${C}/cpu${c.id}`;
    // x86 cannot offline the boot CPU, so the kernel creates no online file for cpu0; POWER can.
    if (c.id !== 0 || ppc) put(`${d}/online`, '1\n');
    const t = `${d}/topology`;
    const pkgCpus = byPkg(c.pkg);
    const topo = {
      cluster_cpus: mask(c.clusterCpus, nbits),
      cluster_cpus_list: list(c.clusterCpus),
      cluster_id: c.clusterId,
      core_cpus: mask(c.siblings, nbits),
      core_cpus_list: list(c.siblings),
      core_id: c.coreId,
      core_siblings: mask(pkgCpus, nbits),
      core_siblings_list: list(pkgCpus),
      die_cpus: mask(pkgCpus, nbits),
      die_cpus_list: list(pkgCpus),
      die_id: 0,
      package_cpus: mask(pkgCpus, nbits),
      package_cpus_list: list(pkgCpus),
      physical_package_id: c.pkg,
      thread_siblings: mask(c.siblings, nbits),
      thread_siblings_list: list(c.siblings),
    };
    // powerpc defines neither TOPOLOGY_DIE_SYSFS nor TOPOLOGY_CLUSTER_SYSFS: no die_* or cluster_*.
    for (const [k, v] of Object.entries(topo)) {
      if (ppc && /^(die|cluster)_/.test(k)) continue;
      put(`${t}/${k}`, `${v}\n`);
    }
    c.caches.forEach((ca, i) => {
      const x = `${d}/cache/index${i}`;
      put(`${x}/level`, `${ca.level}\n`);
      put(`${x}/type`, `${ca.type}\n`);
      put(`${x}/shared_cpu_list`, `${list(ca.shared)}\n`);
      put(`${x}/shared_cpu_map`, `${mask(ca.shared, nbits)}\n`);
      if (ca.id !== undefined) put(`${x}/id`, `${ca.id}\n`);
    });
  }
  const N = 'sys/devices/system/node';
  const nodeIds = m.nodes.map((n) => n.id);
  const withCpu = nodeIds.filter((n) => m.cpus.some((c) => c.node === n));
  const withMem = m.nodes.filter((n) => n.memKb > 0).map((n) => n.id);
  put(`${N}/online`, `${list(nodeIds)}\n`);
  put(`${N}/possible`, `${list(nodeIds)}\n`);
  put(`${N}/has_cpu`, `${list(withCpu)}\n`);
  put(`${N}/has_memory`, `${list(withMem)}\n`);
  put(`${N}/has_normal_memory`, `${list(withMem)}\n`);
  m.nodes.forEach((n, i) => {
    const cpus = [
      ...m.cpus.filter((c) => c.node === n.id).map((c) => c.id),
      ...(m.nodeExtraCpus?.[n.id] ?? []),
    ];
    put(`${N}/node${n.id}/cpulist`, `${list(cpus)}\n`);
    put(`${N}/node${n.id}/cpumap`, `${mask(cpus, nbits)}\n`);
    put(`${N}/node${n.id}/meminfo`, meminfo(n.id, n.memKb, n.freeKb));
    put(`${N}/node${n.id}/distance`, `${m.distances[i].join(' ')}\n`);
  });
  for (const [p, v] of Object.entries(m.devices.files)) put(p, v);
  for (const [p, v] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const out = join(dir, p);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, v);
  }
  for (const [p, target] of Object.entries(m.devices.links).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const out = join(dir, p);
    mkdirSync(dirname(out), { recursive: true });
    symlinkSync(target, out);
  }
  writeFileSync(join(dir, 'lscpu.txt'), lscpu(m));
  writeFileSync(join(dir, 'SOURCE.md'), m.source);
}

/**
 * What util-linux 2.38 `lscpu -a -p=CPU,CORE,SOCKET,NODE,ONLINE` prints for this tree: Core and
 * Socket are logical ids numbered in order of first appearance when walking CPUs by id (matching
 * the qemu captures), not core_id / physical_package_id.
 */
function lscpu(m) {
  const coreIdx = new Map();
  const sockIdx = new Map();
  const rows = [...m.cpus]
    .sort((a, b) => a.id - b.id)
    .map((c) => {
      const ck = list(c.siblings);
      if (!coreIdx.has(ck)) coreIdx.set(ck, coreIdx.size);
      if (!sockIdx.has(c.pkg)) sockIdx.set(c.pkg, sockIdx.size);
      return `${c.id},${coreIdx.get(ck)},${sockIdx.get(c.pkg)},${c.node},Y\n`;
    });
  return (
    '# The following is the parsable format, which can be fed to other\n' +
    '# programs. Each different item in every column has an unique ID\n' +
    '# starting usually from zero.\n' +
    '# CPU,Core,Socket,Node,Online\n' +
    rows.join('')
  );
}

const range = (a, b) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

const COMMON_NOTES = `
## How it was made

Generated by \`scripts/gen-handmade-sysfs.mjs\` (\`node scripts/gen-handmade-sysfs.mjs\`), not captured.
The file set and formatting follow Debian 12's 6.1 kernel exactly as captured from qemu guests
(see \`../qemu-2s-smt2\`): list files like \`0-3,8-11\\n\`, masks as 32-bit hex words sized to
nr_cpu_ids (the highest possible CPU + 1), no \`online\` file for cpu0, \`isolated\` an empty line,
node \`meminfo\` in the 6.1 layout, and devices as relative symlinks (\`sys/class/net/<nic>\`,
\`.../device\`) into \`sys/devices/pci*/...\` with \`numa_node\` on the PCI function (the NVMe
controller has its own too) and \`proc_name\` on the SCSI host. What is modelled on the real machine: CPU numbering, sibling
sets, packages, nodes, cache sharing, node distances, device placement. PCI addresses are typical
for the platform, not copied from the machine. Numeric labels that the
kernel derives from APIC ids (\`core_id\`, \`cluster_id\`, cache \`id\`) follow the kernel's rules
applied to the APIC ids assumed below; they are plausible, not copied from a dump of the machine.
Memory sizes are the machine's; the used/free split in meminfo is invented.

\`lscpu.txt\` is written by the generator, following what util-linux 2.38
\`lscpu -a -p=CPU,CORE,SOCKET,NODE,ONLINE\` prints: Core and Socket are logical ids assigned in
order of first appearance walking CPUs by id (as in the qemu captures), so they are not
\`core_id\` or \`physical_package_id\`.
`;

/**
 * A 2-socket Intel machine as Linux numbers it: the first thread of every core, socket by socket,
 * then the second threads (cpu N and N + half are siblings); one node per socket. `coreIds` are the
 * enabled cores' core_id on each socket; APIC id = apicPerSocket × socket + 2 × core_id + thread.
 * L1/L2 per core (id = APIC id >> 1, also the cluster_id), L3 per socket (id = socket).
 */
function intelSplitHt(coreIds, apicPerSocket) {
  const perSocket = coreIds.length;
  const half = 2 * perSocket;
  return range(0, 2 * half - 1).map((id) => {
    const t = id >= half ? 1 : 0;
    const k = id % half;
    const pkg = k >= perSocket ? 1 : 0;
    const ci = k % perSocket;
    const coreId = coreIds[ci];
    const first = pkg * perSocket + ci;
    const siblings = [first, first + half];
    const apic = pkg * apicPerSocket + coreId * 2 + t;
    const l2id = apic >> 1;
    const pkgCpus = [
      ...range(pkg * perSocket, pkg * perSocket + perSocket - 1),
      ...range(pkg * perSocket + half, pkg * perSocket + half + perSocket - 1),
    ];
    return {
      id,
      pkg,
      coreId,
      node: pkg,
      siblings,
      clusterId: l2id,
      clusterCpus: siblings,
      caches: [
        { level: 1, type: 'Data', shared: siblings, id: l2id },
        { level: 1, type: 'Instruction', shared: siblings, id: l2id },
        { level: 2, type: 'Unified', shared: siblings, id: l2id },
        { level: 3, type: 'Unified', shared: pkgCpus, id: pkg },
      ],
    };
  });
}

// ---------- (a) Intel 2-socket, HT siblings N and N+8 ----------
{
  // Xeon E5-2623 v4: 4 of the 10 cores of the LCC die are enabled, so core_id has gaps.
  const cpus = intelSplitHt([0, 3, 8, 11], 32);
  writeMachine({
    name: 'intel-2s-ht-split',
    cpus,
    possible: range(0, 15),
    nodes: [
      { id: 0, memKb: 65_700_488, freeKb: 58_113_020 },
      { id: 1, memKb: 66_057_720, freeKb: 61_480_112 },
    ],
    distances: [
      [10, 21],
      [21, 10],
    ],
    devices: devices(
      pciNic('eno1', 'pci0000:00/0000:00:02.0/0000:01:00.0', 0),
      pciNic('eno2', 'pci0000:00/0000:00:02.0/0000:01:00.1', 0),
      pciNic('ens2f0', 'pci0000:80/0000:80:02.0/0000:82:00.0', 1),
      pciNic('ens2f1', 'pci0000:80/0000:80:02.0/0000:82:00.1', 1),
      nvme('nvme0n1', 'nvme0', 'pci0000:80/0000:80:03.0/0000:83:00.0', 1),
      scsiHost('host0', 'pci0000:00/0000:00:01.0/0000:02:00.0', '', 'megaraid_sas', 0),
    ),
    source: `# intel-2s-ht-split (hand-made)

Imitates a **Dell PowerEdge R630 with two Intel Xeon E5-2623 v4** (Broadwell-EP, 4 cores / 8 threads
and 10 MB L3 per socket, 2 × 64 GiB RAM) running Debian 12 (kernel 6.1).

- 16 CPUs. As on most Intel servers, Linux numbers the first thread of every core first, socket by
  socket, then the second threads: cpu N and N+8 are siblings. Socket 0 / node 0 = cpus 0-3,8-11,
  socket 1 / node 1 = cpus 4-7,12-15.
- \`core_id\` is 0, 3, 8, 11 on each socket: a 4-core part cut from the 10-core die keeps the ids of
  the enabled cores, so ids have gaps and repeat across sockets.
- Assumed APIC id = 32 × socket + 2 × core_id + thread. L1/L2 are per core (shared by the two
  siblings, id = APIC id >> 1, also the \`cluster_id\`); L3 per socket (id = socket).
- Node distances 10/21 (typical 2-socket SLIT).
- Devices: onboard NICs \`eno1\`, \`eno2\` on node 0; a dual-port Intel X520 (\`ens2f0\`, \`ens2f1\`) and an
  NVMe SSD in the riser served by CPU 2, node 1; the PERC H730 Mini RAID controller appears as
  \`scsi_host/host0\` with \`proc_name\` \`megaraid_sas\`. Its disk \`sda\` is not in the tree because
  \`sys/class/block/sda/device\` (a SCSI device) has no \`numa_node\`; neither does
  \`scsi_host/host0/device\`.
${COMMON_NOTES}`,
  });
}

// ---------- (b) Intel hybrid (Alder Lake P) ----------
{
  const cpus = [];
  for (let id = 0; id < 8; id++) {
    // P-cores: SMT siblings adjacent; assumed APIC ids 0,1 / 8,9 / 16,17 / 24,25.
    const c = id >> 1;
    const siblings = [c * 2, c * 2 + 1];
    const apic = c * 8 + (id & 1);
    cpus.push({
      id,
      pkg: 0,
      coreId: apic >> 1,
      node: 0,
      siblings,
      clusterId: apic >> 1,
      clusterCpus: siblings,
      caches: [
        { level: 1, type: 'Data', shared: siblings, id: apic >> 1 },
        { level: 1, type: 'Instruction', shared: siblings, id: apic >> 1 },
        { level: 2, type: 'Unified', shared: siblings, id: apic >> 1 },
        { level: 3, type: 'Unified', shared: range(0, 15), id: 0 },
      ],
    });
  }
  for (let id = 8; id < 16; id++) {
    // E-cores: no SMT, assumed APIC ids 32, 34, ... 46; four E-cores share one L2 (a "cluster").
    const e = id - 8;
    const apic = 32 + e * 2;
    const cluster = e < 4 ? range(8, 11) : range(12, 15);
    const l2id = (32 + (e & ~3) * 2) >> 1;
    cpus.push({
      id,
      pkg: 0,
      coreId: apic >> 1,
      node: 0,
      siblings: [id],
      clusterId: l2id,
      clusterCpus: cluster,
      caches: [
        { level: 1, type: 'Data', shared: [id], id: apic },
        { level: 1, type: 'Instruction', shared: [id], id: apic },
        { level: 2, type: 'Unified', shared: cluster, id: l2id },
        { level: 3, type: 'Unified', shared: range(0, 15), id: 0 },
      ],
    });
  }
  writeMachine({
    name: 'intel-hybrid',
    cpus,
    possible: range(0, 15),
    nodes: [{ id: 0, memKb: 16_073_508, freeKb: 11_294_176 }],
    distances: [[10]],
    devices: devices(
      { links: {}, files: { 'sys/devices/cpu_core/cpus': '0-7\n', 'sys/devices/cpu_atom/cpus': '8-15\n' } },
      // Laptop firmware has no SRAT/_PXM, so PCI devices report no node.
      pciNic('wlp166s0', 'pci0000:00/0000:00:1c.0/0000:a6:00.0', -1),
      nvme('nvme0n1', 'nvme0', 'pci0000:00/0000:00:06.0/0000:01:00.0', -1),
    ),
    source: `# intel-hybrid (hand-made)

Imitates a **Framework Laptop (12th Gen) with an Intel Core i5-1240P** (Alder Lake-P: 4 P-cores with
Hyper-Threading + 8 E-cores without, 12 MB L3, 16 GiB RAM) running Debian 12 (kernel 6.1).

- 16 CPUs, one package, one NUMA node. P-core threads come first with siblings adjacent: cpus 0-1,
  2-3, 4-5, 6-7. E-cores are cpus 8-15, one CPU per core.
- \`sys/devices/cpu_core/cpus\` = \`0-7\` and \`sys/devices/cpu_atom/cpus\` = \`8-15\` (the hybrid PMU
  devices; the usual way to tell P from E cores).
- Assumed APIC ids: P-cores 0,1 / 8,9 / 16,17 / 24,25; E-cores 32, 34, ..., 46. So \`core_id\` is
  0, 4, 8, 12 for P-cores and 16-23 for E-cores.
- Caches: P-core L1/L2 shared by the two siblings; E-core L1 private; each group of four E-cores
  (8-11, 12-15) shares one L2, which is also what \`cluster_cpus\` reports; L3 shared by all 16 CPUs.
- Devices: Wi-Fi \`wlp166s0\` and an NVMe SSD, both \`numa_node\` -1 (no NUMA information in
  laptop firmware).
${COMMON_NOTES}`,
  });
}

// ---------- (c) AMD EPYC, 2 NUMA nodes per socket, 2 L3 groups per node ----------
{
  const cpus = range(0, 31).map((id) => {
    const t = id >= 16 ? 1 : 0;
    const k = id % 16; // core index 0-15
    const ccx = k >> 2;
    const node = ccx >> 1;
    const siblings = [k, k + 16];
    const apic = ccx * 8 + (k & 3) * 2 + t;
    const l3 = [...range(ccx * 4, ccx * 4 + 3), ...range(ccx * 4 + 16, ccx * 4 + 19)];
    return {
      id,
      pkg: 0,
      coreId: apic >> 1,
      node,
      siblings,
      // 6.1 sets no L2 id on AMD, so cluster_id is BAD_APICID and the cluster falls back to SMT siblings.
      clusterId: 65535,
      clusterCpus: siblings,
      caches: [
        { level: 1, type: 'Data', shared: siblings, id: apic >> 1 },
        { level: 1, type: 'Instruction', shared: siblings, id: apic >> 1 },
        { level: 2, type: 'Unified', shared: siblings, id: apic >> 1 },
        { level: 3, type: 'Unified', shared: l3, id: ccx },
      ],
    };
  });
  writeMachine({
    name: 'amd-epyc-l3',
    cpus,
    // The board's MADT lists 64 CPU entries, so 32-63 are possible but not present.
    possible: range(0, 63),
    nodes: [
      { id: 0, memKb: 65_574_232, freeKb: 60_118_764 },
      { id: 1, memKb: 66_044_988, freeKb: 63_002_540 },
    ],
    distances: [
      [10, 12],
      [12, 10],
    ],
    devices: devices(
      pciNic('eno1', 'pci0000:20/0000:20:03.1/0000:23:00.0', 0),
      pciNic('eno2', 'pci0000:20/0000:20:03.1/0000:23:00.1', 0),
      pciNic('enp65s0f0np0', 'pci0000:40/0000:40:01.1/0000:41:00.0', 1),
      pciNic('enp65s0f1np1', 'pci0000:40/0000:40:01.1/0000:41:00.1', 1),
      nvme('nvme0n1', 'nvme0', 'pci0000:00/0000:00:01.1/0000:01:00.0', 0),
      nvme('nvme1n1', 'nvme1', 'pci0000:60/0000:60:03.1/0000:63:00.0', 1),
      scsiHost('host0', 'pci0000:20/0000:20:08.1/0000:24:00.2', 'ata1', 'ahci', 0),
      scsiHost('host1', 'pci0000:20/0000:20:08.1/0000:24:00.3', 'ata2', 'ahci', 0),
    ),
    source: `# amd-epyc-l3 (hand-made)

Imitates a **Supermicro H11SSL-i with one AMD EPYC 7282** (Zen 2 "Rome": 16 cores / 32 threads in four
CCXs of 4 cores, each CCX with its own 16 MB L3; 128 GiB RAM) with the BIOS set to NPS2 (two NUMA
nodes per socket), running Debian 12 (kernel 6.1).

- 32 CPUs, one package. As on AMD servers, first threads of all cores come first: cpu N and N+16
  are siblings.
- Node 0 = cores 0-7 = cpus 0-7,16-23; node 1 = cores 8-15 = cpus 8-15,24-31. Distances 10/12.
- L3 groups (CCX), \`cache/index3/shared_cpu_list\`: 0-3,16-19 / 4-7,20-23 (node 0) and
  8-11,24-27 / 12-15,28-31 (node 1), L3 \`id\` 0-3. L1/L2 per core.
- \`possible\` is 0-63 while only 0-31 are present (the MADT lists more CPU entries than the part has,
  common on EPYC boards): \`offline\` reads 32-63, and every mask is two 32-bit words wide
  (\`00000000,00ff00ff\`). lscpu lists present CPUs only.
- 6.1 has no L2 id on AMD, so \`cluster_id\` is 65535 and \`cluster_cpus\` falls back to the SMT
  siblings (the kernel's \`match_l2c\` fallback).
- Assumed APIC id = 8 × CCX + 2 × core-in-CCX + thread, so \`core_id\` is 0-15.
- Devices: onboard Intel i350 (\`eno1\`, \`eno2\`) on node 0; a Mellanox ConnectX-4 Lx
  (\`enp65s0f0np0\`, \`enp65s0f1np1\`) in a slot wired to node 1; NVMe SSDs on node 0 and 1; the
  chipset SATA (ahci) hosts \`host0\`, \`host1\` (their \`device\` has no \`numa_node\`; the SATA
  PCI function has). Root complexes pci0000:00 and pci0000:20 belong to node 0, pci0000:40 and
  pci0000:60 to node 1.
${COMMON_NOTES}`,
  });
}

// ---------- (d) IBM POWER9, 2 sockets, SMT4, node cpulists naming possible-but-not-present CPUs ----------
{
  // Enabled cores of each 24-core die (16 per chip); the kernel numbers CPUs in device-tree order
  // (by PIR), so chip 0's cores are cpus 0-63 and chip 8's are 64-127, four adjacent threads each.
  const chips = [
    { chip: 0, cores: [0, 1, 2, 3, 4, 5, 8, 9, 12, 13, 14, 15, 16, 17, 20, 21] },
    { chip: 8, cores: [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 22, 23] },
  ];
  const cpus = [];
  for (const { chip, cores } of chips) {
    for (const core of cores) {
      const first = cpus.length;
      const siblings = range(first, first + 3);
      // POWER9 PIR = chip << 8 | core << 2 | thread; core_id is the PIR of the core's thread 0.
      const coreId = (chip << 8) | (core << 2);
      for (const id of siblings) {
        cpus.push({
          id,
          pkg: chip,
          coreId,
          node: chip,
          siblings,
          clusterCpus: siblings,
          // powerpc's cacheinfo has no `id` file; L1/L2/L3 as the device tree gives them, per core.
          caches: [
            { level: 1, type: 'Data', shared: siblings },
            { level: 1, type: 'Instruction', shared: siblings },
            { level: 2, type: 'Unified', shared: siblings },
            { level: 3, type: 'Unified', shared: siblings },
          ],
        });
      }
    }
  }
  writeMachine({
    name: 'power9-2s-smt4',
    arch: 'ppc64',
    kernelMax: 2047,
    cpus,
    possible: range(0, 159),
    nodeExtraCpus: { 0: range(128, 159) },
    nodes: [
      { id: 0, memKb: 267_911_808, freeKb: 259_871_360 },
      { id: 8, memKb: 268_386_752, freeKb: 264_310_592 },
    ],
    distances: [
      [10, 40],
      [40, 10],
    ],
    devices: devices(
      pciNic('enP5p1s0f0', 'pci0005:00/0005:00:00.0/0005:01:00.0', 0),
      pciNic('enP5p1s0f1', 'pci0005:00/0005:00:00.0/0005:01:00.1', 0),
      pciNic('enP48p1s0f0', 'pci0030:00/0030:00:00.0/0030:01:00.0', 8),
      pciNic('enP48p1s0f1', 'pci0030:00/0030:00:00.0/0030:01:00.1', 8),
      nvme('nvme0n1', 'nvme0', 'pci0033:00/0033:00:00.0/0033:01:00.0', 8),
      scsiHost('host0', 'pci0004:00/0004:00:00.0/0004:01:00.0', 'ata1', 'ahci', 0),
    ),
    source: `# power9-2s-smt4 (hand-made)

Imitates an **IBM Power System AC922 (8335-GTH) with two 16-core POWER9 chips** (SMT4: 4 threads per
core, 32 cores / 128 threads, 2 × 256 GiB RAM), bare metal (OPAL firmware), running Debian 12's
ppc64el 6.1 kernel. The NVLink GPUs and their memory-only NUMA nodes (252-255, which appear only once
the NVIDIA driver onlines GPU memory) are left out.

- 128 present CPUs, 0-127. POWER numbers a core's threads next to each other: cpus 4k..4k+3 are one
  core. Chip 0 holds cpus 0-63, chip 8 holds cpus 64-127.
- \`physical_package_id\` is the chip id, **0 and 8** (POWER9's chip ids on a 2-socket board), and the
  NUMA nodes are **0 and 8** as well: ids are labels, not indexes. Distance 10 / 40.
- \`core_id\` is the PIR of the core's first thread (chip << 8 | core << 2): 16 of each die's 24 cores
  are enabled, so ids are sparse (0, 4, 8, 12, 16, 20, 32, ... on chip 0; 2056, 2060, ... on chip 8).
  The enabled core numbers are assumed, not copied from a machine.
- **\`possible\` is 0-159 while \`present\` is 0-127**: cpus 128-159 are possible but not present
  (no \`cpuN\` directory, listed in \`offline\`), and **node 0's \`cpulist\` and \`cpumap\` name them
  too** (\`0-63,128-159\`). On POWER, node cpulists include possible CPUs that are not present: a CPU
  with no device-tree node has no NUMA information and lands on the first online node. lscpu lists
  present CPUs only. The topology reader must ignore such CPUs, not call the tree contradictory.
- \`kernel_max\` is 2047 (NR_CPUS 2048). Every mask is five 32-bit words (nr_cpu_ids 160).
- Devices (names and PCI domains typical for the platform, not copied): onboard Broadcom BCM5719
  ports \`enP5p1s0f0\`, \`enP5p1s0f1\` on chip 0's PHB domain 0005 (node 0); a Mellanox ConnectX-5
  (\`enP48p1s0f0\`, \`enP48p1s0f1\`) and an NVMe SSD on chip 8's PHBs (domains 0030, 0033, node 8);
  the Marvell SATA controller (ahci) \`host0\` on node 0.

## How it was made

Generated by \`scripts/gen-handmade-sysfs.mjs\` (\`node scripts/gen-handmade-sysfs.mjs\`), not captured
from the machine. Formatting follows the kernel as in the other trees here (list files like
\`0-63,128-159\\n\`, masks as 32-bit hex words sized to nr_cpu_ids, \`isolated\` an empty line, node
\`meminfo\` in the 6.1 layout, devices as relative symlinks into \`sys/devices/pci*/...\` with
\`numa_node\` on the PCI function), with what powerpc does differently:

- \`topology/\` has \`core_cpus*\`, \`core_id\`, \`core_siblings*\`, \`package_cpus*\`,
  \`physical_package_id\` and \`thread_siblings*\`, but no \`die_*\` or \`cluster_*\` files (powerpc
  enables neither in 6.1);
- every CPU has an \`online\` file, cpu0 included (POWER can take the boot CPU offline);
- \`cache/index0-3\` (L1d, L1i, L2, L3, each shared by a core's four threads, as the device tree
  describes them) have no \`id\` file.

What is modelled on the real machine: CPU numbering, sibling sets, chip and node ids, node distances,
memory sizes. Assumed: which cores are enabled, PCI addresses, the used/free split in meminfo, and the
possible-but-not-present range (the shape this tree exists to test).

\`lscpu.txt\` is written by the generator, following what util-linux 2.38
\`lscpu -a -p=CPU,CORE,SOCKET,NODE,ONLINE\` prints: Core and Socket are logical ids assigned in
order of first appearance walking present CPUs by id, so Socket is 0 and 1 where
\`physical_package_id\` is 0 and 8; Node is the node's own id (0 and 8).
`,
  });
}

// ---------- (e) Intel 2-socket, 96 CPUs, a 48-queue NIC and the NVMe on node 1 ----------
{
  // Xeon Gold 6342: 24 cores per socket; first threads 0-47 socket by socket, second threads 48-95.
  const cpus = intelSplitHt(range(0, 23), 128);
  writeMachine({
    name: 'intel-2s-96cpu',
    cpus,
    possible: range(0, 95),
    nodes: [
      { id: 0, memKb: 263_842_704, freeKb: 251_310_588 },
      { id: 1, memKb: 264_223_440, freeKb: 257_118_204 },
    ],
    distances: [
      [10, 20],
      [20, 10],
    ],
    devices: devices(
      pciNic('eno8303', 'pci0000:00/0000:00:1c.5/0000:04:00.0', 0),
      pciNic('ens3f0', 'pci0000:ca/0000:ca:02.0/0000:cb:00.0', 1),
      nvme('nvme0n1', 'nvme0', 'pci0000:e2/0000:e2:01.0/0000:e3:00.0', 1),
      scsiHost('host0', 'pci0000:00/0000:00:17.0', 'ata1', 'ahci', 0),
    ),
    source: `# intel-2s-96cpu (hand-made)

Imitates a **Dell PowerEdge R750 with two Intel Xeon Gold 6342** (Ice Lake-SP, 24 cores / 48 threads
and 36 MB L3 per socket, 2 × 256 GiB RAM) running Debian 12 (kernel 6.1): the 96-CPU Kafka host of
issue 63, with its 48-queue NIC and its NVMe on node 1.

- 96 CPUs. Linux numbers the first thread of every core first, socket by socket, then the second
  threads: cpu N and N+48 are siblings. Socket 0 / node 0 = cpus 0-23,48-71, socket 1 / node 1 =
  cpus 24-47,72-95.
- \`core_id\` is 0-23 on each socket (assumed dense). Assumed APIC id = 128 × socket + 2 × core_id +
  thread. L1/L2 per core (id = APIC id >> 1, also the \`cluster_id\`); L3 per socket (id = socket).
- Node distances 10/20.
- Devices: the onboard Broadcom \`eno8303\` on node 0; an Intel E810 (\`ice\`, \`ens3f0\`; its second port is
  left out) and an NVMe SSD on node 1's root ports; the chipset's SATA (ahci) \`host0\` on node 0.
  \`ens3f0\` has 48 combined queues (49 MSI-X vectors with the misc one): the IRQ overlay of the
  same name (\`../../irq/intel-2s-96cpu\`) holds them.
${COMMON_NOTES}`,
  });
}
