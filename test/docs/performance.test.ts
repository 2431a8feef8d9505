// docs/performance.md: what it says about the program is what the program is — the executable's V8
// flags (EXEC_ARGV), no V8 flag set at run time, the unit's memory caps — each row of the current
// table is run by an instrument that exists, and every `--interval` the docs offer is one the agent
// accepts.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXEC_ARGV } from '../../scripts/bundle-common.mjs';
import { docSection, docTable, docText } from '../support/doc-samples.js';
import { cli, hostWithPolicy } from './host.js';

const DOC = 'docs/performance.md';
const REPO = resolve(import.meta.dirname, '../..');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('docs/performance.md', () => {
  const budgets = docSection(DOC, 'Budgets');

  it("names the executable's V8 flags (EXEC_ARGV), and the source sets none at run time", () => {
    const shown = /starts with the V8 flags ((?:`[^`]+`[ ,]*)+)\(`EXEC_ARGV`/.exec(
      budgets.replace(/\s+/g, ' '),
    );
    expect(shown, 'the sentence naming the executable flags').not.toBeNull();
    const flags = shown![1]!.trim().split(/\s+/);
    expect(flags.map((f) => f.replace(/`/g, ''))).toEqual([...EXEC_ARGV]);
    for (const f of sources(join(REPO, 'src'))) {
      expect(readFileSync(f, 'utf8'), f).not.toMatch(/setFlagsFromString/);
    }
  });

  it("states the unit's memory caps as systemd/isolate.service sets them", () => {
    const unit = readFileSync(join(REPO, 'systemd/isolate.service'), 'utf8');
    for (const key of ['MemoryHigh', 'MemoryMax']) {
      const set = new RegExp(`^${key}=(\\S+)$`, 'm').exec(unit)?.[1];
      expect(set, `${key}= in the unit`).toBeDefined();
      expect(budgets, key).toContain(`\`${key}=${set}\``);
    }
  });

  it('runs every row of the current table with an instrument that exists', () => {
    const rows = docTable(DOC, 'Current figures');
    expect(rows.length).toBeGreaterThan(5);
    for (const r of rows) {
      const command = r[4] ?? '';
      const used = [...command.matchAll(/\bbench\/[\w./-]+/g)].map((m) => m[0]);
      if (command !== 'same')
        expect(used.length + (command.includes('bench:isolation') ? 1 : 0), r[0]).toBe(1);
      for (const b of used) expect(readdirSync(join(REPO, 'bench')), b).toContain(b.split('/')[1]);
    }
  });

  it('offers only --interval values the agent accepts (and the check refuses one it does not)', () => {
    const docs = ['README.md', ...readdirSync(join(REPO, 'docs')).map((f) => `docs/${f}`)];
    const values = new Set<string>();
    for (const d of docs.filter((f) => f.endsWith('.md'))) {
      for (const [, v] of docText(d).matchAll(/--interval[ =](\d[\w.]*)/g)) values.add(v!);
    }
    expect(values.size).toBeGreaterThan(0);
    const root = hostWithPolicy('qemu-2s-smt2');
    const refused = (v: string) =>
      /expected a duration/.test(cli(root, ['agent', '--once', '--interval', v]).stderr);
    for (const v of values) expect(refused(v), `--interval ${v}`).toBe(false);
    expect(refused('500ms')).toBe(true);
  });
});
