// The `isolate` command line: main(argv) builds the program and runs one command. Kept small: each
// command's module is imported only when that command runs, so `isolate plan --dry-run` does not pay
// for RAID adapters, pino or execa. Entry point: src/cli.ts (dist/ and the executable).
import { Command, CommanderError } from 'commander';
import pkg from '../../package.json' with { type: 'json' };
import { oneLine, UserError, UserErrors } from '../model/errors.js';
import { registerAgent } from './agent.js';
import { registerApply } from './apply.js';
import { registerCore } from './core.js';
import { registerRaid } from './raid.js';
import { printed, printJson } from './options.js';
import { writeErr, writeOut } from './output.js';

/**
 * Runs the command line `argv` (as process.argv: the executable and script first) with a program from
 * buildProgram() (used once); sets process.exitCode.
 */
export function main(argv: string[], program: Command = buildProgram()): void {
  const args = argv.slice(2);
  if (args.length === 0) {
    // No command is a usage error, not a success: scripts calling `isolate $CMD` with an empty
    // variable must fail.
    program.outputHelp({ error: true });
    process.exitCode = 1;
  } else {
    program.parseAsync(argv).catch((err: unknown) => {
      process.exitCode = reportError(err, args);
    });
  }
}

/** Every command and option, nothing parsed yet. */
export function buildProgram(): Command {
  const program = new Command();
  program
    .name('isolate')
    .description(
      'Give Kafka whole physical cores on one NUMA node, fence batch jobs off them, keep RAID cache safe.',
    )
    .version(pkg.version, '-V, --version', 'print the version')
    // Global: works before or after the subcommand (`isolate --root R plan`, `isolate plan --root R`).
    .option(
      '--root <dir>',
      'host root: sysfs, /proc, the cgroup2 mount, /etc/isolate, /var/lib/isolate, /run',
    )
    // A command's help lists its own --root (what that command reads and writes under it); showing the
    // global one too printed --root twice with two different descriptions (issue 63).
    .configureHelp({ showGlobalOptions: false })
    // One line per error, like every other isolate error; usage is one --help away.
    .configureOutput({
      writeOut,
      writeErr,
      outputError: (str, write) =>
        write(`isolate: ${str.replace(/^error: /, '').trim()} (see isolate --help)\n`),
    })
    .exitOverride();

  registerCore(program);
  registerApply(program);
  registerRaid(program);
  registerAgent(program);
  return program;
}

/** `check` and `raid check` are monitoring plugins: any failure is UNKNOWN (3). */
function isMonitoring(args: string[]): boolean {
  const words = args.filter((a) => !a.startsWith('-'));
  const i = words.findIndex((w) =>
    ['check', 'raid', 'plan', 'apply', 'topology', 'policy', 'rollback'].includes(w),
  );
  return words[i] === 'check' || (words[i] === 'raid' && words[i + 1] === 'check');
}

/** Longest error line printed: a message quoting a huge value stays readable. */
const MESSAGE_MAX = 2000;

function clean(message: string): string {
  const line = oneLine(message).replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '?');
  return line.length > MESSAGE_MAX ? `${line.slice(0, MESSAGE_MAX)}… (truncated)` : line;
}

/** Longest status line a monitoring command prints on stdout (a dashboard shows one short line). */
const STATUS_MAX = 200;

function statusLine(message: string): string {
  const m = message.replace(/^UNKNOWN: /, '');
  return m.length > STATUS_MAX - 9 ? `${m.slice(0, STATUS_MAX - 10)}…` : m;
}

function reportError(err: unknown, argv: string[]): number {
  const monitoring = isMonitoring(argv);
  const json = argv.includes('--json');
  let code: number;
  let message: string;
  if (err instanceof CommanderError) {
    // Commander already printed its one-line message; help and version are successful exits.
    if (
      err.code === 'commander.helpDisplayed' ||
      err.code === 'commander.version' ||
      err.code === 'commander.help'
    ) {
      return 0;
    }
    code = 1;
    message = err.message.replace(/^error: /, '');
  } else if (err instanceof UserError) {
    // Several failures of one input (every mistake of a policy): one line each, as one failure is.
    const lines = (err instanceof UserErrors ? err.lines : [err.message]).map(clean);
    message =
      lines.length > 1
        ? `${lines[0]} (and ${lines.length - 1} more: ${lines.slice(1).join('; ')})`
        : lines[0]!;
    code = err.exitCode;
    for (const line of lines)
      writeErr(`isolate: ${monitoring && !line.startsWith('UNKNOWN') ? 'UNKNOWN: ' : ''}${line}\n`);
  } else {
    message = clean(`internal error: ${err instanceof Error ? err.message : String(err)}`);
    code = 1;
    writeErr(`isolate: ${monitoring ? 'UNKNOWN: ' : ''}${message} (set ISOLATE_DEBUG=1 for a stack trace)\n`);
    if (process.env.ISOLATE_DEBUG && err instanceof Error) writeErr(`${err.stack}\n`);
  }
  if (monitoring) code = 3;
  // A monitoring plugin's status is its first line on stdout (Nagios, Icinga and Sensu show stdout, and
  // "(No output on stdout)" when there is none): the error above says it on stderr too, in full.
  if (monitoring && !json) writeOut(`UNKNOWN: ${statusLine(message)}\n`);
  // Every --json run prints one JSON document on stdout, whatever happened.
  if (json && !printed.json) {
    printJson(
      monitoring
        ? { status: 'UNKNOWN', code, summary: message, error: message }
        : { ok: false, exitCode: code, error: message },
    );
  }
  return code;
}
