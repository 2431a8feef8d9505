import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'bench',
          include: [],
          benchmark: { include: ['bench/**/*.bench.ts'] },
        },
      },
      {
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          globalSetup: ['test/support/build.ts'],
          exclude: ['test/vm/**'],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'vm',
          include: ['test/vm/**/*.test.ts'],
          globalSetup: ['test/support/build.ts'],
          testTimeout: 900_000,
          hookTimeout: 1_800_000,
          // One qemu guest at a time: the machine has two cores and TCG is CPU-bound.
          pool: 'forks',
          poolOptions: { forks: { singleFork: true } },
        },
      },
    ],
  },
});
