// monitoring/isolate-dashboard.json: every query parses (each goes into a generated rules file that the
// real promtool checks), selects only metrics the agent's registry exports, uses the data-source and
// host variables, and every panel is described in docs/monitoring.md.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { APT_WAIT_MS } from '../support/apt.js';
import { DASHBOARD, exportedNames, metricNames, promtool, REPO, runPromtool } from './promql.js';

// promtool is fetched before the tests: its apt-get update may queue behind the guests' preparation.
beforeAll(() => promtool(), APT_WAIT_MS);

interface Target {
  refId: string;
  expr: string;
  datasource?: { uid?: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  description?: string;
  datasource?: { type?: string; uid?: string };
  targets?: Target[];
}
interface Variable {
  type: string;
  name: string;
  query: string | { query: string };
  datasource?: { uid?: string };
  allValue?: string;
}
const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
  panels: Panel[];
  templating: { list: Variable[] };
};
const panels = dashboard.panels.filter((p) => p.type !== 'row');
const variables = dashboard.templating.list;

// What Grafana puts in for its variables when it queries: a value each could take.
const BUILTIN: Record<string, string> = { __rate_interval: '5m', __interval: '1m', __range: '6h' };
const VALUES: Record<string, string> = { instance: '.*', agent_job: 'isolate' };

/** A panel query as Prometheus receives it. */
function resolved(expr: string): string {
  return expr.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a: string | undefined, b: string | undefined) => {
    const name = (a ?? b)!;
    const value = BUILTIN[name] ?? VALUES[name];
    if (value === undefined)
      throw new Error(`the query ${expr} uses $${name}, which the dashboard does not define`);
    if (!(name in BUILTIN)) expect(variables.map((v) => v.name)).toContain(name);
    return value;
  });
}

// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, not a JS template.
const DATASOURCE = '${datasource}';

const queries = panels.flatMap((p) =>
  (p.targets ?? []).map((t) => ({ panel: p, target: t, expr: resolved(t.expr) })),
);

describe('the dashboard', () => {
  it('has a data-source variable and a host variable drawn from it', () => {
    const ds = variables.find((v) => v.type === 'datasource');
    expect(ds?.query).toBe('prometheus');
    const host = variables.find((v) => v.name === 'instance');
    expect(host?.type).toBe('query');
    expect(host?.datasource?.uid).toBe(`\${${ds!.name}}`);
    expect(host?.allValue).toBe(VALUES.instance);
  });

  it('queries through the data-source variable in every panel and target', () => {
    expect(panels.length).toBeGreaterThan(10);
    for (const p of panels) {
      expect(p.datasource?.uid, p.title).toBe(DATASOURCE);
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets!) expect(t.datasource?.uid, p.title).toBe(DATASOURCE);
    }
  });

  it('filters every isolate query by the host variable', () => {
    for (const { panel, target } of queries)
      for (const m of target.expr.matchAll(/\b(isolate_\w+|process_\w+)(\{[^}]*\})?/g)) {
        // The exclusive-CPU side of a join selects by the left side's hosts already.
        if (/\b(and|unless) on \([^)]*\) $/.test(target.expr.slice(0, m.index))) continue;
        expect(m[2] ?? '', `${panel.title}: ${m[0]}`).toContain('instance=~"$instance"');
      }
  });

  it('every query parses: promtool checks them as a generated rules file', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'isolate-dashboard-')), 'dashboard.rules.yml');
    const records = queries.map((q) => ({
      record: `dashboard:panel_${q.panel.id}:${q.target.refId.toLowerCase()}`,
      expr: q.expr,
    }));
    writeFileSync(file, stringify({ groups: [{ name: 'dashboard', rules: records }] }));
    const r = await runPromtool(['check', 'rules', file]);
    expect(r.out, r.out).toContain(`SUCCESS: ${records.length} rules found`);
    expect(r.code).toBe(0);
  });

  it('selects only metrics the agent exports (it needs no recording rule loaded)', async () => {
    const exported = await exportedNames();
    const used = queries.flatMap((q) =>
      [...metricNames(q.expr)].map((name) => ({ panel: q.panel.title, name })),
    );
    expect(used.length).toBeGreaterThanOrEqual(queries.length);
    expect(used.filter((u) => !exported.has(u.name))).toEqual([]);
    for (const v of variables.filter((x) => x.type === 'query')) {
      const q = typeof v.query === 'string' ? v.query : v.query.query;
      const m = /^label_values\((\w+),\s*\w+\)$/.exec(q);
      expect(m, q).not.toBeNull();
      expect(exported.has(m![1]!), q).toBe(true);
    }
  });

  it("reads process_* of the agent's scrape job only (any exporter serves them)", () => {
    for (const { panel, expr } of queries)
      for (const m of expr.matchAll(/\bprocess_\w+(\{[^}]*\})?/g))
        expect(m[1] ?? '', panel.title).toContain('job="isolate"');
  });

  it('docs/monitoring.md describes every panel in words', () => {
    const doc = readFileSync(join(REPO, 'docs/monitoring.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## The dashboard'));
    for (const p of panels) {
      const at = section.indexOf(`**${p.title}**`);
      expect(at, `docs/monitoring.md: no **${p.title}**`).toBeGreaterThan(0);
      expect(p.description, p.title).toMatch(/\w{3,}.*\w{3,}/);
    }
  });
});
