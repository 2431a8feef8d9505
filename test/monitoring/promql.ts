// What the monitoring tests need to know about PromQL and the files of monitoring/: the metric names an
// expression selects, the names isolate's registry exports, and running the real promtool on them.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { createMetrics } from '../../src/agent/metrics.js';
import { debianPackageFile } from '../support/apt-extract.js';

export const REPO = resolve(import.meta.dirname, '../..');
export const RULES = join(REPO, 'monitoring/isolate.rules.yml');
export const RULE_TESTS = join(REPO, 'monitoring/tests/isolate.rules.test.yml');
export const DASHBOARD = join(REPO, 'monitoring/isolate-dashboard.json');

// The language's own words, which look like names: operators, modifiers, grouping and number words.
const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'atan2',
  'inf',
  'nan',
  'start',
  'end',
]);

/**
 * The metric names an expression selects. Strings, label matchers, ranges and grouping label lists are
 * taken out first; of the identifiers left, those followed by `(` are functions or aggregations, and
 * those right after a digit are units (`5m`, `1e3`).
 */
export function metricNames(expr: string): Set<string> {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const m of bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const name = m[0];
    const before = bare[m.index - 1] ?? '';
    const after = bare.slice(m.index + name.length).trimStart()[0];
    if (after === '(' || /[0-9.]/.test(before) || KEYWORDS.has(name.toLowerCase())) continue;
    names.add(name);
  }
  return names;
}

/**
 * Every series name isolate's agent exports, from its registry (as test/docs/observability.test.ts
 * reads it): a histogram's series are its _bucket, _sum and _count.
 */
export async function exportedNames(): Promise<Set<string>> {
  const m = await createMetrics();
  const names = new Set<string>();
  for (const x of m.registry.getMetricsAsArray()) {
    const { name, type } = x as unknown as { name: string; type: string };
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(name + s);
    else names.add(name);
  }
  return names;
}

/** Prometheus adds `up` to every scrape target itself; it is the only name the rules use that isolate does not export. */
export const SCRAPE_NAMES = new Set(['up']);

interface RuleFile {
  groups: { name: string; rules: { record?: string; alert?: string; expr: string }[] }[];
}

export function rules(file = RULES): RuleFile['groups'][number]['rules'] {
  return (parse(readFileSync(file, 'utf8')) as RuleFile).groups.flatMap((g) => g.rules);
}

let promtoolPath: Promise<{ path: string; version: string }> | undefined;

/** Debian's promtool (package prometheus), unpacked without installing the server. */
export function promtool(): Promise<{ path: string; version: string }> {
  promtoolPath ??= debianPackageFile('prometheus', 'usr/bin/promtool');
  return promtoolPath;
}

/** Runs promtool; its output and exit status, never a throw. */
export async function runPromtool(args: string[], cwd = REPO): Promise<{ code: number; out: string }> {
  const { path } = await promtool();
  try {
    const { stdout } = await promisify(execFile)(path, args, { cwd, encoding: 'utf8' });
    return { code: 0, out: stdout };
  } catch (e) {
    const x = e as { code?: number | string; stdout?: string; stderr?: string };
    return { code: typeof x.code === 'number' ? x.code : -1, out: `${x.stdout ?? ''}${x.stderr ?? ''}` };
  }
}
