// The vm project's setup file: a guest waits for the background preparation `npm test` started
// (harness/prepare.ts) instead of building the same rootfs beside it. With none running it returns at
// once. Only the guests' lane: the io.latency kernel's build goes on while the guests that need no
// kernel of ours run (they leave a core partly idle), and ensureIoLatencyKernel() waits for it; the
// sequencer (support/sequencer.ts) runs the files that need it last.
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
