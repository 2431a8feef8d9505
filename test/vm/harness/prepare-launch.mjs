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
const pidFile = join(cache, 'prepare.pid');
const vite = join(repo, 'node_modules/.bin/vite-node');

function running() {
  if (!existsSync(pidFile)) return false;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 && existsSync(`/proc/${pid}`);
}

if (process.env.ISOLATE_VM_PREPARE === '0') {
  console.error('prepare: ISOLATE_VM_PREPARE=0, the guests build what they need themselves');
} else if (!existsSync(vite)) {
  console.error(`prepare: ${vite} missing (npm ci first); the guests build what they need themselves`);
} else if (running()) {
  console.error(`prepare: already running (${pidFile})`);
} else {
  mkdirSync(cache, { recursive: true });
  const out = openSync(join(cache, 'prepare.log'), 'a');
  // At nice 10 (make, mmdebstrap and dpkg inherit it): the unit files keep the CPU they need and the
  // builds take what they leave; the downloads, most of a cold start, wait on the network either way.
  // nice(1) execs the command, so the PID written below is vite-node's.
  const child = spawn('nice', ['-n', '10', vite, join(repo, 'test/vm/harness/prepare.ts')], {
    cwd: repo,
    detached: true,
    stdio: ['ignore', out, out],
  });
  writeFileSync(pidFile, `${child.pid}\n`);
  child.unref();
  console.error(
    `prepare: guests' downloads and builds in the background (PID ${child.pid}, log ${join(cache, 'prepare.log')})`,
  );
}
