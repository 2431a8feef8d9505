// CLI conventions users of kubectl/terraform/systemctl expect: global options before or after the
// subcommand, --version, and output that always ends with a newline.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolate } from './run.js';

const TREE = join(import.meta.dirname, '../fixtures/sysfs/qemu-2s-smt2');
const PKG = JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8'));

describe('isolate CLI conventions', () => {
  it('--root works before and after the subcommand, with the same result', () => {
    const before = isolate(['--root', TREE, 'topology', '--json']);
    const after = isolate(['topology', '--json', '--root', TREE]);
    expect(before.code, before.stderr).toBe(0);
    expect(after.code, after.stderr).toBe(0);
    expect(JSON.parse(before.stdout).online).toEqual(JSON.parse(after.stdout).online);
    const plan = isolate(['--root', TREE, 'plan', '--dry-run', '--json']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(JSON.parse(plan.stdout).allocation.kafka.class).toBe('exclusive');
  });

  it('a global --root that does not exist is refused in one line', () => {
    const r = isolate(['--root', '/no/such/root', 'topology']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--root \/no\/such\/root: no such directory/);
  });

  it('--version prints the package version', () => {
    const r = isolate(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${PKG.version}\n`);
  });

  it.each([
    [['topology', '--root', TREE]],
    [['topology', '--json', '--root', TREE]],
    [['plan', '--dry-run', '--root', TREE]],
    [['plan', '--dry-run', '--json', '--root', TREE]],
    [['--help']],
    [['plan', '--help']],
  ])('output of %j ends with a newline', (args) => {
    const r = isolate(args);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.length).toBeGreaterThan(0);
    expect(r.stdout.endsWith('\n')).toBe(true);
  });
});

describe('dist/main.cjs, the bundle every run loads', () => {
  const BUNDLE = join(import.meta.dirname, '../../dist/main.cjs');
  it('is ASCII: V8 keeps its source (for the life of the process) one byte a character, not two', () => {
    // A single character above U+007F anywhere, a comment included, doubles the source string's heap.
    const text = readFileSync(BUNDLE, 'latin1');
    expect(text.length).toBeGreaterThan(100_000);
    expect(text.match(/[^\x00-\x7f][^\n]{0,40}/g) ?? []).toEqual([]);
    // Escaped in strings, still printed as written.
    expect(isolate(['plan', '--dry-run', '--root', TREE]).stdout).toMatch(/→/);
  });

  it('leaves out what prom-client loads but isolate never uses: no https, tls or zlib in the agent', () => {
    // prom-client's Pushgateway requires http, https (tls, crypto) and zlib when prom-client loads.
    const text = readFileSync(BUNDLE, 'utf8');
    expect(text).toMatch(/prom-client Pushgateway is not bundled with isolate/);
    expect(text.match(/require\("(node:)?(https|tls|zlib)"\)/g) ?? []).toEqual([]);
    expect(text).toMatch(/require\("(node:)?http"\)/); // the agent's own /metrics server
  });

  it("times GCs with prom-client's 'gc' observer, never with V8's GCProfiler", () => {
    // A stopped GCProfiler keeps recording every GC until a full GC frees it; one stopped per scrape
    // piled up (src/agent/metrics.ts).
    const text = readFileSync(BUNDLE, 'utf8');
    expect(text).toMatch(/entryTypes:\s*\["gc"\]/);
    expect(text).not.toMatch(/GCProfiler/);
  });
});
