// Pre-flight: everything checked before an apply's first write (each backend ready, every live value
// readable, a saved plan still matching the host, each backend's own refusals), and which changes
// are already in place.
import { describeChange } from '../model/describe.js';
import { UserError } from '../model/errors.js';
import type { Change } from '../model/plan.js';
import type { ChangeExecutor, Executors, PreflightStep } from './executor.js';
import type { ApplyOptions } from './options.js';
import { EXIT, type StepReport } from './outcome.js';
import { executorOf } from './routing.js';

/** A value that could not be read refuses the apply: an unknown value is never taken for an absent one. */
function unreadable(c: Change, err: unknown): UserError {
  return new UserError(
    `cannot read ${describeChange(c)} before changing it (${err instanceof Error ? err.message : String(err)}); nothing was changed`,
    EXIT.refused,
  );
}

/**
 * The live value of each change: with the backend's readMany where it has one (one process for a
 * dozen systemd units), one by one otherwise. A failed read refuses the apply before any write: an
 * unknown value is never taken for an absent one.
 */
async function readAll(changes: readonly Change[], execs: Executors): Promise<Map<Change, string | null>> {
  const byExec = new Map<ChangeExecutor, Change[]>();
  for (const c of changes) {
    const exec = executorOf(execs, c);
    const list = byExec.get(exec);
    if (list) list.push(c);
    else byExec.set(exec, [c]);
  }
  const out = new Map<Change, string | null>();
  for (const [exec, list] of byExec) {
    const values = exec.readMany
      ? await exec.readMany(list).catch((err: unknown) => {
          throw unreadable(list[0]!, err);
        })
      : null;
    for (const [i, c] of list.entries()) {
      try {
        out.set(c, values ? (values[i] ?? null) : await exec.read(c));
      } catch (err) {
        throw unreadable(c, err);
      }
    }
  }
  return out;
}

/** For each change, whether an earlier change creates what it sets: its value cannot be read (or drift) yet. */
function underNewTargets(changes: readonly Change[], execs: Executors): boolean[] {
  const underNew: boolean[] = [];
  const earlier: Change[] = [];
  for (const c of changes) {
    const exec = executorOf(execs, c);
    underNew.push(
      exec.createdBy ? earlier.some((e) => e.backend === c.backend && exec.createdBy!(c, e)) : false,
    );
    earlier.push(c);
  }
  return underNew;
}

/**
 * Checks made before the first write: every backend is present and ready, a saved plan still
 * matches the host, then each backend's own refusals. Returns which changes are already in place.
 */
export async function preflight(
  changes: Change[],
  execs: Executors,
  opts: Pick<ApplyOptions, 'requireFrom' | 'force'>,
): Promise<StepReport[]> {
  const backends = [...new Set(changes.map((c) => c.backend))];
  for (const b of backends) await executorOf(execs, changes.find((c) => c.backend === b)!).ready?.();

  // Settings of something an earlier step creates cannot be read (or drift) yet.
  const underNew = underNewTargets(changes, execs);
  const liveOf = await readAll(
    changes.filter((_, i) => !underNew[i]),
    execs,
  );

  const perBackend = new Map<ChangeExecutor, PreflightStep[]>();
  const out: StepReport[] = [];
  for (const [i, c] of changes.entries()) {
    const exec = executorOf(execs, c);
    if (underNew[i]) {
      out.push({ seq: i + 1, change: c, previous: null, status: 'applied' });
      continue;
    }
    const live = liveOf.get(c) ?? null;
    const done =
      exec.satisfied(c, live) &&
      (await Promise.resolve(exec.notInForce?.(c, live) ?? null).catch((err: unknown) => {
        throw unreadable(c, err);
      })) === null;
    if (opts.requireFrom && !done && !exec.same(c, live, c.from)) refuseDrift(c, live);
    const list = perBackend.get(exec) ?? [];
    list.push({ index: i, change: c, live, done });
    perBackend.set(exec, list);
    out.push({ seq: i + 1, change: c, previous: live, status: done ? 'unchanged' : 'applied' });
  }
  for (const [exec, steps] of perBackend) await exec.preflight?.(steps, { force: !!opts.force });
  return out;
}

/** A saved plan's change whose live value is neither its `from` nor its `to`: the host moved on. */
function refuseDrift(c: Change, live: string | null): void {
  // A process that has exited since the plan was saved leaves nothing to move.
  if (c.setting === 'cgroup.procs' && live === null) return;
  throw new UserError(
    `the host changed since the plan was saved: ${describeChange(c)} expected "${c.from ?? '(absent)'}" now, found "${live ?? '(absent)'}"; run "isolate plan" again`,
    EXIT.refused,
  );
}
