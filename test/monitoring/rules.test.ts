// monitoring/isolate.rules.yml with the real promtool (Debian's prometheus package): the file checks,
// its unit tests pass with a firing and a quiet case for every alert, every metric name is one the
// agent's registry exports, and every alert says what to do and links its section of docs/monitoring.md.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { APT_WAIT_MS } from '../support/apt.js';
import {
  exportedNames,
  metricNames,
  promtool,
  REPO,
  RULE_TESTS,
  RULES,
  rules,
  runPromtool,
  SCRAPE_NAMES,
} from './promql.js';

const alerts = rules().filter((r) => r.alert);
const records = new Set(rules().flatMap((r) => (r.record ? [r.record] : [])));

beforeAll(async () => {
  // Fetched once per version (test/support/apt-extract.ts). On a fresh machine its apt-get update may
  // queue behind the guests' preparation, which holds the suite's apt lock for minutes.
  const { version } = await promtool();
  console.log(`promtool from Debian's prometheus ${version}`);
}, APT_WAIT_MS);

describe('promtool', () => {
  it('checks the rules file', async () => {
    const r = await runPromtool(['check', 'rules', RULES]);
    expect(r.out).toContain(`SUCCESS: ${rules().length} rules found`);
    expect(r.code).toBe(0);
  });

  it('refuses a rule that does not parse (the check can fail)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'isolate-rules-'));
    const bad = join(dir, 'bad.yml');
    writeFileSync(
      bad,
      'groups:\n  - name: bad\n    rules:\n      - record: x:y:z\n        expr: sum(rate(isolate_reconciles_total[5m])\n',
    );
    const r = await runPromtool(['check', 'rules', bad]);
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/unclosed left parenthesis|parse error/);
  });

  it('passes the unit tests of monitoring/tests', async () => {
    const r = await runPromtool(['test', 'rules', RULE_TESTS]);
    expect(r.out).toContain('SUCCESS');
    expect(r.code, r.out).toBe(0);
  });
});

describe('unit tests cover every alert', () => {
  interface Case {
    alertname: string;
    exp_alerts: unknown[];
  }
  const tests = (
    parse(readFileSync(RULE_TESTS, 'utf8')) as {
      tests: { input_series: { series: string }[]; alert_rule_test?: Case[] }[];
    }
  ).tests;
  const cases = tests.flatMap((t) => t.alert_rule_test ?? []);

  it.each(alerts.map((a) => a.alert!))('%s fires on some input and stays quiet on another', (name) => {
    const own = cases.filter((c) => c.alertname === name);
    expect(
      own.some((c) => c.exp_alerts.length > 0),
      `${name}: no firing case`,
    ).toBe(true);
    expect(
      own.some((c) => c.exp_alerts.length === 0),
      `${name}: no quiet case`,
    ).toBe(true);
  });

  it('tests no alert the rules do not have', () => {
    const known = new Set(alerts.map((a) => a.alert));
    expect(cases.map((c) => c.alertname).filter((n) => !known.has(n))).toEqual([]);
  });

  it('feeds only series the agent exports (or up)', async () => {
    const exported = await exportedNames();
    const fed = tests.flatMap((t) =>
      t.input_series.map((s) => /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(s.series)![0]),
    );
    expect(fed.length).toBeGreaterThan(20);
    expect(fed.filter((n) => !exported.has(n) && !SCRAPE_NAMES.has(n))).toEqual([]);
  });
});

describe('the rules', () => {
  it('use only metric names the agent exports, their own records and up', async () => {
    const exported = await exportedNames();
    const used = rules().flatMap((r) =>
      [...metricNames(r.expr)].map((n) => ({ n, rule: r.record ?? r.alert })),
    );
    expect(used.length).toBeGreaterThan(20);
    expect(used.filter(({ n }) => !exported.has(n) && !records.has(n) && !SCRAPE_NAMES.has(n))).toEqual([]);
  });

  it("select the agent's scrape job for names any exporter serves (up, process_*)", () => {
    for (const r of rules())
      for (const n of metricNames(r.expr))
        if (n === 'up' || n.startsWith('process_'))
          expect(r.expr, `${r.alert ?? r.record}: ${n}`).toMatch(new RegExp(`${n}\\{[^}]*job="isolate"`));
  });

  it('name records level:metric:operation', () => {
    for (const r of records) expect(r).toMatch(/^[a-z_]+:isolate_[a-z0-9_]+:[a-z0-9_]+$/);
  });

  it.each(alerts.map((a) => [a.alert!, a] as const))(
    '%s has a severity, a for, and says what to do',
    (name, a) => {
      const rule = a as unknown as {
        for?: string;
        labels?: { severity?: string };
        annotations?: { summary?: string; description?: string; runbook_url?: string };
      };
      expect(['critical', 'warning']).toContain(rule.labels?.severity);
      expect(rule.for, `${name}: for`).toMatch(/^\d+[smh]$/);
      expect(rule.annotations?.summary).toMatch(/\S/);
      // What to run or change: a command in backquotes, or a named fix.
      expect(rule.annotations?.description).toMatch(/`[^`]+`|replace|remove|check/i);
      const anchor = name.toLowerCase();
      expect(rule.annotations?.runbook_url).toBe(`docs/monitoring.md#${anchor}`);
      const headings = [
        ...readFileSync(join(REPO, 'docs/monitoring.md'), 'utf8').matchAll(/^#+ (.+)$/gm),
      ].map((m) => m[1]!.trim().toLowerCase().replace(/`/g, ''));
      expect(headings, `docs/monitoring.md has no section ${name}`).toContain(anchor);
    },
  );
});

describe('metricNames', () => {
  it('finds the selected names, not functions, labels, keywords or units', () => {
    expect([
      ...metricNames(
        'sum by (instance, job) (increase(isolate_drift_corrections_total{setting=~"cpu.*"}[1h] offset 5m)) > bool 3 and on (instance) up{job="isolate"} unless x:y:z * 1e3',
      ),
    ]).toEqual(['isolate_drift_corrections_total', 'up', 'x:y:z']);
    expect([...metricNames('absent(isolate_policy_valid) or vector(0)')]).toEqual(['isolate_policy_valid']);
    expect([
      ...metricNames('sum without (kind) (isolate_violations) / ignoring(kind) group_left count(up)'),
    ]).toEqual(['isolate_violations', 'up']);
  });
});
