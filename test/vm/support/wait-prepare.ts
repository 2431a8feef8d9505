// The vm project's setup file: a guest waits for the background preparation `npm test` started
// (harness/prepare.ts) instead of building the same kernel or rootfs beside it. With none running it
// returns at once.
import { beforeAll } from 'vitest';
import { PREPARE_LOG, waitForPreparation } from '../harness/prepare-state.js';

let waited = false;
beforeAll(async () => {
  if (waited) return;
  const ms = await waitForPreparation();
  waited = true;
  if (ms > 1000)
    console.log(`waited ${(ms / 1000).toFixed(0)} s for the guests' preparation (${PREPARE_LOG})`);
}, 3_600_000);
