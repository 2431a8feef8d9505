// Stop points for the real-kernel crash tests (test/vm/crash.test.ts), which drive the real binary:
// ISOLATE_TEST_CRASH_AT_STEP / _CRASH_AFTER_STEP kill -9 the process around write N,
// ISOLATE_TEST_PAUSE_AT_STEP creates <root>/run/isolate.paused and waits until it is removed.
// ISOLATE_TEST_BARE_PLAN=1 lets `apply --plan` take a bare change list (faults no planner would make).
// Read here, in the shell, and handed to the engine; the engine itself never reads the environment.
import { access } from 'node:fs/promises';
import path from 'node:path';
import type { EngineHooks } from '../apply/engine.js';
import { writeFileAtomic } from '../sys/write.js';

export function testHooksFromEnv(root: string, env: NodeJS.ProcessEnv): EngineHooks | undefined {
  const crashAt = Number(env.ISOLATE_TEST_CRASH_AT_STEP ?? '0');
  const pauseAt = Number(env.ISOLATE_TEST_PAUSE_AT_STEP ?? '0');
  const crashAfter = Number(env.ISOLATE_TEST_CRASH_AFTER_STEP ?? '0');
  if (!(crashAt > 0 || pauseAt > 0 || crashAfter > 0)) return undefined;
  return {
    async beforeWrite(seq) {
      if (crashAt > 0 && seq === crashAt) process.kill(process.pid, 'SIGKILL');
      if (pauseAt > 0 && seq === pauseAt) await pause(root);
    },
    afterWrite(seq) {
      if (crashAfter > 0 && seq === crashAfter) process.kill(process.pid, 'SIGKILL');
    },
  };
}

/** Create `<root>/run/isolate.paused` and wait (at most 5 min) until someone removes it. */
async function pause(root: string): Promise<void> {
  const flag = path.join(root, 'run/isolate.paused');
  await writeFileAtomic(flag, `${process.pid}\n`);
  const until = Date.now() + 300_000;
  while (Date.now() < until) {
    try {
      await access(flag);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A bare change list as `--plan` (see above); never set in production. */
export function bareChangesFromEnv(env: NodeJS.ProcessEnv): boolean {
  return env.ISOLATE_TEST_BARE_PLAN === '1';
}
