// README.md against the program, as docs/commands.md is: the command table's synopses are the commander
// program's commands, options and arguments; the metric list is the agent's registry; the layer table
// is test/arch/layers.ts; every doc under docs/ is linked once and every link leads to a file.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/agent/metrics.js';
import { buildProgram } from '../../src/cli/program.js';
import { BACKENDS, LAYERS } from '../arch/layers.js';
import { docSection, docTable, docText } from '../support/doc-samples.js';

const README = 'README.md';
const REPO = resolve(import.meta.dirname, '../..');
/** Every command takes it (README: "Every command reads the host under `--root DIR`"). */
const COMMON = new Set(['--root']);

/** The commands a user runs: `plan`, `policy validate`, `raid show`, … (groups are not commands). */
function leafCommands(cmd: Command, path: string[] = []): [string, Command][] {
  return cmd.commands.flatMap((c): [string, Command][] =>
    c.commands.length > 0 ? leafCommands(c, [...path, c.name()]) : [[[...path, c.name()].join(' '), c]],
  );
}

interface Synopsis {
  command: string;
  flags: { flag: string; value: string | null; optional: boolean }[];
  args: string[];
}

/**
 * `isolate raid parse --tool TOOL FILE... [--json] [--check]`: the command words, each flag with the
 * word after it when the option takes a value, and the remaining words (the arguments).
 */
function parseSynopsis(cell: string, commands: Map<string, Command>): Synopsis {
  const tokens = cell.replace(/^`|`$/g, '').match(/\[[^\]]*\]|\S+/g) ?? [];
  expect(tokens[0], cell).toBe('isolate');
  const words: string[] = [];
  let i = 1;
  while (i < tokens.length && /^[a-z]+$/.test(tokens[i]!)) words.push(tokens[i++]!);
  const command = words.join(' ');
  const options = commands.get(command)?.options ?? [];
  const takesValue = (flag: string) => options.some((o) => o.long === flag && (o.required || o.optional));
  const s: Synopsis = { command, flags: [], args: [] };
  for (; i < tokens.length; i++) {
    const t = tokens[i]!;
    const optional = t.startsWith('[');
    const inner = optional ? t.slice(1, -1).split(/\s+/) : [t];
    if (!optional && t.startsWith('--') && takesValue(t) && tokens[i + 1] && !/^[[-]/.test(tokens[i + 1]!)) {
      inner.push(tokens[++i]!);
    }
    for (let j = 0; j < inner.length; j++) {
      const w = inner[j]!;
      if (!w.startsWith('--')) {
        s.args.push(optional ? `[${w}]` : w);
        continue;
      }
      const next = inner[j + 1];
      const value = next !== undefined && !next.startsWith('--') ? next : null;
      if (value !== null) j++;
      s.flags.push({ flag: w, value, optional });
    }
  }
  return s;
}

describe('README.md command table', () => {
  const program = buildProgram();
  const commands = new Map(leafCommands(program));
  const rows = docTable(README, 'Commands').map((r) => parseSynopsis(r[0]!, commands));

  it('has one row for each command of the program', () => {
    expect(commands.size).toBeGreaterThanOrEqual(10);
    const documented = rows.map((r) => r.command);
    expect(new Set(documented).size).toBe(documented.length);
    expect([...documented].sort()).toEqual([...commands.keys()].sort());
  });

  for (const [name, cmd] of commands) {
    it(`isolate ${name}: the synopsis is the command's options and arguments`, () => {
      const row = rows.find((r) => r.command === name);
      expect(row, `no row for isolate ${name}`).toBeDefined();
      const options = new Map(cmd.options.filter((o) => !COMMON.has(o.long!)).map((o) => [o.long!, o]));
      const shown = row!.flags.filter((f) => !COMMON.has(f.flag));
      expect(shown.map((f) => f.flag).sort(), `isolate ${name}: flags`).toEqual([...options.keys()].sort());
      for (const f of shown) {
        const o = options.get(f.flag) as Option;
        // A required option stands bare, every other one in brackets.
        expect(f.optional, `${name} ${f.flag}: brackets`).toBe(!o.mandatory);
        // A value where the option takes one: a placeholder (FILE, TOOL=PATH) or the default itself.
        expect(f.value !== null, `${name} ${f.flag}: value`).toBe(Boolean(o.required || o.optional));
        if (f.value !== null && !/^[A-Z][A-Z_=.]*$/.test(f.value)) {
          expect(f.value, `${name} ${f.flag}: the default`).toBe(String(o.defaultValue));
        }
      }
      const args = cmd.registeredArguments.map((a) => {
        const w = `${a.name().toUpperCase()}${a.variadic ? '...' : ''}`;
        return a.required ? w : `[${w}]`;
      });
      expect(row!.args, `isolate ${name}: arguments`).toEqual(args);
    });
  }
});

describe('README.md metric list', () => {
  it("names every isolate_* metric of the agent's registry with its labels, once", async () => {
    const m = await createMetrics();
    const exported = m.registry
      .getMetricsAsArray()
      .filter((x) => x.name.startsWith('isolate_'))
      .map((x) => {
        const labels = (x as unknown as { labelNames?: string[] }).labelNames ?? [];
        return `${x.name}{${[...labels].sort().join(',')}}`;
      })
      .sort();
    const listed = [
      ...docSection(README, 'The agent').matchAll(/`(isolate_[a-z_]+)(?:\{([a-z_,]+)\})?`/g),
    ].map(([, name, labels]) => `${name}{${(labels ?? '').split(',').filter(Boolean).sort().join(',')}}`);
    expect(exported.length).toBeGreaterThan(10);
    expect(new Set(listed).size, 'a metric listed twice').toBe(listed.length);
    expect(listed.sort()).toEqual(exported);
  });
});

describe('README.md layer table', () => {
  const rows = docTable(README, 'Layout').map((r) => ({
    folders: [...r[0]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!),
    mayImport: r[2]!,
  }));
  const rank = (f: string) => LAYERS[f]?.rank ?? Number.NaN;

  it('lists every folder of LAYERS once, and nothing else', () => {
    const listed = rows.flatMap((r) => r.folders);
    expect(new Set(listed).size, 'a folder listed twice').toBe(listed.length);
    expect([...listed].sort()).toEqual(Object.keys(LAYERS).sort());
    // LAYERS is every folder of src/ (test/arch/layers.test.ts holds the imports to it).
    const folders = readdirSync(join(REPO, 'src'), { withFileTypes: true }).filter((e) => e.isDirectory());
    expect(folders.map((e) => e.name).sort()).toEqual(Object.keys(LAYERS).sort());
  });

  it('goes from the lowest layer up, and each row may import only layers below it', () => {
    const ranks = rows.map((r) => Math.min(...r.folders.map(rank)));
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    for (const [i, r] of rows.entries()) {
      // Folders in one row share a rank (they must not import each other).
      expect(new Set(r.folders.map(rank)).size, r.folders.join(', ')).toBe(1);
      const [allowed, never] = r.mayImport.split(/\bnever\b/);
      for (const [, f] of allowed!.matchAll(/`([^`]+)`/g)) {
        expect(rank(f!), `${r.folders.join(', ')} may import ${f}`).toBeLessThan(ranks[i]!);
      }
      if (never !== undefined) {
        // "never `planner`": the backends' rule (BACKENDS in test/arch/layers.ts).
        expect([...never.matchAll(/`([^`]+)`/g)].map((m) => m[1])).toEqual(['planner']);
        for (const f of r.folders) expect(BACKENDS as readonly string[]).toContain(f);
      }
      if (ranks[i] === 0) expect(r.mayImport).toBe('—');
    }
    for (const b of BACKENDS) {
      expect(rows.find((r) => r.folders.includes(b))?.mayImport, b).toMatch(/never `planner`/);
    }
  });
});

describe('README.md and docs/ links', () => {
  const links = (doc: string) =>
    [...docText(doc).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
      .map((m) => m[1]!)
      .filter((l) => !/^[a-z]+:/.test(l));

  it('links each doc of docs/ once, and bench/README.md', () => {
    const linked = links(README);
    const docs = readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md'));
    for (const d of [...docs.map((f) => `docs/${f}`), 'bench/README.md']) {
      expect(linked.filter((l) => l === d).length, `${d} linked from README.md`).toBe(1);
    }
  });

  it('every relative link of README.md and docs/*.md leads to a file', () => {
    const docs = readdirSync(join(REPO, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`);
    for (const doc of [README, ...docs]) {
      for (const l of links(doc)) {
        expect(existsSync(join(REPO, dirname(doc), l)), `${doc}: ${l}`).toBe(true);
      }
    }
  });
});

describe('README.md and docs/ sources', () => {
  it('cite nothing outside the repository: a reader has only the repository', () => {
    const docs = readdirSync(join(REPO, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`);
    for (const doc of [README, ...docs]) {
      const text = docText(doc);
      // raid.md cited ../shared/docs/raid-cli.md as §n for every vendor fact.
      expect(text, `${doc}: a § citation`).not.toMatch(/§\s*\d/);
      expect(text, `${doc}: a document outside the repository`).not.toMatch(
        /\.\.\/shared\/docs|raid-cli\.md/,
      );
    }
  });
});

describe('the Node.js version the docs ask for', () => {
  // package.json's engines is what npm enforces; a newcomer follows the docs.
  const engines = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).engines.node as string;
  const wanted = /^>=(\d+(?:\.\d+)*)$/.exec(engines)?.[1];

  it("is package.json's engines.node wherever README.md and docs/*.md name one", () => {
    expect(wanted, engines).toBeDefined();
    const docs = readdirSync(join(REPO, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`);
    let named = 0;
    for (const doc of [README, ...docs]) {
      for (const m of readFileSync(join(REPO, doc), 'utf8').matchAll(/Node\.js ≥ (\d+(?:\.\d+)*)/g)) {
        named++;
        expect(m[1], `${doc}: "${m[0]}"`).toBe(wanted);
      }
    }
    expect(named).toBeGreaterThan(0);
  });
});
