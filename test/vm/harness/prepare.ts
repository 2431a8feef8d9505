/**
 * Everything the guests need that a cold machine must first download or build — qemu and busybox,
 * Debian's cloud kernel, every systemd rootfs variant, the io.latency kernel, the Java and C helpers
 * the guests run — built ahead of the guests, while lint and the unit files run (issue 59: on a fresh
 * 2-core machine these are minutes of apt downloads, mmdebstrap and `make bzImage`, and most of them
 * wait on the network, not the CPU).
 *
 * `npm test` starts it in the background (prepare-launch.mjs) and the vm project waits for it before its
 * first guest (support/wait-prepare.ts); it only fills the caches the harness reads, so a run without it
 * (a single vm file, `npx vitest run`) builds what it needs itself, exactly as before. A step that fails
 * here is logged and left to the guest that needs it, which fails with the harness's own message.
 *
 * Two lanes, two processes, side by side: `guests` (downloads, mmdebstrap, dpkg) and `kernel` (make
 * -j); the guests wait for both (support/wait-prepare.ts).
 *
 *   node_modules/.bin/vite-node test/vm/harness/prepare.ts guests|kernel     # what the launcher runs
 */
import { readFileSync, rmSync } from 'node:fs';
import { setPriority } from 'node:os';
import {
  JVM_ROOTFS_PACKAGES,
  QUIET_CORES_ROOTFS_PACKAGES,
  ROLE_ROOTFS_PACKAGES,
} from '../support/rootfs-variants.js';
import { ensureVmPrereqs } from './ensure.js';
import { ensureIoLatencyKernel, ensureKernelSource } from './kernel-build.js';
import { preparePidFile } from './prepare-state.js';
import { systemdRootfs } from './rootfs.js';

/** Each systemd rootfs the scenarios boot: the base one and its variants. */
const ROOTFS_VARIANTS: readonly (readonly string[])[] = [
  [],
  QUIET_CORES_ROOTFS_PACKAGES,
  JVM_ROOTFS_PACKAGES,
  ROLE_ROOTFS_PACKAGES,
];

function log(msg: string): void {
  process.stdout.write(`${new Date().toISOString()} prepare: ${msg}\n`);
}

/**
 * CPU seconds this process and its finished children (mmdebstrap, make, apt) have used: on a 2-core
 * machine the run's wall time is its CPU work over two, so this is what a step really costs the run.
 */
function cpuSeconds(): number {
  // /proc/self/stat after the command name: utime stime cutime cstime are fields 14-17 (ticks of 1/100 s).
  const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  return [11, 12, 13, 14].reduce((sum, i) => sum + Number(f[i]), 0) / 100;
}

async function step(name: string, run: () => unknown): Promise<boolean> {
  const t0 = Date.now();
  const cpu0 = cpuSeconds();
  try {
    await run();
    log(
      `${name}: ok in ${((Date.now() - t0) / 1000).toFixed(1)} s, ${(cpuSeconds() - cpu0).toFixed(0)} CPU-s`,
    );
    return true;
  } catch (e) {
    log(
      `${name}: FAILED after ${((Date.now() - t0) / 1000).toFixed(1)} s (left to the guest that needs it): ${String((e as Error).message ?? e).slice(0, 2000)}`,
    );
    return false;
  }
}

/** The guests' lane: qemu, busybox and the cloud kernel, then every rootfs variant and the helpers. */
async function prepareGuests(): Promise<void> {
  const t0 = Date.now();
  // Ahead of the unit files (root only: a lower nice value needs it): the first guest waits for this
  // lane, the unit files for nothing. It was not enough alone: one rootfs after another, the lane still
  // took 20 min of cold rehearsal r3 (the builds wait more than they compute), hence side by side below.
  try {
    setPriority(-5);
  } catch {
    // Not root: it runs at the unit files' priority.
  }
  // qemu, busybox and the cloud kernel first: every guest needs them.
  if (!(await step('qemu, busybox-static, Debian cloud kernel', () => ensureVmPrereqs()))) return;
  const { staticCBinary } = await import('../support/guest.js');
  const { kafkaClass } = await import('../support/java.js');
  // Side by side, not one after another: one at a time they took 200-380 s each in cold rehearsals
  // for only 80-120 CPU-s each (apt downloads, dpkg's many short processes), 20 min in all, and the
  // first guest waited for the last of them. Each line's CPU-s is then the whole group's so far.
  await Promise.all([
    ...ROOTFS_VARIANTS.map((v) => step(`rootfs [${v.join(', ') || 'base'}]`, () => systemdRootfs(v))),
    step('static helpers (standin, diskload)', () => {
      staticCBinary('standin');
      staticCBinary('diskload');
    }),
    step('Kafka stand-in JVM class (javac)', () => kafkaClass()),
  ]);
  log(`guests' lane done in ${((Date.now() - t0) / 1000).toFixed(0)} s, ${cpuSeconds().toFixed(0)} CPU-s`);
}

/**
 * The kernel's lane: Debian's linux-source-6.1 built with io.latency (CPU: make -j), at nice 19: only
 * kafka-disks boots that kernel, in the last project (vm-alone, which waits for this lane), so the build
 * takes what the unit files and the paired guests leave idle (they wait on child processes, apt and
 * their guests' idle vCPUs: 24 % of the machine in a quiet paired run) instead of slowing them. It used to
 * run at their priority because every guest waited for it and a `thread=multi` guest beside it spun
 * (cold rehearsal r3: 40 min at nice 19 beside such guests); paired guests are one host thread each.
 */
async function prepareKernel(): Promise<void> {
  // apt at the unit files' priority: it holds dpkg's lock, which their own apt installs wait for.
  if (!(await step('kernel source and build tools (apt)', () => ensureKernelSource()))) return;
  setPriority(19);
  await step('io.latency kernel (linux-source-6.1, make bzImage)', () => ensureIoLatencyKernel());
}

const lane = process.argv[2] === 'kernel' ? 'kernel' : 'guests';
try {
  await (lane === 'kernel' ? prepareKernel() : prepareGuests());
} finally {
  rmSync(preparePidFile(lane), { force: true });
}
