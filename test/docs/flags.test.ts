// docs/commands.md: each command's flags table lists exactly the flags the command takes (its
// --help), with commander's default where it has one. A flag added without documentation, or a
// documented flag that does not exist, fails here.
import { describe, expect, it } from 'vitest';
import { isolate } from '../cli/run.js';
import { docTable, docText } from '../support/doc-samples.js';

const DOC = 'docs/commands.md';
const commands = [...docText(DOC).matchAll(/^## isolate (.+)$/gm)].map((m) => m[1] ?? '');
/** Flags every command takes; documented once under "Common to every command". */
const COMMON = new Set(['--help', '--version', '--root']);

/** `isolate CMD --help`, run once per command. */
const helps = new Map<string, ReturnType<typeof isolate>>();
function help(cmd: string): ReturnType<typeof isolate> {
  if (!helps.has(cmd)) helps.set(cmd, isolate([...cmd.split(' '), '--help']));
  return helps.get(cmd)!;
}

/** Flags and defaults as `isolate CMD --help` prints them (options section only). */
function helpFlags(cmd: string): Map<string, string | null> {
  const r = help(cmd);
  expect(r.code, r.stderr).toBe(0);
  const flags = new Map<string, string | null>();
  // Options are "  --flag <arg>  description (default: x)" over several wrapped lines.
  const blocks = r.stdout.split(/\n(?= {2}-)/).filter((b) => /^ {2}-/.test(b));
  for (const b of blocks) {
    const names = /^ {2}(?:-\w, )?(--[a-z-]+)/.exec(b)?.[1];
    if (!names) continue;
    const def = /\(default: ([^)]*)\)/.exec(b.replace(/\s+/g, ' '))?.[1] ?? null;
    flags.set(names, def);
  }
  return flags;
}

describe('docs/commands.md flags tables', () => {
  it('documents the ten commands', () => {
    expect(commands).toEqual([
      'topology',
      'policy validate',
      'plan',
      'apply',
      'rollback',
      'check',
      'agent',
      'raid show',
      'raid check',
      'raid parse',
    ]);
  });

  for (const cmd of commands) {
    it(`isolate ${cmd} --help lists each flag once (--root: the command's own, not also the global one)`, () => {
      const r = help(cmd);
      expect(r.code, r.stderr).toBe(0);
      const names = [...r.stdout.matchAll(/^ {2}(?:-\w, )?(--[a-z-]+)/gm)].map((m) => m[1]);
      // raid parse reads only the files it is given and refuses --root.
      expect(names.filter((n) => n === '--root')).toEqual(cmd === 'raid parse' ? [] : ['--root']);
      expect(new Set(names).size).toBe(names.length);
    });

    it(`isolate ${cmd}: the table is its --help`, () => {
      const help = helpFlags(cmd);
      const rows = docTable(DOC, `isolate ${cmd}`).filter((r) => r[0]?.startsWith('`--'));
      const documented = new Map(rows.map((r) => [/`(--[a-z-]+)/.exec(r[0]!)![1]!, r[1] ?? '']));
      const taken = [...help.keys()].filter((f) => !COMMON.has(f));
      expect([...documented.keys()].filter((f) => !COMMON.has(f)).sort()).toEqual(taken.sort());
      for (const f of documented.keys()) expect(help.has(f), `${f} is not a flag of ${cmd}`).toBe(true);
      // commander's defaults: "5s", "127.0.0.1:9464", "60" (lists default to [] and are not shown).
      for (const [f, def] of help) {
        if (def === null || def === '[]' || !documented.has(f)) continue;
        expect(documented.get(f), `${cmd} ${f} default`).toContain(`\`${JSON.parse(def)}\``);
      }
    });
  }
});
