// The vm projects' setup file: a guest waits for the whole background preparation `npm test` started
// (harness/prepare.ts) instead of building the same kernel or rootfs beside it. With none running it
// returns at once. The kernel's lane too, although only kafka-disks boots that kernel: a guest beside
// the build runs ~40 % slower, more than starting early gains (cold rehearsal r4, guests started
// without the kernel: role-systemd 1,043 s against 624 s in r1, its playbook runs 189/204/188/147 s
// against 105/120/81/112 s, while the build took 37 min instead of 25).
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
