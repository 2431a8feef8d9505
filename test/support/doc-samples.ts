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
