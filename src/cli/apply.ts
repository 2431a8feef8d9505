import { existsSync, readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Executors, LogFn, StepReport } from '../cgroup/apply.js';
import { UserError } from '../errors.js';
import type { Change } from '../planner/types.js';
import { notice, printJson, requireDir, rootOption } from './options.js';

interface ApplyOpts {
  root?: string;
  policy?: string;
  plan?: string;
  yes?: boolean;
  force?: boolean;
  json?: boolean;
}

/**
 * Structured logs for journald: JSON lines on stderr when it is not a terminal (a service, a
 * pipe) or ISOLATE_LOG=json. pino is loaded only when something is actually written.
 */
async function makeLogger(): Promise<LogFn> {
  const mode = process.env.ISOLATE_LOG;
  if (mode === 'off' || (process.stderr.isTTY && mode !== 'json')) return () => {};
  const { pino } = await import('pino');
  const logger = pino(
    { name: 'isolate', base: { pid: process.pid }, level: process.env.ISOLATE_LOG_LEVEL ?? 'info' },
    pino.destination({ fd: 2, sync: true }),
  );
  return (level, msg, fields) => logger[level](fields ?? {}, msg);
}

/** Backends besides cgroupfs: RAID changes go through src/raid (loaded only when a plan has them). */
async function extraExecutors(root: string, changes: Change[], policyPath?: string): Promise<Executors> {
  if (!changes.some((c) => c.backend === 'raid')) return {};
  const { raidExecutor } = await import('../cgroup/raid-executor.js');
  let allowWithoutBattery: boolean | undefined;
  let timeoutMs: number | undefined;
  if (policyPath && existsSync(policyPath)) {
    const { loadPolicyFile } = await import('../policy/load.js');
    const raid = loadPolicyFile(policyPath).raid;
    allowWithoutBattery = raid?.allowWithoutBattery === true ? true : undefined;
    // The policy's per-call timeout bounds the sets and re-reads of apply as it bounds plan's reads.
    timeoutMs = raid ? raid.timeoutSeconds * 1000 : undefined;
  }
  return {
    raid: await raidExecutor({
      root,
      ...(allowWithoutBattery !== undefined ? { allowWithoutBattery } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    }),
  };
}

function describeChange(c: Change): string {
  if (c.setting === 'mkdir') return `mkdir ${c.target}`;
  if (c.setting === 'cgroup.procs') return `move PID ${c.to} from ${c.from ?? '?'} to ${c.target}`;
  const from = c.from === null ? '(none)' : c.from === '' ? '""' : c.from;
  return `${c.target} ${c.setting}: ${from} → ${c.to}`;
}

async function confirm(count: number): Promise<boolean> {
  if (!process.stdin.isTTY) return false;
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const a = await rl.question(`Apply ${count} change${count === 1 ? '' : 's'}? [y/N] `);
    return /^y(es)?$/i.test(a.trim());
  } finally {
    rl.close();
  }
}

interface SavedPlan {
  changes: Change[];
  fingerprint?: string;
  policy?: string;
  root?: string;
}

function readSavedPlan(file: string): SavedPlan {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : (err as Error).message;
    throw new UserError(`--plan ${file}: cannot read the saved plan (${why}); save one with "isolate plan"`);
  }
  const obj = data as Partial<SavedPlan> & { plan?: Partial<SavedPlan> };
  const plan = Array.isArray(obj.changes) ? obj : obj.plan;
  if (!plan || !Array.isArray(plan.changes)) {
    throw new UserError(`--plan ${file}: not a plan saved by "isolate plan" (no "changes" list)`);
  }
  for (const [i, c] of plan.changes.entries()) {
    if (!c || typeof c.target !== 'string' || typeof c.setting !== 'string' || typeof c.to !== 'string') {
      throw new UserError(
        `--plan ${file}: changes[${i}] is malformed (needs backend, target, setting, from, to)`,
      );
    }
  }
  return plan as SavedPlan;
}

function stepsJson(steps: StepReport[]) {
  return steps.map((s) => ({
    step: s.seq,
    ...s.change,
    previous: s.previous,
    status: s.status,
    ...(s.note ? { note: s.note } : {}),
  }));
}

/** `isolate apply`, `rollback`, `check`. Owned by the cgroup work (issue 3). */
export function registerApply(program: Command): void {
  program
    .command('apply')
    .description('apply the plan: journal each previous value, write, read back, roll back on any failure')
    .option(
      '--root <dir>',
      'host root: sysfs, cgroupfs, /proc, /var/lib/isolate and /run are used under it',
      '/',
    )
    .option('--policy <file>', 'policy file (default /etc/isolate/policy.yaml, else the bundled default)')
    .option(
      '--plan <file>',
      'apply exactly this plan saved by `isolate plan`; refused if the host changed since',
    )
    .option('--yes', 'do not ask for confirmation')
    .option('--force', 'allow lowering memory.max below the current usage')
    .option('--json', 'machine-readable output')
    .action(async (opts: ApplyOpts) => {
      const root = rootOption(opts.root);
      requireDir(root);
      const eng = await import('../cgroup/apply.js');

      // An interrupted apply is undone first: every plan must be made against a whole host.
      const early = await eng.recoverIfNeeded({ root, log: await makeLogger() });
      if (early && !opts.json) {
        process.stderr.write(
          `isolate: finished undoing an interrupted apply (journal ${early.journalId}, ${early.undone} writes undone)\n`,
        );
      }

      let changes: Change[];
      let warnings: string[] = [];
      let policyUsed: string | undefined = opts.policy;
      let requireFrom = false;
      if (opts.plan) {
        const saved = readSavedPlan(opts.plan);
        changes = saved.changes;
        requireFrom = true;
        policyUsed = opts.policy ?? saved.policy;
        if (saved.fingerprint) {
          const policyPath = opts.policy ?? saved.policy;
          if (policyPath && existsSync(policyPath)) {
            const { buildPlan } = await import('../planner/build.js');
            const { planFingerprint } = await import('../planner/json.js');
            const now = await buildPlan({ root, policyPath, notice });
            if (planFingerprint(now.plan) !== saved.fingerprint) {
              const diff = firstDifference(saved.changes, now.plan.changes);
              throw new UserError(
                `--plan ${opts.plan}: the host changed since the plan was saved (${diff}); run "isolate plan" again and review it`,
              );
            }
          }
        }
      } else {
        const { buildPlan } = await import('../planner/build.js');
        const built = await buildPlan({ root, ...(opts.policy ? { policyPath: opts.policy } : {}), notice });
        changes = built.plan.changes;
        warnings = built.plan.warnings;
        policyUsed = built.policy.source;
        const fs = built.observed.cgroup;
        if (!fs.writable && changes.some((c) => c.backend === 'cgroupfs')) {
          throw new UserError(
            `cannot apply: ${fs.reason ?? 'no writable cgroup v2 hierarchy'}; "isolate plan" still works`,
          );
        }
      }

      if (changes.length === 0) {
        if (opts.json) printJson({ ok: true, changed: 0, steps: [], warnings });
        else process.stdout.write('Nothing to do: the host already matches the policy.\n');
        return;
      }

      if (!opts.json) {
        process.stdout.write(`Changes (${changes.length}, in order):\n`);
        changes.forEach((c, i) => {
          process.stdout.write(
            `  ${String(i + 1).padStart(3)}. ${describeChange(c)}${c.note ? `  [${c.note}]` : ''}\n`,
          );
        });
        for (const w of warnings) process.stdout.write(`  warning: ${w}\n`);
      }
      if (!opts.yes && !(await confirm(changes.length))) {
        throw new UserError(
          process.stdin.isTTY
            ? 'not applied: not confirmed'
            : 'refusing to apply without confirmation: stdin is not a terminal; review the plan and pass --yes',
        );
      }

      const log = await makeLogger();
      const executors = await extraExecutors(root, changes, policyUsed);
      const run = (cs: Change[]) =>
        eng.applyChanges({ root, changes: cs, requireFrom, force: !!opts.force, executors, log });
      try {
        let result = await run(changes);
        if (result.recovered && !opts.plan) {
          // Another run was interrupted between our plan and our lock: plan again on the restored host.
          const { buildPlan } = await import('../planner/build.js');
          const built = await buildPlan({
            root,
            ...(opts.policy ? { policyPath: opts.policy } : {}),
            notice,
          });
          result = await run(built.plan.changes);
        }
        if (opts.json) {
          printJson({
            ok: true,
            changed: result.changed,
            journal: result.journalId ?? null,
            steps: stepsJson(result.steps),
            warnings,
          });
        } else {
          for (const s of result.steps) {
            if (s.status === 'skipped')
              process.stdout.write(`  skipped: ${describeChange(s.change)} (${s.note})\n`);
          }
          process.stdout.write(
            result.changed === 0
              ? 'Nothing to do: the host already matches the policy.\n'
              : `Applied ${result.changed} change${result.changed === 1 ? '' : 's'} (journal ${result.journalId}); undo with: isolate rollback${root === '/' ? '' : ` --root ${root}`}\n`,
          );
        }
      } catch (err) {
        if (opts.json && err instanceof UserError) {
          printJson({ ok: false, error: err.message, exitCode: err.exitCode });
        }
        throw err;
      }
    });

  program
    .command('rollback')
    .description('restore the state from before the last apply (or finish undoing an interrupted one)')
    .option('--root <dir>', 'host root', '/')
    .option('--json', 'machine-readable output')
    .action(async (opts: { root?: string; json?: boolean }) => {
      const root = rootOption(opts.root);
      requireDir(root);
      const { rollbackLast } = await import('../cgroup/apply.js');
      const { readJournal } = await import('../cgroup/journal.js');
      const j = await readJournal(root);
      const executors = j
        ? await extraExecutors(
            root,
            j.entries.map((e) => e.change),
          )
        : {};
      const r = await rollbackLast({ root, executors, log: await makeLogger() });
      if (opts.json) printJson({ ok: true, ...r });
      else if (r.nothing) process.stdout.write('Nothing to roll back: no apply to undo.\n');
      else {
        process.stdout.write(
          `Rolled back ${r.undone} change${r.undone === 1 ? '' : 's'} (journal ${r.journalId}).\n`,
        );
        for (const n of r.notes) process.stdout.write(`  note: ${n}\n`);
      }
    });

  program
    .command('check')
    .description(
      'audit the live host against the policy, thread by thread (exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN)',
    )
    .option('--root <dir>', 'host root', '/')
    .option('--policy <file>', 'policy file (default /etc/isolate/policy.yaml, else the bundled default)')
    .option('--json', 'machine-readable output')
    .action(async (opts: { root?: string; policy?: string; json?: boolean }) => {
      try {
        const root = rootOption(opts.root);
        requireDir(root);
        const { runCheck, formatCheck, EXIT_CHECK } = await import('../cgroup/check.js');
        const report = await runCheck({ root, ...(opts.policy ? { policyPath: opts.policy } : {}), notice });
        if (opts.json) printJson(report);
        else process.stdout.write(formatCheck(report));
        process.exitCode = EXIT_CHECK[report.status];
      } catch (err) {
        // Monitoring contract: anything that stops the audit is UNKNOWN (3), still one line.
        const msg = err instanceof Error ? err.message : String(err);
        if (opts.json) printJson({ status: 'UNKNOWN', summary: msg });
        throw new UserError(`UNKNOWN: ${msg}`, 3);
      }
    });
}

function firstDifference(saved: Change[], now: Change[]): string {
  const key = (c: Change) => `${c.backend} ${c.target} ${c.setting} ${c.from ?? ''} → ${c.to}`;
  const n = Math.max(saved.length, now.length);
  for (let i = 0; i < n; i++) {
    const a = saved[i];
    const b = now[i];
    if (!a) return `the host now also needs: ${key(b!)}`;
    if (!b) return `saved change ${i + 1} (${key(a)}) is no longer needed`;
    if (key(a) !== key(b)) return `saved change ${i + 1} was "${key(a)}", now "${key(b)}"`;
  }
  return 'the allocation differs';
}
