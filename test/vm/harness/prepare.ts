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
 *   node_modules/.bin/vite-node test/vm/harness/prepare.ts     # what the launcher runs
 */
import { rmSync } from 'node:fs';
import {
  JVM_ROOTFS_PACKAGES,
  QUIET_CORES_ROOTFS_PACKAGES,
  ROLE_ROOTFS_PACKAGES,
} from '../support/rootfs-variants.js';
import { ensureVmPrereqs } from './ensure.js';
import { ensureIoLatencyKernel } from './kernel-build.js';
import { PREPARE_PID_FILE } from './prepare-state.js';
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

async function step(name: string, run: () => unknown): Promise<boolean> {
  const t0 = Date.now();
  try {
    await run();
    log(`${name}: ok in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    return true;
  } catch (e) {
    log(
      `${name}: FAILED after ${((Date.now() - t0) / 1000).toFixed(1)} s (left to the guest that needs it): ${String((e as Error).message ?? e).slice(0, 2000)}`,
    );
    return false;
  }
}

async function prepareGuests(): Promise<void> {
  const t0 = Date.now();
  // qemu, busybox and the cloud kernel first: every guest needs them, and apt runs one at a time.
  if (!(await step('qemu, busybox-static, Debian cloud kernel', () => ensureVmPrereqs()))) return;
  const { staticCBinary } = await import('../support/guest.js');
  const { kafkaClass } = await import('../support/java.js');
  // Two lanes: the kernel build is CPU (make -j), the rootfs variants mostly downloads and dpkg.
  await Promise.all([
    step('io.latency kernel (linux-source-6.1, make bzImage)', () => ensureIoLatencyKernel()),
    (async () => {
      for (const v of ROOTFS_VARIANTS)
        await step(`rootfs [${v.join(', ') || 'base'}]`, () => systemdRootfs(v));
      await step('static helpers (standin, diskload)', () => {
        staticCBinary('standin');
        staticCBinary('diskload');
      });
      await step('Kafka stand-in JVM class (javac)', () => kafkaClass());
    })(),
  ]);
  log(`all done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}

try {
  await prepareGuests();
} finally {
  rmSync(PREPARE_PID_FILE, { force: true });
}
