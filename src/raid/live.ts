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
}

type Reader = (ctx: LiveContext, only?: string) => Promise<ParsedOutput>;

async function call(ctx: LiveContext, args: string[]): Promise<{ text: string; source: string }> {
  const r = await runTool(ctx.bin, args, ctx.timeoutMs);
  return { text: r.stdout, source: describeCall(ctx.bin, args) };
}

function timeoutFinding(err: unknown, what: string): Finding {
  const msg = err instanceof Error ? err.message : String(err);
  return { severity: 'unknown', message: `${msg}; ${what} unknown, nothing will be changed` };
}

/** storcli/perccli(+2): `/call show all J nolog` (netdata, storcli.py [R1][R15]), then `/cN/cv show all J` for CacheVault health. */
function storcliReader(tool: 'storcli' | 'perccli' | 'storcli2' | 'perccli2'): Reader {
  return async (ctx, only) => {
    const family = tool.startsWith('perccli') ? 'perccli' : 'storcli';
    const reader = new StorcliReader(family);
    const extra: Finding[] = [];
    // storcli2/perccli2 accept `show all J`; `nolog` is a storcli 7.x option.
    const tail = tool.endsWith('2') ? ['J'] : ['J', 'nolog'];
    const base = await call(ctx, [only === undefined ? '/call' : `/c${only}`, 'show', 'all', ...tail]);
    reader.add(base.text, base.source);
    for (const c of reader.result().controllers) {
      if (c.readOnlyReason) continue;
      try {
        if (c.protection.kind === 'cachevault') {
          // "Replacement required" is only in `/cx/cv show all` (raid-cli.md §3.3, §8.1).
          const cv = await call(ctx, [`/c${c.address}/cv`, 'show', 'all', ...tail]);
          reader.add(cv.text, cv.source);
        } else if (c.protection.kind === null && c.protection.present === true) {
          // BBU present but no BBU_Info/Cachevault_Info: ask; "use /cx/cv" means a CacheVault (§3.3).
          const bbu = await call(ctx, [`/c${c.address}/bbu`, 'show', 'all', ...tail]);
          reader.add(bbu.text, bbu.source);
          if (
            reader.result().controllers.find((x) => x.address === c.address)?.protection.kind === 'cachevault'
          ) {
            const cv = await call(ctx, [`/c${c.address}/cv`, 'show', 'all', ...tail]);
            reader.add(cv.text, cv.source);
          }
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
    reader.add(out.text, out.source);
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
  reader.add(out.text, out.source);
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
    reader.add(config.text, config.source, n);
    const status = await call(ctx, ['GETSTATUS', n]);
    reader.add(status.text, status.source, n);
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
