// The guest of the Kafka's-disks scenarios (issue 51): real systemd 252 on noSmt (4 CPUs, 2 nodes) and
// an HDD that qemu throttles (150 IOPS, 40 MiB/s: a 7200 rpm drive's random-I/O budget), a virtio disk
// backed by a sparse file in a temporary directory of this host, formatted ext4 in the guest and
// mounted at /data1. Kafka's log dir and a YARN job's local dir share it, as on the hosts the issue
// follows. The system needs no disk of its own: its root is the initramfs, journald's journal is in /run.
//
// kafka.service runs support/diskload.c's appender (4 KiB appends every 2 ms, an fsync of the active
// segment every 50 ms, reads of the last MiB every 10 ms) and yarn-batch.service, in batch.slice, its
// batch writer (4 threads of random 4 KiB O_DIRECT writes). Each measures every operation's latency;
// the shell function `window NAME UNIT...` takes one measurement window of all of them.
import { closeSync, ftruncateSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { stringify } from 'yaml';
import { ensureVmPrereqs, LAYOUTS } from '../harness/index.js';
import { moduleFiles } from '../harness/initramfs.js';
import { LIB, staticCBinary } from './guest.js';
import { type Scenario, vmScenario } from './scenario.js';
import type { SystemdVmResult } from '../harness/index.js';
import type { BuiltKernel } from '../harness/kernel-build.js';

const UNITS = '/etc/systemd/system';
/**
 * Seconds of one measurement window: short for CI, which asserts only that each arm ran (both sides made
 * progress), never its latencies (8 s: five arms of 15 s were a minute of CI, issue 59);
 * ISOLATE_IOVM_WINDOW_S=60 (or more) for the numbers in docs/performance.md.
 */
export const WINDOW_S = Number(process.env.ISOLATE_IOVM_WINDOW_S ?? 8);
// A 7200 rpm drive: ~150 random IOPS; its sequential rate is more, but Kafka's and the batch's mixed
// small I/O never reaches it.
export const IOPS = 150;
export const BPS = 40 * 1024 * 1024;
export const DISK_BYTES = 2 * 1024 * 1024 * 1024;
export const LOG_DIR = '/data1/kafka-logs';
/**
 * The disk's scheduler in every arm. BFQ by default: of this kernel's schedulers it is the one whose
 * weights act per cgroup without iocost (and the Debian cloud kernel has no io.latency at all:
 * CONFIG_BLK_CGROUP_IOLATENCY is not set). ISOLATE_IOVM_SCHED=mq-deadline for a comparison run.
 */
export const SCHED = process.env.ISOLATE_IOVM_SCHED ?? 'bfq';
const STATS = '/var/lib/diskload';
/** A unit's io properties, as `systemctl show` names them (quiet-cores compares them too). */
export const IO_PROPS = [
  'IOAccounting',
  'IOWeight',
  'StartupIOWeight',
  'IODeviceWeight',
  'IODeviceLatencyTargetUSec',
  'IOReadBandwidthMax',
  'IOWriteBandwidthMax',
  'IOReadIOPSMax',
  'IOWriteIOPSMax',
];
/** The unit properties the scenarios read back (`dump`), io and CPU alike. */
export const PROPS = ['Id', 'Slice', 'ControlGroup', 'AllowedCPUs', 'AllowedMemoryNodes', ...IO_PROPS];
export const SHOWN_UNITS = ['kafka.service', 'yarn-batch.service', 'batch.slice', 'system.slice', '-.slice'];

/**
 * Everything before the arms: modules, what the kernel makes of the disk (section `disk`), rotational
 * and the scheduler set (`disk-set`), mkfs and mount, and the shell functions `window`, `iosnap`,
 * `props` and `dump PHASE` (sections PHASE-io, PHASE-props). Kafka and the batch job are not started.
 */
const setup = (modules: string) => String.raw`
${LIB}
BB=/usr/local/sbin/busybox
Q=/sys/block/vda/queue
W=${WINDOW_S}
sec modules
${modules.replace(/^insmod /gm, '$BB insmod ')}
for i in $(seq 100); do [ -b /dev/vda ] && break; sleep 0.1; done
ls -l /dev/vda
# udev's /dev/block/MAJ:MIN links (there is no udev in the guest): systemd resolves device paths
# in IODevice*= properties with stat(2), and isolate names disks to it by these stable paths.
mkdir -p /dev/block
for d in /sys/class/block/*; do ln -sf ../$(basename $d) /dev/block/$(cat $d/dev); done
ls -l /dev/block
endsec modules
DEVNO=$(cat /sys/block/vda/dev)

# What the kernel makes of the throttled virtio disk, before anything is changed.
sec disk
echo "dev=$(cat /sys/block/vda/dev)"
echo "sectors=$(cat /sys/block/vda/size)"
echo "rotational=$(cat $Q/rotational)"
echo "scheduler=$(cat $Q/scheduler)"
echo "nr_requests=$(cat $Q/nr_requests)"
echo "wbt_lat_usec=$(cat $Q/wbt_lat_usec 2>/dev/null)"
echo "serial=$(cat /sys/block/vda/serial 2>/dev/null)"
echo "root_io_files=$(cd /sys/fs/cgroup && ls -1d io.* 2>/dev/null | paste -sd' ')"
echo "controllers=$(cat /sys/fs/cgroup/cgroup.controllers)"
endsec disk
# An HDD: rotational (virtio-blk may say otherwise), and the scheduler under test.
[ "$(cat $Q/rotational)" = 1 ] || echo 1 > $Q/rotational
echo ${SCHED} > $Q/scheduler
sec disk-set
echo "rotational=$(cat $Q/rotational)"
echo "scheduler=$(cat $Q/scheduler)"
endsec disk-set

# Few inodes and no lazy init: mkfs takes seconds on a 150-IOPS disk, and no ext4lazyinit thread
# writes inode tables during the measurements.
run mkfs mkfs.ext4 -q -F -N 4096 -E nodiscard,lazy_itable_init=0,lazy_journal_init=1 /dev/vda
mkdir -p /data1
run mount mount -o noatime /dev/vda /data1
mkdir -p ${LOG_DIR}/topic-0 /data1/yarn/local ${STATS}
sec mountinfo; grep ' /data1 ' /proc/self/mountinfo; endsec mountinfo

seqof() { sed -n 's/^seq=//p' "$1" 2>/dev/null | grep . || echo 0; }
# mark UNIT...: close the open window of each (SIGUSR1 to the main process), wait for its stats file.
mark() {
  local u before t0
  for u in "$@"; do
    before=$(seqof ${STATS}/$u.stats)
    systemctl kill -s USR1 --kill-who=main $u.service
    t0=$(date +%s)
    while [ "$(seqof ${STATS}/$u.stats)" -le "$before" ] && [ $(( $(date +%s) - t0 )) -lt 60 ]; do sleep 0.1; done
  done
}
# window NAME UNIT...: one measurement window of W seconds; each unit's stats in section NAME-UNIT.
window() {
  local name=$1 u; shift
  mark "$@"
  sleep $W
  mark "$@"
  for u in "$@"; do sec "$name-$u"; cat ${STATS}/$u.stats; endsec "$name-$u"; done
  echo "timing window-$name $W s"
}
iosnap() {
  ( cd $CG && find . -type d | sort | while read d; do
      for f in cgroup.subtree_control io.weight io.bfq.weight io.max io.latency io.cost.qos io.cost.model; do
        [ -f "$d/$f" ] && echo "$d/$f=$(tr '\n' ';' < $d/$f)"
      done
    done )
  for f in scheduler rotational wbt_lat_usec nr_requests; do echo "queue/$f=$(cat $Q/$f 2>/dev/null)"; done
}
props() { systemctl show --all ${PROPS.map((p) => `-p ${p}`).join(' ')} -- ${SHOWN_UNITS.join(' ')}; }
dump() {
  sec "$1-io"; iosnap; endsec "$1-io"
  sec "$1-props"; props; endsec "$1-props"
}

`;

/** One window's stats file (`key=number` lines) as a lookup that throws on a key the file lacks. */
export type Window = (key: string) => number;

export function parseStats(text: string): Window {
  const o = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^(\w+)=([\d.]+)$/.exec(line.trim());
    if (m) o.set(m[1]!, Number(m[2]));
  }
  return (key) => {
    const v = o.get(key);
    if (v === undefined) throw new Error(`no ${key} in the stats:\n${text}`);
    return v;
  };
}

/**
 * Registers the boot of one throttled-disk guest (vmScenario) running `arms` after the setup, with
 * `files` (policies, ...) added; the disk's backing file is removed after the block's tests. `kernel`:
 * the built kernel to boot (kernel-build.ts) instead of Debian's cloud kernel.
 */
export function diskScenario(
  name: string,
  arms: string,
  files: Record<string, string> = {},
  kernel?: () => Promise<BuiltKernel>,
): Scenario<SystemdVmResult> {
  let dir = '';
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return vmScenario(
    name,
    async () => {
      const pre = ensureVmPrereqs();
      const built = kernel ? await kernel() : undefined;
      // A built kernel has the disk's drivers and BFQ built in.
      const mods = built ? { files: {}, script: '' } : moduleFiles(pre, ['virtio_pci', 'virtio_blk', 'bfq']);
      dir = mkdtempSync(join(tmpdir(), 'isolate-kafka-disks-'));
      const img = join(dir, 'data1.img');
      // Sparse: only what the guest writes takes space on this host.
      const fd = openSync(img, 'w');
      ftruncateSync(fd, DISK_BYTES);
      closeSync(fd);
      return {
        systemd: true as const,
        layout: LAYOUTS.noSmt,
        ...(built ? { kernel: built } : {}),
        script: `${setup(mods.script)}\n${arms}\nexit 0\n`,
        extraQemuArgs: [
          '-drive',
          `file=${img},if=none,id=data1,format=raw,cache=writeback,aio=threads,throttling.iops-total=${IOPS},throttling.bps-total=${BPS}`,
          // One request queue, as a SATA drive has.
          '-device',
          'virtio-blk-pci,drive=data1,serial=data1,num-queues=1',
        ],
        files: {
          ...mods.files,
          // insmod: the Debian minbase rootfs has no kmod.
          '/usr/local/sbin/busybox': readFileSync(pre.busybox),
          '/usr/local/bin/diskload': staticCBinary('diskload'),
          [`${UNITS}/kafka.service`]: `[Unit]
Description=Kafka broker stand-in: a log appender on /data1

[Service]
ExecStart=/usr/local/bin/diskload append ${LOG_DIR}/topic-0 ${STATS}/kafka.stats
`,
          [`${UNITS}/yarn-batch.service`]: `[Unit]
Description=A YARN job's local writes on Kafka's disk (checkpoints, shuffle spills)

[Service]
Slice=batch.slice
ExecStart=/usr/local/bin/diskload batch /data1/yarn/local/spill.dat ${STATS}/yarn-batch.stats
`,
          [`${UNITS}/batch.slice`]: '[Unit]\nDescription=Batch jobs\n',
          ...files,
        },
        timeoutMs: 900_000,
      };
    },
    1_900_000,
  );
}

export type DiskIo = 'off' | 'weights' | 'capped' | 'direct' | 'explicit';

/**
 * Kafka exclusive on one core with its log dir named; the YARN job's slice batch. `off`: CPU isolation
 * only (both io: settings off), to tell the cores' part from the disk's; `weights`: what `disks:` gives
 * by default (latency auto: 25 ms on this rotational disk where the kernel has io.latency; Kafka weight
 * 1000, batch 25); `capped`: the batch also capped at a third of the disk's IOPS on Kafka's disk
 * (io.max); `direct`: Kafka is the cgroup DIRECT_CG, which systemd does not own, with the defaults;
 * `explicit`: `latency: 25ms` written out (refused on a kernel without io.latency).
 */
export const diskPolicy = (io: DiskIo): string =>
  stringify({
    apiVersion: 'isolate/v1',
    kind: 'HostPolicy',
    reserved: { cores: 1 },
    workloads: [
      {
        name: 'kafka',
        class: 'exclusive',
        cores: 1,
        match: io === 'direct' ? { cgroup: DIRECT_CG } : { systemdUnit: 'kafka.service' },
        disks: { paths: [LOG_DIR] },
        // weights and direct: no io: at all, the defaults (latency auto, weight 1000).
        ...(io === 'off'
          ? { io: { latency: 'off', weight: 'off' } }
          : io === 'capped'
            ? { io: { latency: 'off' } }
            : io === 'explicit'
              ? { io: { latency: '25ms' } }
              : {}),
      },
      {
        name: 'yarn',
        class: 'batch',
        match: { systemdUnit: 'batch.slice' },
        // direct: only isolate's own cgroupfs writes are under test there.
        ...(io === 'off' || io === 'direct' ? { io: { weight: 'off' } } : {}),
        ...(io === 'capped' ? { io: { max: { wiops: CAP_WIOPS } } } : {}),
      },
    ],
  });
export const CAP_WIOPS = 50;
/** A cgroup of Kafka's that systemd does not own: isolate writes its io files itself. */
export const DIRECT_CG = '/kafka-direct';
