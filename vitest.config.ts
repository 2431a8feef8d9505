import { defineConfig } from 'vitest/config';
import { LongestGuestsFirst } from './test/vm/harness/sequencer.js';
import { guestSlots } from './test/vm/harness/slots.js';

// Tests run the source with the fault-injection hooks, as the build they drive has them
// (src/model/build-flags.d.ts).
const define = { __ISOLATE_TEST_HOOKS__: 'true' };

/**
 * What every guest project shares: dist/ built once, the background preparation waited for (the
 * kernel's build included; why: test/vm/support/wait-prepare.ts), one fork, so one qemu guest at a time.
 */
const guests = {
  globalSetup: ['test/support/build.ts'],
  setupFiles: ['test/support/yield.ts', 'test/vm/support/wait-prepare.ts'],
  testTimeout: 900_000,
  pool: 'forks' as const,
  poolOptions: { forks: { singleFork: true } },
};

/** Guest files that boot the io.latency kernel (test/vm/harness/kernel-build.ts). */
const KERNEL_GUESTS = ['test/vm/kafka-disks.test.ts'];

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
          exclude: KERNEL_GUESTS,
          hookTimeout: 1_800_000,
          // One guest at a time in one fork; ISOLATE_VM_GUESTS=2: files in several forks, two qemu guests
          // at a time across them (harness/slots.ts), each one host thread (TCG thread=single:
          // harness/run.ts says why and why it is not the default yet), longest first (harness/sequencer.ts).
          poolOptions: { forks: { singleFork: guestSlots() === 1 } },
          // Never beside the unit files or the kernel's build (groupOrder, support/wait-prepare.ts): two
          // thread=multi guests at once with `make -j2` beside them were slower in sum (cold rehearsals,
          // issue 59: 75 min against 62; strict 101 → 317 s, JVM 188 → 692 s).
          sequence: { groupOrder: 2 },
        },
      },
      {
        define,
        test: {
          ...guests,
          // The guests that boot the io.latency kernel (and measure the disk): after every other guest and
          // alone, so no other guest's CPU moves their disk numbers; alone, a vCPU a host thread, as before.
          name: 'vm-kernel',
          env: { ISOLATE_VM_TCG_THREAD: 'multi' },
          include: KERNEL_GUESTS,
          hookTimeout: 3_600_000,
          sequence: { groupOrder: 3 },
        },
      },
    ],
  },
});
