// `npm test`'s first step: starts test/vm/harness/prepare.ts in the background, so the guests' cold
// downloads and builds overlap lint and the unit files, and returns at once. Its output goes to
// .vm-cache/prepare.log; the vm project waits for it (test/vm/support/wait-prepare.ts).
// ISOLATE_VM_PREPARE=0 skips it (the guests then build what they need themselves, as before).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const cache = process.env.ISOLATE_VM_CACHE ?? join(repo, '.vm-cache');
const vite = join(repo, 'node_modules/.bin/vite-node');

const pidFile = (lane) => join(cache, `prepare-${lane}.pid`);

function running(lane) {
  const file = pidFile(lane);
  if (!existsSync(file)) return false;
  const pid = Number(readFileSync(file, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 && existsSync(`/proc/${pid}`);
}

if (process.env.ISOLATE_VM_PREPARE === '0') {
  console.error('prepare: ISOLATE_VM_PREPARE=0, the guests build what they need themselves');
} else if (!existsSync(vite)) {
  console.error(`prepare: ${vite} missing (npm ci first); the guests build what they need themselves`);
} else {
  mkdirSync(cache, { recursive: true });
  const log = join(cache, 'prepare.log');
  // Neither lane below the unit files' priority: the first guest waits for the guests' lane, so it is on
  // CI's critical path (at nice 10 the unit files starved it: the last rootfs was done ~15 min after
  // them, while the first guest waited); prepare.ts says why the kernel's lane is not lowered either.
  for (const lane of ['guests', 'kernel']) {
    if (running(lane)) {
      console.error(`prepare: ${lane} already running (${pidFile(lane)})`);
      continue;
    }
    const out = openSync(log, 'a');
    const argv = [vite, join(repo, 'test/vm/harness/prepare.ts'), lane];
    const child = spawn(argv[0], argv.slice(1), { cwd: repo, detached: true, stdio: ['ignore', out, out] });
    writeFileSync(pidFile(lane), `${child.pid}\n`);
    child.unref();
    console.error(`prepare: the ${lane} lane in the background (PID ${child.pid}, log ${log})`);
  }
}
