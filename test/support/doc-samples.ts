/**
 * Sample outputs in docs/ are produced by tests: a block written as
 *
 *   <!-- sample: ID -->
 *   ```text
 *   ...
 *   ```
 *
 * must equal what the test produced. ISOLATE_UPDATE_DOCS=1 rewrites the block instead of failing.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect } from 'vitest';

const REPO = resolve(import.meta.dirname, '../..');

export function expectDocSample(doc: string, id: string, actual: string): void {
  const file = join(REPO, doc);
  const text = readFileSync(file, 'utf8');
  const re = new RegExp(`(<!-- sample: ${id} -->\\n\`\`\`\\w*\\n)([\\s\\S]*?)(\`\`\`)`);
  const m = re.exec(text);
  if (!m) throw new Error(`${doc}: no block "<!-- sample: ${id} -->" followed by a fenced code block`);
  const body = actual.endsWith('\n') ? actual : `${actual}\n`;
  if (process.env.ISOLATE_UPDATE_DOCS === '1') {
    writeFileSync(
      file,
      text.replace(re, (_all, open: string, _old: string, close: string) => open + body + close),
    );
    return;
  }
  expect(m[2], `${doc}: sample "${id}" no longer matches the program; rerun with ISOLATE_UPDATE_DOCS=1`).toBe(
    body,
  );
}

/** The ids of every `<!-- sample: ID -->` block in a doc, in order: each must be checked by a test. */
export function sampleIds(doc: string): string[] {
  const text = readFileSync(join(REPO, doc), 'utf8');
  return [...text.matchAll(/<!-- sample: (\S+) -->/g)].map((m) => m[1] ?? '');
}

/** A doc's text, for tests that check tables against the program. */
export function docText(doc: string): string {
  return readFileSync(join(REPO, doc), 'utf8');
}

/**
 * The rows of the first markdown table after `heading` (a line starting with `#`): one array of
 * trimmed cells per body row, backticks kept.
 */
export function docTable(doc: string, heading: string): string[][] {
  const lines = docText(doc).split('\n');
  const at = lines.findIndex((l) => /^#+ /.test(l) && l.replace(/^#+ /, '').trim() === heading);
  if (at < 0) throw new Error(`${doc}: no heading "${heading}"`);
  const rows: string[][] = [];
  let i = at + 1;
  while (i < lines.length && !lines[i]!.startsWith('|')) {
    if (/^#+ /.test(lines[i]!)) throw new Error(`${doc}: no table under "${heading}"`);
    i++;
  }
  for (i += 2; i < lines.length && lines[i]!.startsWith('|'); i++) {
    // Split on | not inside backticks (cells may hold `a | b`).
    const cells: string[] = [];
    let cur = '';
    let tick = false;
    for (const ch of lines[i]!.slice(1, lines[i]!.trimEnd().length - 1)) {
      if (ch === '`') tick = !tick;
      if (ch === '|' && !tick) {
        cells.push(cur.trim());
        cur = '';
      } else cur += ch;
    }
    cells.push(cur.trim());
    rows.push(cells);
  }
  return rows;
}

/**
 * The text under `heading` (a line starting with `#`), up to the next heading of the same or a higher
 * level: the section a test checks, without the rest of the doc.
 */
export function docSection(doc: string, heading: string): string {
  const lines = docText(doc).split('\n');
  const at = lines.findIndex((l) => /^#+ /.test(l) && l.replace(/^#+ /, '').trim() === heading);
  if (at < 0) throw new Error(`${doc}: no heading "${heading}"`);
  const level = /^#+/.exec(lines[at]!)![0].length;
  let end = at + 1;
  let fence = false;
  for (; end < lines.length; end++) {
    if (lines[end]!.startsWith('```')) fence = !fence;
    const m = /^(#+) /.exec(lines[end]!);
    if (!fence && m && m[1]!.length <= level) break;
  }
  return lines.slice(at + 1, end).join('\n');
}
