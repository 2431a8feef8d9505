// Stop points for the real-kernel crash tests (test/vm/crash.test.ts), which drive the real binary:
// ISOLATE_TEST_CRASH_AT_STEP / _CRASH_AFTER_STEP kill -9 the process around write N,
// ISOLATE_TEST_PAUSE_AT_STEP creates <root>/run/isolate.paused and waits until it is removed.
// ISOLATE_TEST_BARE_PLAN=1 lets `apply --plan` take a bare change list (faults no planner would make).
// Read here, in the shell, and handed to the engine; the engine itself never reads the environment.
// Only a test build has this module: cli/apply.ts imports it under __ISOLATE_TEST_HOOKS__, which
// release builds define false (model/build-flags.d.ts).
import { access } from 'node:fs/promises';
import path from 'node:path';
import type { EngineHooks } from '../apply/engine.js';
import { UserError } from '../model/errors.js';
import type { Change } from '../model/plan.js';
import { arrayOf, change, object } from '../model/shape.js';
import { readJsonDocument } from '../ops/saved-plan.js';
import { writeFileAtomic } from '../sys/write.js';

/** What `apply` takes from the test environment: engine hooks, and a bare change list for `--plan`. */
export async function fromEnv(
  root: string,
  planFile: string | undefined,
): Promise<{ hooks?: EngineHooks; testBareChanges?: Change[] }> {
  const hooks = testHooksFromEnv(root, process.env);
  const bare = planFile && process.env.ISOLATE_TEST_BARE_PLAN === '1' ? bareChanges(planFile) : undefined;
  return { hooks, testBareChanges: bare };
}

/** `{ "changes": [...] }`, each change checked as a saved plan's are. */
function bareChanges(file: string): Change[] {
  const data = readJsonDocument(file, 'the bare change list', 'write { "changes": [...] }');
  const wrong = object({ changes: arrayOf(change) })(data, 'plan');
  if (wrong) throw new UserError(`--plan ${file}: ${wrong}`);
  return (data as { changes: Change[] }).changes;
}

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
