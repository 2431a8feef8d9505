/**
 * Regenerates the qemu-made fixture trees under test/fixtures/sysfs/. Not a test: it only runs with
 * CAPTURE_SYSFS=1 (six boots, several minutes), e.g.
 *   CAPTURE_SYSFS=1 npx vitest run --project vm test/vm/capture-sysfs
 *   CAPTURE_SYSFS=1 CAPTURE_ONLY=qemu-smt4 npx vitest run --project vm test/vm/capture-sysfs
 */
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CAPTURE_FUNCTIONS, decodeCapture, writeTree } from './capture/sysfs.js';
import { ensureVmPrereqs, LAYOUTS, runInVm, type VmLayout } from './harness/index.js';
import { REPO_ROOT } from './harness/paths.js';

// CAPTURE_OUT writes elsewhere, e.g. to diff a fresh capture against the committed trees.
const FIXTURES = process.env.CAPTURE_OUT ?? join(REPO_ROOT, 'test/fixtures/sysfs');

interface Capture {
  name: string;
  layout: VmLayout;
  description: string;
  /** Guest commands run before capturing (after the harness mounts /proc, /sys, /dev, cgroup2). */
  setup?: string;
  /** Devices; `$TMP` is replaced by a scratch directory for disk images. */
  devices?: string[];
  modules?: string[];
}

const VIRTIO = ['virtio_pci', 'virtio_net', 'virtio_blk', 'virtio_scsi', 'sd_mod'];

const CAPTURES: Capture[] = [
  {
    name: 'qemu-2s-smt2',
    layout: LAYOUTS.twoSocketSmt2,
    description:
      '2 sockets x 2 cores x SMT2 (siblings adjacent), one NUMA node per socket. A virtio-net NIC and ' +
      'an NVMe disk sit behind a pxb expander bus with numa_node=1; a virtio-blk disk and a virtio-scsi ' +
      'HBA (one disk) sit on the root bus (numa_node -1).\n\n' +
      'There is no `sys/class/net/eth0/device/numa_node`: for a virtio NIC, `device` is the virtio ' +
      'device, which has no numa_node; the PCI function above it has (1 here, see the links below). ' +
      'Likewise `vda/device` (virtio) and `sda/device` (a SCSI device) have none. ' +
      '`sys/class/block/nvme0n1/device` is the NVMe controller, which does have one.',
    devices: [
      '-device',
      'pxb,id=pxb1,bus_nr=4,numa_node=1,bus=pci.0',
      '-netdev',
      'user,id=n0',
      '-device',
      'virtio-net-pci,netdev=n0,bus=pxb1,addr=0x4',
      '-drive',
      'if=none,id=d0,file=$TMP/nvme.img,format=raw',
      '-device',
      'nvme,drive=d0,serial=isolate0,bus=pxb1,addr=0x5',
      '-drive',
      'if=none,id=d1,file=$TMP/vda.img,format=raw',
      '-device',
      'virtio-blk-pci,drive=d1,bus=pci.0',
      '-device',
      'virtio-scsi-pci,id=scsi0,bus=pci.0',
      '-drive',
      'if=none,id=d2,file=$TMP/sda.img,format=raw',
      '-device',
      'scsi-hd,drive=d2,bus=scsi0.0',
    ],
    modules: VIRTIO,
    // SCSI scanning is asynchronous; capture only once the disk has shown up.
    setup:
      'for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do [ -e /sys/class/block/sda ] && break; sleep 1; done',
  },
  {
    name: 'qemu-1s-4nodes',
    layout: LAYOUTS.oneSocket4Nodes,
    description:
      'One socket, 4 cores x SMT2, split into 4 NUMA nodes of one core each (sub-NUMA clustering).',
  },
  {
    name: 'qemu-nosmt',
    layout: LAYOUTS.noSmt,
    description: '2 sockets x 2 cores, threads=1 (no SMT), one NUMA node per socket.',
  },
  {
    name: 'qemu-smt4',
    layout: LAYOUTS.smt4,
    description: 'One socket, 2 cores x 4 threads (SMT4), one NUMA node.',
  },
  {
    name: 'qemu-memoryless-node',
    layout: LAYOUTS.memorylessNode,
    description:
      '2 sockets x 2 cores x SMT2; node 0 has CPUs 0-3 and all memory, node 1 has CPUs 4-7 and no memory.',
  },
  {
    name: 'qemu-possible-not-present',
    layout: { ...LAYOUTS.twoSocketSmt2, smp: '4,maxcpus=8,sockets=2,cores=2,threads=2' },
    description:
      'Like qemu-2s-smt2 but only 4 of 8 possible CPUs are present (`-smp 4,maxcpus=8`): CPUs 4-7 ' +
      '(all of socket 1) are possible but not present, so they appear in `offline`, and node 1 has ' +
      'memory but no CPUs.',
  },
  {
    name: 'qemu-offline-cpus',
    layout: LAYOUTS.twoSocketSmt2,
    description:
      '2 sockets x 2 cores x SMT2 like qemu-2s-smt2, then CPU 5 (a lone sibling: core 4-5 keeps CPU 4) ' +
      'and both siblings of core 2-3 are taken offline before capturing.',
    setup: [
      'echo 0 > /sys/devices/system/cpu/cpu5/online',
      'echo 0 > /sys/devices/system/cpu/cpu2/online',
      'echo 0 > /sys/devices/system/cpu/cpu3/online',
    ].join('\n'),
  },
];

const enabled = process.env.CAPTURE_SYSFS === '1';
const only = process.env.CAPTURE_ONLY?.split(',');

describe.runIf(enabled)('capture sysfs fixtures from qemu guests', () => {
  for (const c of CAPTURES) {
    it.runIf(!only || only.includes(c.name))(c.name, async () => {
      const pre = ensureVmPrereqs();
      const tmp = mkdtempSync(join(tmpdir(), 'isolate-capture-'));
      try {
        const devices = (c.devices ?? []).map((a) => a.replaceAll('$TMP', tmp));
        // Sparse 64 MiB images: the guest only needs the block devices to exist.
        for (const img of ['nvme.img', 'vda.img', 'sda.img']) {
          writeFileSync(join(tmp, img), Buffer.alloc(0));
          truncateSync(join(tmp, img), 64 << 20);
        }
        const script = `${CAPTURE_FUNCTIONS}\nset -e\n${c.setup ?? ''}\nset +e\ncapture\n`;
        const r = await runInVm({
          layout: c.layout,
          script,
          extraQemuArgs: devices,
          kernelModules: c.modules,
          timeoutMs: 600_000,
        });
        expect(r.exitStatus, r.console.slice(-3000)).toBe(0);
        const tree = decodeCapture(r.sections.files ?? '');
        expect(tree.files.size).toBeGreaterThan(20);
        const dir = join(FIXTURES, c.name);
        mkdirSync(dir, { recursive: true });
        writeTree(dir, tree);
        const qemuCmd = ['qemu-system-x86_64', ...r.qemuArgs]
          .map((a) => (a === r.qemuArgs[r.qemuArgs.indexOf('-initrd') + 1] ? '<initramfs>' : a))
          .map((a) => a.replaceAll(tmp, '$TMP').replace(/^\/.*\/vmlinuz-/, 'vmlinuz-'))
          .map((a) => (/^[\w,=.:/$<>+-]+$/.test(a) ? a : `'${a}'`))
          .join(' ');
        writeFileSync(
          join(dir, 'SOURCE.md'),
          sourceMd(
            c,
            pre.kernel.source,
            (r.sections.uname ?? '').trim(),
            qemuCmd,
            r.sections.links ?? '',
            tree.unreadable,
            r.sections['lscpu-stderr'] ?? '',
          ),
        );
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
    });
  }
});

function sourceMd(
  c: Capture,
  pkg: string,
  uname: string,
  qemuCmd: string,
  links: string,
  unreadable: string[],
  lscpuErr: string,
): string {
  const lines = [
    `# ${c.name}`,
    '',
    `${c.description}`,
    '',
    'Captured from a real Linux kernel in a qemu guest (TCG) by `test/vm/capture-sysfs.test.ts`',
    '(`CAPTURE_SYSFS=1 CAPTURE_ONLY=' + c.name + ' npx vitest run --project vm test/vm/capture-sysfs`).',
    "Every file holds the kernel's exact bytes. `lscpu.txt` is the raw output of",
    '`lscpu -a -p=CPU,CORE,SOCKET,NODE,ONLINE` (util-linux 2.38.1 from Debian 12) run in the same guest, after the',
    'guest commands below: it is the expected answer for the topology reader.',
    '',
    `- Kernel: \`${uname}\` (Debian package ${pkg})`,
    '',
    '## qemu command',
    '',
    '```sh',
    qemuCmd,
    '```',
    '',
    '`<initramfs>` is busybox-static, lscpu and the harness /init (test/vm/harness/initramfs.ts);',
    '`$TMP/*.img` are empty sparse 64 MiB raw images.',
    '',
    '## Guest commands',
    '',
    'After /init mounts proc, sysfs, devtmpfs and cgroup2' +
      (c.modules?.length ? ` and insmods ${c.modules.join(', ')} (with their dependencies)` : '') +
      ':',
    '',
    '```sh',
    ...(c.setup ? [c.setup] : []),
    'lscpu -a -p=CPU,CORE,SOCKET,NODE,ONLINE > lscpu.txt',
    '# then every captured file is printed base64-encoded on the serial console and rebuilt on the host',
    '```',
    '',
  ];
  if (links.trim()) {
    lines.push(
      '## Device links in the guest',
      '',
      "The `sys/class/*` device entries and their `device` links are stored as the guest's own",
      "(relative) symlinks into `sys/devices/...`, where each device's `numa_node` (if it has one), the",
      "nearest ancestor's `numa_node` (normally the PCI function) and `proc_name` are kept. The links were:",
      '',
      '```',
      links.trimEnd(),
      '```',
      '',
    );
  }
  if (unreadable.length)
    lines.push('## Files that existed but could not be read', '', ...unreadable.map((u) => `- \`${u}\``), '');
  if (lscpuErr.trim()) lines.push('## lscpu stderr', '', '```', lscpuErr.trimEnd(), '```', '');
  return `${lines.join('\n')}\n`;
}
