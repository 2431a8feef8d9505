// `isolate apply`, `rollback`, `check`: flags → one op from src/ops → rendering.
import type { Command } from 'commander';
import type { StepReport } from '../apply/engine.js';
import { describeChange } from '../model/describe.js';
import { UserError } from '../model/errors.js';
import type { Change } from '../model/plan.js';
import { makeLogger } from './log.js';
import { hostRoot, notice, printJson, printText, progressOnTerminal } from './options.js';
import { writeOut } from './output.js';

interface ApplyOpts {
  policy?: string;
  plan?: string;
  yes?: boolean;
  force?: boolean;
  json?: boolean;
  toolPath: string[];
}

async function confirm(count: number): Promise<boolean> {
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const a = await rl.question(`Apply ${count} change${count === 1 ? '' : 's'}? [y/N] `);
    return /^y(es)?$/i.test(a.trim());
  } finally {
    rl.close();
  }
}

function stepsJson(steps: StepReport[]) {
  return steps.map((s) => ({
    step: s.seq,
    ...s.change,
    previous: s.previous,
    status: s.status,
    note: s.note,
  }));
}

/** SIGINT/SIGTERM while applying: the engine finishes the current write, then rolls back. */
function abortOnSignals(): { signal: AbortSignal; done: () => void } {
  const ctl = new AbortController();
  const on = (sig: NodeJS.Signals) => ctl.abort(sig);
  process.on('SIGINT', on);
  process.on('SIGTERM', on);
  return {
    signal: ctl.signal,
    done: () => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
    },
  };
}

function renderChanges(changes: Change[], warnings: string[]): void {
  writeOut(`Changes (${changes.length}, in order):\n`);
  changes.forEach((c, i) => {
    writeOut(`  ${String(i + 1).padStart(3)}. ${describeChange(c)}${c.note ? `  [${c.note}]` : ''}\n`);
  });
  for (const w of warnings) writeOut(`  warning: ${w}\n`);
}

/** `apply`, `rollback` and `check`, in this order in the help. */
export function registerApply(program: Command): void {
  registerApplyCommand(program);
  registerRollback(program);
  registerCheck(program);
}

function registerApplyCommand(program: Command): void {
  program
    .command('apply')
    .description('apply the plan: journal each previous value, write, read back, roll back on any failure')
    .option('--root <dir>', 'host root: sysfs, cgroupfs, /proc, /var/lib/isolate and /run are used under it')
    .option(
      '--policy <file>',
      'policy file, or "default" for the bundled example (default /etc/isolate/policy.yaml; required when that is missing)',
    )
    .option(
      '--plan <file>',
      'apply exactly this plan saved by `isolate plan` (it embeds its policy); refused if the host changed since',
    )
    .option('--yes', 'do not ask for confirmation')
    .option('--force', 'allow lowering memory.max below the current usage')
    .option('--json', 'machine-readable output')
    .option(
      '--tool-path <tool=path>',
      'RAID tool path (repeatable; also ISOLATE_RAID_TOOL_PATH)',
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .action(async (opts: ApplyOpts, cmd: Command) => {
      const root = hostRoot(cmd);
      const { apply } = await import('../ops/apply.js');
      const { toolPaths } = await import('../ops/raid.js');
      // Only in a test build: release builds define the constant false and the minifier drops this.
      const testing = __ISOLATE_TEST_HOOKS__
        ? await (await import('./test-hooks.js')).fromEnv(root, opts.plan)
        : {};
      const sig = abortOnSignals();
      try {
        const out = await apply({
          root,
          log: await makeLogger(),
          notice,
          progress: progressOnTerminal(),
          signal: sig.signal,
          ...testing,
          policyPath: opts.policy,
          planFile: opts.plan,
          force: !!opts.force,
          jvms: true,
          disks: true,
          raidToolPaths: await toolPaths(opts.toolPath, process.env.ISOLATE_RAID_TOOL_PATH),
          async confirm(changes, warnings) {
            if (!opts.json) renderChanges(changes, warnings);
            if (opts.yes) return true;
            if (!process.stdin.isTTY) {
              throw new UserError(
                'refusing to apply without confirmation: stdin is not a terminal; review the plan and pass --yes',
              );
            }
            return confirm(changes.length);
          },
        });
        if (out.recoveredFirst && !opts.json) {
          notice(
            `finished undoing an interrupted apply (journal ${out.recoveredFirst.journalId}, ${out.recoveredFirst.undone} writes undone)`,
          );
        }
        if (opts.json) {
          printJson({
            ok: true,
            changed: out.changed,
            journal: out.journalId ?? null,
            steps: stepsJson(out.steps),
            warnings: out.warnings,
          });
          return;
        }
        for (const s of out.steps) {
          if (s.status === 'skipped') writeOut(`  skipped: ${describeChange(s.change)} (${s.note})\n`);
        }
        writeOut(
          out.changed === 0
            ? 'Nothing to do: the host already matches the policy.\n'
            : `Applied ${out.changed} change${out.changed === 1 ? '' : 's'} (journal ${out.journalId}); undo with: isolate rollback${root === '/' ? '' : ` --root ${root}`}\n`,
        );
      } finally {
        sig.done();
      }
    });
}

function registerRollback(program: Command): void {
  program
    .command('rollback')
    .description(
      "restore every value isolate changed since the last rollback, the agent's corrections included (or finish undoing an interrupted run)",
    )
    .option('--root <dir>', 'host root')
    .option('--json', 'machine-readable output')
    .option('--dry-run', 'show what the rollback would restore; change nothing')
    .action(async (opts: { json?: boolean; dryRun?: boolean }, cmd: Command) => {
      const root = hostRoot(cmd);
      if (opts.dryRun) {
        const { rollbackPreview } = await import('../ops/apply.js');
        const p = await rollbackPreview({ root });
        if (opts.json) printJson({ ok: true, dryRun: true, ...p });
        else if (p.steps.length === 0) writeOut('Nothing to roll back: no apply to undo.\n');
        else {
          const n = p.steps.length;
          writeOut(
            `Rollback would undo ${n} change${n === 1 ? '' : 's'} (journal ${p.journalId}), last first:\n`,
          );
          for (const st of p.steps) writeOut(`  ${st.description}\n`);
        }
        return;
      }
      const { rollback } = await import('../ops/apply.js');
      const sig = abortOnSignals();
      try {
        const r = await rollback({ root, log: await makeLogger(), signal: sig.signal });
        if (opts.json) printJson({ ok: true, ...r });
        else if (r.nothing) writeOut('Nothing to roll back: no apply to undo.\n');
        else {
          writeOut(`Rolled back ${r.undone} change${r.undone === 1 ? '' : 's'} (journal ${r.journalId}).\n`);
          for (const n of r.notes) writeOut(`  note: ${n}\n`);
        }
      } finally {
        sig.done();
      }
    });
}

function registerCheck(program: Command): void {
  program
    .command('check')
    .description(
      'audit the live host against the policy, thread by thread (exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN)',
    )
    .option('--root <dir>', 'host root')
    .option(
      '--policy <file>',
      'policy file, or "default" for the bundled example (default /etc/isolate/policy.yaml; required when that is missing)',
    )
    .option('--json', 'machine-readable output')
    .action(async (opts: { policy?: string; json?: boolean }, cmd: Command) => {
      // Monitoring contract (anything that stops the audit is UNKNOWN, 3, with a JSON document
      // under --json) is kept by the error handler in cli.ts for every monitoring command.
      const root = hostRoot(cmd);
      const { check } = await import('../ops/check.js');
      const { formatCheck } = await import('../audit/format.js');
      const { EXIT_STATUS } = await import('../model/finding.js');
      const report = await check({ root, notice, policyPath: opts.policy });
      const code = EXIT_STATUS[report.status];
      // `code` beside `status` in every document, as a failure's has it: one field to read either way.
      if (opts.json) {
        const { status, ...rest } = report;
        printJson({ status, code, ...rest });
      } else printText(formatCheck(report));
      process.exitCode = code;
    });
}
