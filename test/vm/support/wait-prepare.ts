// The vm projects' setup file: a guest waits for the guests' lane of the background preparation `npm
// test` started (harness/prepare.ts) instead of building the same rootfs beside it. With none running
// it returns at once. Not the kernel's lane: the io.latency kernel builds on while the guests that need
// no kernel of ours run, and ensureIoLatencyKernel() waits for it; vitest.config.ts runs the files
// that boot it last.
import { beforeAll } from 'vitest';
import { PREPARE_LOG, waitForPreparation } from '../harness/prepare-state.js';

let waited = false;
beforeAll(async () => {
  if (waited) return;
  const ms = await waitForPreparation(['guests']);
  waited = true;
  if (ms > 1000)
    console.log(`waited ${(ms / 1000).toFixed(0)} s for the guests' preparation (${PREPARE_LOG})`);
}, 3_600_000);
