// Setup file of both projects: every test starts on a fresh turn of the event loop.
//
// Most unit tests run the CLI with spawnSync (test/cli/run.ts), so a file of them never leaves the
// microtask queue between its tests: vitest's runner awaits only resolved promises. The worker's
// progress report to vitest (an RPC, "onTaskUpdate") then waits for its answer until the whole file is
// done, and a file that takes over 60 s that way (test/cli/bad-input.test.ts: 79 s on a loaded 2-core
// CI machine) fails the run with "[vitest-worker]: Timeout calling onTaskUpdate", every test green.
// Two setImmediate turns pass through the loop's poll phase wherever the runner stands, so the answer
// is read between any two tests; only one test alone over 60 s of synchronous work could still miss it.
import { beforeEach } from 'vitest';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

beforeEach(async () => {
  await turn();
  await turn();
});
