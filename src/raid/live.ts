// Live reads: which commands each tool family is asked, and how their outputs are combined. Every
// call goes through runTool (argv array, timeout, one at a time). `only` narrows to one controller
// for the re-read after a set.
import { ArcconfReader } from './arcconf/parse.js';
import { describeCall, runTool, ToolCallError } from './exec.js';
import { MegacliReader } from './megacli/parse.js';
import type { Finding, ParsedOutput, RaidTool } from '../model/raid.js';
import { SsacliReader } from './ssacli/parse.js';
import { StorcliReader } from './storcli/parse.js';

export interface LiveContext {
  bin: string;
  timeoutMs: number;
  /** Private working directory (vendorWorkDir): vendor log files land there. */
  cwd: string;
}

type Reader = (ctx: LiveContext, only?: string) => Promise<ParsedOutput>;

interface CallOutput {
  text: string;
  source: string;
  /** Exit status: readers treat non-zero (or a mismatch with the printed code) as a read cut short. */
  exitCode: number | null;
}

async function call(ctx: LiveContext, args: string[]): Promise<CallOutput> {
  const r = await runTool(ctx.bin, args, { timeoutMs: ctx.timeoutMs, cwd: ctx.cwd });
  // A process killed by a signal has no exit code: as incomplete as a non-zero one.
  return { text: r.stdout, source: describeCall(ctx.bin, args), exitCode: r.exitCode ?? -1 };
}

function timeoutFinding(err: unknown, what: string): Finding {
  const msg = err instanceof Error ? err.message : String(err);
  return { severity: 'unknown', message: `${msg}; ${what} unknown, nothing will be changed` };
}

/**
 * storcli/perccli(+2): `/call show all J nolog` (netdata, storcli.py [R1][R15]), then for every
 * controller with a protection unit its own detail — `/cN/bbu show all` for a BBU (falling back to
 * `/cN/cv` on "use /cx/cv"), `/cN/cv show all` for a CacheVault — because only the detail prints the
 * fault flags (learn cycle, replacement, pack about to fail; raid-cli.md §3.3). A detail that cannot
 * be read leaves the unit unknown.
 */
function storcliReader(tool: 'storcli' | 'perccli' | 'storcli2' | 'perccli2'): Reader {
  return async (ctx, only) => {
    const family = tool.startsWith('perccli') ? 'perccli' : 'storcli';
    const reader = new StorcliReader(family);
    const extra: Finding[] = [];
    // storcli2/perccli2 accept `show all J`; `nolog` is a storcli 7.x option.
    const tail = tool.endsWith('2') ? ['J'] : ['J', 'nolog'];
    const base = await call(ctx, [only === undefined ? '/call' : `/c${only}`, 'show', 'all', ...tail]);
    reader.add(base.text, base.source, base.exitCode);
    const read = async (path: string) => {
      const out = await call(ctx, [path, 'show', 'all', ...tail]);
      reader.add(out.text, out.source, out.exitCode);
    };
    const current = (address: string) => reader.result().controllers.find((x) => x.address === address);
    for (const c of reader.result().controllers) {
      if (c.readOnlyReason || c.mode === 'hba' || c.protection.present === false) continue;
      try {
        if (c.protection.kind === 'cachevault') await read(`/c${c.address}/cv`);
        else if (c.protection.kind === 'bbu' || c.protection.present === true) {
          await read(`/c${c.address}/bbu`);
          // "use /cx/cv": the card has a CacheVault (raid-cli.md §3.3).
          if (current(c.address)?.protection.kind === 'cachevault') await read(`/c${c.address}/cv`);
        }
      } catch (err) {
        if (!(err instanceof ToolCallError)) throw err;
        extra.push({
          ...timeoutFinding(err, `protection unit of ${family}:/c${c.address}`),
          target: `${tool}:/c${c.address}`,
        });
        break;
      }
    }
    const out = reader.result();
    return { controllers: out.controllers, findings: [...out.findings, ...extra] };
  };
}

/** MegaCli: adapter info, LD policies, BBU (raid-cli.md §4 "Read"). */
const megacliReader: Reader = async (ctx, only) => {
  const a = only === undefined ? '-aALL' : `-a${only}`;
  const reader = new MegacliReader();
  for (const args of [
    ['-AdpAllInfo', a, '-NoLog'],
    ['-LDInfo', '-Lall', a, '-NoLog'],
    ['-AdpBbuCmd', a, '-NoLog'],
  ]) {
    const out = await call(ctx, args);
    reader.add(out.text, out.source, out.exitCode);
  }
  return reader.result();
};

/** ssacli: one `show config detail` gives everything; prefer it over many small calls ([R27]). */
const ssacliReader: Reader = async (ctx, only) => {
  const reader = new SsacliReader();
  const out = await call(ctx, [
    'ctrl',
    only === undefined ? 'all' : `slot=${only.replace(/^slot=/, '')}`,
    'show',
    'config',
    'detail',
  ]);
  reader.add(out.text, out.source, out.exitCode);
  return reader.result();
};

/** arcconf needs controller numbers: LIST first ([R22d]), then GETCONFIG n AL and GETSTATUS n. No `nologs` (6.50, [R18c]). */
const arcconfReader: Reader = async (ctx, only) => {
  const reader = new ArcconfReader();
  let numbers: string[];
  if (only !== undefined) numbers = [only];
  else {
    const list = await call(ctx, ['LIST']);
    const listed = [...list.text.matchAll(/^\s*Controller (\d+):/gm)].map((m) => m[1] as string);
    const found = Number(/Controllers found:\s*(\d+)/i.exec(list.text)?.[1] ?? Number.NaN);
    numbers =
      listed.length > 0
        ? listed
        : Number.isInteger(found)
          ? Array.from({ length: found }, (_, i) => String(i + 1))
          : [];
    if (numbers.length === 0) {
      return {
        controllers: [],
        findings: [
          {
            severity: /Controllers found:\s*0/i.test(list.text) ? 'info' : 'unknown',
            message: `arcconf LIST: ${firstLine(list.text)}`,
          },
        ],
      };
    }
  }
  for (const n of numbers) {
    const config = await call(ctx, ['GETCONFIG', n, 'AL']);
    reader.add(config.text, config.source, n, config.exitCode);
    const status = await call(ctx, ['GETSTATUS', n]);
    reader.add(status.text, status.source, n, status.exitCode);
  }
  return reader.result();
};

function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .find((l) => l.trim() !== '')
      ?.trim() ?? '(no output)'
  );
}

export const LIVE_READERS: Record<RaidTool, Reader> = {
  storcli: storcliReader('storcli'),
  perccli: storcliReader('perccli'),
  storcli2: storcliReader('storcli2'),
  perccli2: storcliReader('perccli2'),
  megacli: megacliReader,
  ssacli: ssacliReader,
  arcconf: arcconfReader,
};
