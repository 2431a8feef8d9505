// Where the real vendor captures live. They belong to other projects (see SOURCES.md there), so they
// are read in place, never copied: ISOLATE_RAID_FIXTURES overrides, default is ../shared/fixtures/raid
// relative to the repository. Missing fixtures skip the suites locally and fail them in CI.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const FIXTURES = process.env.ISOLATE_RAID_FIXTURES ?? resolve(repo, '../shared/fixtures/raid');
export const HAVE_FIXTURES = existsSync(join(FIXTURES, 'SOURCES.md'));

if (!HAVE_FIXTURES && process.env.CI) {
  throw new Error(`RAID fixtures not found at ${FIXTURES}; set ISOLATE_RAID_FIXTURES`);
}

/** `storcli/netdata-megaraid-controllers-info.json` → its bytes as text (latin1 keeps odd bytes). */
export function fixture(rel: string): string {
  return readFileSync(join(FIXTURES, rel), 'latin1');
}

export function fixturePath(rel: string): string {
  return join(FIXTURES, rel);
}

/** Every capture, as `<tool>/<file>`. */
export function allFixtures(): string[] {
  if (!HAVE_FIXTURES) return [];
  const out: string[] = [];
  for (const dir of readdirSync(FIXTURES, { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    for (const f of readdirSync(join(FIXTURES, dir.name))) out.push(`${dir.name}/${f}`);
  }
  return out.sort();
}
