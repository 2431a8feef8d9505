import { defineConfig } from 'vitest/config';
import { LongestGuestsFirst } from './test/vm/harness/sequencer.js';
import { guestSlots } from './test/vm/harness/guest-order.js';

// Tests run the source with the fault-injection hooks, as the build they drive has them
// (src/model/build-flags.d.ts).
const define = { __ISOLATE_TEST_HOOKS__: 'true' };

/**
 * What every guest project shares: dist/ built once, the background preparation waited for
 * (support/wait-prepare.ts: which lanes, and why), one fork, so one qemu guest at a time.
 */
const guests = {
  globalSetup: ['test/support/build.ts'],
  setupFiles: ['test/support/yield.ts', 'test/vm/support/wait-prepare.ts'],
  testTimeout: 900_000,
  pool: 'forks' as const,
  poolOptions: { forks: { singleFork: true } },
};

/**
 * Files that run alone after the paired guests, a host thread a vCPU (project vm-alone, which waits for
 * the kernel's build): kafka-disks boots the io.latency kernel (test/vm/harness/kernel-build.ts) and
 * measures the disk, which another guest's CPU would move. Nothing else: what runs here runs while
 * the other core idles (kafka-disks-cloud and kernel-build.test.ts, which need neither the built
 * kernel nor a quiet machine, were 64 s of it).
 */
const ALONE_GUESTS = ['test/vm/kafka-disks.test.ts'];

export default defineConfig({
  test: {
    // Three workers on two cores (vitest's default there is one: CPUs - 1). Most unit files wait on
    // child processes (the CLI, vendor-tool simulators, ansible-playbook, dpkg-deb, apt), not the CPU:
    // one worker left a core idle and took ~25 min cold (issue 59). The vm project stays one fork.
    maxWorkers: 3,
    sequence: { sequencer: LongestGuestsFirst },
    projects: [
      {
        test: {
          name: 'bench',
          include: [],
          benchmark: { include: ['bench/**/*.bench.ts'] },
        },
      },
      {
        define,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          globalSetup: ['test/support/build.ts'],
          // Reads vitest's answers between tests (why: test/support/yield.ts).
          setupFiles: ['test/support/yield.ts'],
          exclude: ['test/vm/**'],
          // A deadline that only catches a hang: on a loaded 2-core machine (CI building guest artifacts
          // beside the unit files) a test that spawns the CLI or a vendor-tool simulator a dozen times
          // can take tens of seconds. How fast things are is bench/'s to measure, never a test's.
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // Unit files first, then the guests, never both at once: with unit workers on the two cores
          // beside it, a TCG guest (8 vCPU threads) ran its files 30-100 % slower — in all ~400 s
          // more (1,761 s in CI against 1,359 s alone), longer than the whole unit project takes.
          sequence: { groupOrder: 1 },
        },
      },
      {
        define,
        test: {
          ...guests,
          name: 'vm',
          include: ['test/vm/**/*.test.ts'],
          exclude: ALONE_GUESTS,
          hookTimeout: 1_800_000,
          // The io.latency kernel is vm-alone's: these guests do not wait for its build.
          env: { ISOLATE_VM_PREPARE_LANES: 'guests' },
          // Two guests at a time (harness/guest-order.ts: one on a single CPU, ISOLATE_VM_GUESTS
          // overrides), each one host thread (TCG thread=single: harness/run.ts says why), the longest
          // first (harness/sequencer.ts starts them, harness/slots.ts serves them first: a third fork's
          // short guests once took both slots while role-systemd built its .deb; it started 194 s late).
          poolOptions: { forks: { singleFork: guestSlots() === 1 } },
          // Never beside the unit files (groupOrder): with unit workers on both cores a guest ran 30-100 %
          // slower. Quiet, the whole project took 1,350 s two at a time against ~1,765 s one at a time
          // (thread=multi) on this 2-core machine (issue 59).
          sequence: { groupOrder: 2 },
        },
      },
      {
        define,
        test: {
          ...guests,
          // ALONE_GUESTS: after every paired guest, one at a time, a host thread a vCPU.
          name: 'vm-alone',
          env: { ISOLATE_VM_TCG_THREAD: 'multi' },
          include: ALONE_GUESTS,
          hookTimeout: 3_600_000,
          sequence: { groupOrder: 3 },
        },
      },
    ],
  },
});
