// `isolate raid show|check|parse`: flags → one op from src/ops/raid.ts → rendering.
import type { Command } from 'commander';
import type { Verdict } from '../model/finding.js';
import type { RaidObservation } from '../model/raid.js';
import { UserError } from '../model/errors.js';
import { hostRoot, printJson, printText } from './options.js';

interface LiveOptions {
  timeout: string;
  toolPath: string[];
  json?: boolean;
}

export function registerRaid(program: Command): void {
  const raid = program
    .command('raid')
    .description('RAID controller cache policy: show, check (monitoring plugin), parse saved tool outputs');

  withLiveOptions(
    raid.command('show').description('detect RAID controllers and show cache policy and battery state'),
  ).action(async (o: LiveOptions, cmd: Command) => {
    const { raidCallOptions, raidShow } = await import('../ops/raid.js');
    const { renderShow } = await import('./raid-render.js');
    const obs = await raidShow(await callOptions(o, cmd, raidCallOptions));
    if (o.json) {
      const { checkVerdict } = await import('../audit/raid.js');
      printJson(raidJson(checkVerdict(obs), obs));
    } else printText(renderShow(obs));
  });

  withLiveOptions(
    raid
      .command('check')
      .description('monitoring check: exit 0 OK, 1 WARNING, 2 CRITICAL (unsafe cache policy), 3 UNKNOWN'),
  ).action(async (o: LiveOptions, cmd: Command) => {
    const { raidCallOptions, raidCheck } = await import('../ops/raid.js');
    const { renderCheck } = await import('./raid-render.js');
    const { verdict, observation } = await raidCheck(await callOptions(o, cmd, raidCallOptions));
    if (o.json) printJson(raidJson(verdict, observation));
    else printText(renderCheck(verdict, observation.controllers.length));
    process.exitCode = verdict.code;
  });

  raid
    .command('parse')
    .description('read saved outputs of a RAID tool (support bundle, another host) without running anything')
    .requiredOption('--tool <tool>', 'storcli | perccli | megacli | ssacli | arcconf')
    .argument('<file...>', 'saved outputs of that tool (JSON or text)')
    .option('--json', 'print JSON (the same document as raid show --json)')
    .option('--check', 'exit with the monitoring-plugin code of the findings')
    .action(async (files: string[], o: { tool: string; json?: boolean; check?: boolean }, cmd: Command) => {
      // It reads the files it is given and no host: a --root would be a mistake, not a setting.
      if (cmd.optsWithGlobals<{ root?: string }>().root !== undefined) {
        throw new UserError(
          'raid parse: --root does not apply; it reads only the saved outputs given as FILE...: drop --root',
        );
      }
      const { raidParse } = await import('../ops/raid.js');
      const { renderShow } = await import('./raid-render.js');
      const { verdict, parsed } = await raidParse(o.tool, files);
      if (o.json) printJson(raidJson(verdict, { mdArrays: [], hostAdapters: [], ...parsed }));
      else printText(renderShow(parsed));
      if (o.check) process.exitCode = verdict.code;
    });
}

function withLiveOptions(cmd: Command): Command {
  return cmd
    .option('--root <dir>', 'host root: sysfs and tool paths are read under it')
    .option('--timeout <seconds>', 'hard timeout for one vendor-tool call', '60')
    .option(
      '--tool-path <tool=path>',
      'use this absolute path for a tool (repeatable; also ISOLATE_RAID_TOOL_PATH="storcli=/p,...")',
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .option('--json', 'print JSON');
}

async function callOptions(
  o: LiveOptions,
  cmd: Command,
  make: typeof import('../ops/raid.js').raidCallOptions,
) {
  return make(hostRoot(cmd), o.timeout, o.toolPath, process.env.ISOLATE_RAID_TOOL_PATH);
}

/** One JSON model for `raid show`, `raid check` and `raid parse`: the verdict, then the observation. */
function raidJson(verdict: Verdict, obs: RaidObservation) {
  return {
    status: verdict.status,
    code: verdict.code,
    controllers: obs.controllers,
    findings: obs.findings,
    mdArrays: obs.mdArrays,
    hostAdapters: obs.hostAdapters,
  };
}
