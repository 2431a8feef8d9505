import type { Command } from 'commander';
import { UserError } from '../errors.js';

/** `isolate raid ...` commands. Owned by the RAID work (issue 4). Heavy modules load only when run. */
export function registerRaid(program: Command): void {
  const raid = program
    .command('raid')
    .description('RAID controller cache policy: show, check (monitoring plugin), parse saved tool outputs');

  withLiveOptions(
    raid.command('show').description('detect RAID controllers and show cache policy and battery state'),
  )
    .option('--json', 'print JSON')
    .action(async (o: LiveOptions & { json?: boolean }) => {
      const { observeRaid } = await import('../raid/observe.js');
      const { renderShow } = await import('../raid/report.js');
      const obs = await observeRaid(await observeOptions(o));
      process.stdout.write(o.json ? `${JSON.stringify(obs, null, 2)}\n` : `${renderShow(obs)}\n`);
    });

  withLiveOptions(
    raid
      .command('check')
      .description('monitoring check: exit 0 OK, 1 WARNING, 2 CRITICAL (unsafe cache policy), 3 UNKNOWN'),
  )
    .option('--json', 'print JSON')
    .action(async (o: LiveOptions & { json?: boolean }) => {
      const { observeRaid } = await import('../raid/observe.js');
      const { checkVerdict, renderCheck } = await import('../raid/report.js');
      let obs: Awaited<ReturnType<typeof observeRaid>>;
      try {
        obs = await observeRaid(await observeOptions(o));
      } catch (err) {
        // A monitoring plugin must not die with exit 1 ("WARNING") on its own failure.
        if (err instanceof UserError) throw new UserError(err.message, 3);
        throw err;
      }
      const v = checkVerdict(obs);
      process.stdout.write(
        o.json
          ? `${JSON.stringify({ status: v.label, code: v.code, ...obs }, null, 2)}\n`
          : `${renderCheck(v, obs.controllers.length)}\n`,
      );
      process.exitCode = v.code;
    });

  raid
    .command('parse')
    .description('read saved outputs of a RAID tool (support bundle, another host) without running anything')
    .requiredOption('--tool <tool>', 'storcli | perccli | megacli | ssacli | arcconf')
    .argument('<file...>', 'saved outputs of that tool (JSON or text)')
    .option('--json', 'print JSON')
    .option('--check', 'exit with the monitoring-plugin code of the findings')
    .action(async (files: string[], o: { tool: string; json?: boolean; check?: boolean }) => {
      const { PARSE_TOOLS } = await import('../raid/model.js');
      if (!(PARSE_TOOLS as readonly string[]).includes(o.tool)) {
        throw new UserError(`raid parse: --tool ${o.tool}: expected one of ${PARSE_TOOLS.join(', ')}`, 1);
      }
      const { readFile } = await import('node:fs/promises');
      const outputs = [];
      for (const file of files) {
        try {
          outputs.push({ text: await readFile(file, 'latin1'), source: file });
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code ?? 'error';
          throw new UserError(
            `raid parse: cannot read ${file} (${code}); give saved output files of ${o.tool}`,
            1,
          );
        }
      }
      const { parseSaved } = await import('../raid/offline.js');
      const { checkVerdict, renderShow } = await import('../raid/report.js');
      const parsed = parseSaved(o.tool as (typeof PARSE_TOOLS)[number], outputs);
      const v = checkVerdict(parsed);
      process.stdout.write(
        o.json ? `${JSON.stringify({ status: v.label, ...parsed }, null, 2)}\n` : `${renderShow(parsed)}\n`,
      );
      if (o.check) process.exitCode = v.code;
    });
}

interface LiveOptions {
  root: string;
  timeout: string;
  toolPath: string[];
}

function withLiveOptions(cmd: Command): Command {
  return cmd
    .option('--root <dir>', 'host root: sysfs and tool paths are read under it', '/')
    .option('--timeout <seconds>', 'hard timeout for one vendor-tool call', '60')
    .option(
      '--tool-path <tool=path>',
      'use this absolute path for a tool (repeatable; also ISOLATE_RAID_TOOL_PATH="storcli=/p,...")',
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    );
}

async function observeOptions(o: LiveOptions) {
  const seconds = Number(o.timeout);
  if (!Number.isFinite(seconds) || seconds < 1 || seconds > 3600) {
    throw new UserError(`--timeout ${o.timeout}: expected seconds from 1 to 3600`, 1);
  }
  const fromEnv = (process.env.ISOLATE_RAID_TOOL_PATH ?? '').split(',').filter((s) => s.trim() !== '');
  const { parseToolPaths } = await import('../raid/tools.js');
  try {
    return {
      root: o.root,
      timeoutMs: seconds * 1000,
      toolPaths: parseToolPaths([...fromEnv, ...o.toolPath].map((v) => v.trim())),
    };
  } catch (err) {
    throw new UserError((err as Error).message, 1);
  }
}
