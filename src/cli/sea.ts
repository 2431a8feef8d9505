// Entry point of the packaged executable (`npm run package`): the script of its V8 startup snapshot.
// `node --build-snapshot` runs this file once at package time; the heap it leaves (commander, yaml and
// the code of every module `plan`, `apply`, `check` and `topology` use, loaded and initialised) is saved
// in the executable, and each start deserialises it and calls the function below instead of loading and
// running JavaScript. Nothing here may read process state (argv, env, cwd, the clock) at load: that is
// frozen at package time. pino, execa, prom-client and systeminformation stay behind their lazy
// import()s, evaluated on first use at run time (they open handles or read the host when loaded).
import { startupSnapshot } from 'node:v8';
import { plan } from '../ops/plan.js';
import { formatPlan } from '../planner/format.js';
import { buildProgram, main } from './program.js';
// Loaded here, not at first use: in the snapshot they cost nothing at run time.
import '../ops/raid.js';
import '../ops/policy.js';
import '../ops/apply.js';
import '../ops/check.js';
import '../topology/read.js';
import '../topology/format.js';
import '../cgroup/observe.js';
import '../systemd/observe.js';
import '../audit/format.js';
import '../model/finding.js';

/**
 * Package time: one dry-run plan of a fixture tree, so the snapshot holds the compiled code of what a
 * plan runs (V8 keeps the bytecode of functions that ran).
 */
async function warmUp(root: string, policyPath: string): Promise<void> {
  const out = await plan({ root, policyPath });
  formatPlan(out.built.plan, policyPath);
  JSON.stringify(out.json);
}

const warm = process.env.ISOLATE_SNAPSHOT_WARMUP;
if (startupSnapshot.isBuildingSnapshot() && warm) {
  const { root, policy } = JSON.parse(warm) as { root: string; policy: string };
  warmUp(root, policy).catch((err: unknown) => {
    process.stderr.write(`isolate: snapshot warm-up failed: ${String(err)}\n`);
    process.exitCode = 1;
  });
}

// The command line is built here, once: a start only parses its arguments with it. commander reads
// nothing from the process until it parses (its output goes through process.stdout/stderr when used).
const program = buildProgram();
// True only in the heap saved at package time: a start that ran this file instead would say so.
const fromSnapshot = startupSnapshot.isBuildingSnapshot();
const warmedUp = fromSnapshot && !!warm;
startupSnapshot.setDeserializeMainFunction(() => {
  if (process.env.ISOLATE_SEA_DEBUG === '1') {
    process.stderr.write(
      `isolate sea: ${fromSnapshot ? `started from the startup snapshot${warmedUp ? ' (warmed up)' : ''}` : 'no snapshot'}\n`,
    );
  }
  main(process.argv, program);
});
