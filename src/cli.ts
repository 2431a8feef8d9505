// Entry point of the `isolate` command. Kept small: each command's module is imported only when that
// command runs, so `isolate plan --dry-run` does not pay for RAID adapters, pino or execa.
import { Command, CommanderError } from 'commander';
import pkg from '../package.json' with { type: 'json' };
import { oneLine, UserError } from './model/errors.js';
import { registerAgent } from './cli/agent.js';
import { registerApply } from './cli/apply.js';
import { registerCore } from './cli/core.js';
import { registerRaid } from './cli/raid.js';

const program = new Command();
program
  .name('isolate')
  .description(
    'Give Kafka whole physical cores on one NUMA node, fence batch jobs off them, keep RAID cache safe.',
  )
  .version(pkg.version, '-V, --version', 'print the version')
  // Global: works before or after the subcommand (`isolate --root R plan`, `isolate plan --root R`).
  .option('--root <dir>', 'host root: sysfs, /proc, the cgroup2 mount, /etc/isolate, /var/lib/isolate, /run')
  .configureHelp({ showGlobalOptions: true })
  // One line per error, like every other isolate error; usage is one --help away.
  .configureOutput({
    outputError: (str, write) =>
      write(`isolate: ${str.replace(/^error: /, '').trim()} (see isolate --help)\n`),
  })
  .exitOverride();

registerCore(program);
registerApply(program);
registerRaid(program);
registerAgent(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  process.exitCode = reportError(err);
});

function reportError(err: unknown): number {
  if (err instanceof CommanderError) {
    // Commander already printed its one-line message; help and version are successful exits.
    if (
      err.code === 'commander.helpDisplayed' ||
      err.code === 'commander.version' ||
      err.code === 'commander.help'
    ) {
      return 0;
    }
    return 1;
  }
  if (err instanceof UserError) {
    process.stderr.write(`isolate: ${oneLine(err.message)}\n`);
    return err.exitCode;
  }
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(
    `isolate: internal error: ${oneLine(message)} (set ISOLATE_DEBUG=1 for a stack trace)\n`,
  );
  if (process.env.ISOLATE_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
  return 1;
}
