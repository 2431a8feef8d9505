// The vm projects' setup file: a guest waits for the background preparation `npm test` started
// (harness/prepare.ts) instead of building the same rootfs or kernel beside it. With none running it
// returns at once. Which lanes: ISOLATE_VM_PREPARE_LANES (a project's env in vitest.config.ts), every
// lane when unset. The paired guests (project vm) wait for the guests' lane only: none of them boots the
// io.latency kernel, whose build (nice 19) takes what they leave idle; vm-alone waits for both, because
// kafka-disks boots that kernel and a `thread=multi` guest beside a build spins (cold rehearsal r4, with
// such guests: role-systemd 1,043 s against 624 s).
import { beforeAll } from 'vitest';
import {
  PREPARE_LANES,
  PREPARE_LOG,
  type PrepareLane,
  waitForPreparation,
} from '../harness/prepare-state.js';

function lanes(): PrepareLane[] {
  const asked = process.env.ISOLATE_VM_PREPARE_LANES;
  if (!asked) return [...PREPARE_LANES];
  return PREPARE_LANES.filter((l) => asked.split(',').includes(l));
}

let waited = false;
beforeAll(async () => {
  if (waited) return;
  const which = lanes();
  const ms = await waitForPreparation(which);
  waited = true;
  if (ms > 1000)
    console.log(
      `waited ${(ms / 1000).toFixed(0)} s for the guests' preparation [${which.join(', ')}] (${PREPARE_LOG})`,
    );
}, 3_600_000);
