// docs/observability.md: the metrics table is what the agent's registry exports (names, types,
// labels), every isolate_* name written anywhere in the docs exists, the log-message table covers
// every message the source logs with the fields real runs emit, and the exit-code table matches the
// constants and the codes real runs return.
import { spawnSync } from 'node:child_process';
import { chownSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/agent/metrics.js';
import { EXIT } from '../../src/apply/engine.js';
import { EXIT_STATUS } from '../../src/model/finding.js';
import { CLI } from '../cli/run.js';
import { docTable, docText, expectDocSample, sampleIds } from '../support/doc-samples.js';
import { cli, hostWithPolicy, normalise, putProcesses, settleEffective, transcript } from './host.js';

const DOC = 'docs/observability.md';
const REPO = resolve(import.meta.dirname, '../..');
const checked = new Set<string>();
function sample(id: string, text: string): void {
  checked.add(id);
  expectDocSample(DOC, id, text);
}

const codeNames = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');

describe('metrics', () => {
  it('the table lists every isolate_* metric of the registry with its type and labels', async () => {
    const m = await createMetrics();
    const exported = m.registry
      .getMetricsAsArray()
      .filter((x) => x.name.startsWith('isolate_'))
      .map((x) => {
        const json = x as unknown as { name: string; type: string; labelNames?: string[] };
        return [json.name, json.type, [...(json.labelNames ?? [])].sort().join(',')];
      })
      .sort();
    const rows = docTable(DOC, 'Metrics')
      .map((r) => [codeNames(r[0]!)[0]!, r[1]!, codeNames(r[2]!).sort().join(',')])
      .sort();
    // prom-client names its types as Prometheus does: gauge, counter, histogram.
    expect(rows).toEqual(exported);
    // The rest of the registry is prom-client's process and Node.js metrics.
    for (const x of m.registry.getMetricsAsArray())
      if (!x.name.startsWith('isolate_')) expect(x.name).toMatch(/^(process|nodejs)_/);
  });

  it('every isolate_* name in README.md and docs/ is an exported metric (or an Ansible name, or a recording rule of monitoring/)', async () => {
    const m = await createMetrics();
    const names = new Set(m.registry.getMetricsAsArray().map((x) => x.name));
    // Role variables, modules and inventory names of ansible/ share the prefix.
    const ansible = new Set<string>();
    const walkAnsible = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walkAnsible(p);
        else for (const [n] of readFileSync(p, 'utf8').matchAll(/\bisolate_[a-z_]+[a-z]\b/g)) ansible.add(n);
      }
    };
    walkAnsible(join(REPO, 'ansible'));
    for (const n of names) expect(ansible.has(n), `ansible/ uses the metric name ${n}`).toBe(false);
    // Recording rules of monitoring/ name their metric in the middle (level:isolate_…:operation): a
    // name of those is the rule's, checked whole; any other colon-joined name is looked at part by part.
    const records = [
      ...readFileSync(join(REPO, 'monitoring/isolate.rules.yml'), 'utf8').matchAll(/record: (\S+)/g),
    ]
      .map((m) => m[1]!)
      .sort((a, b) => b.length - a.length);
    expect(records.length).toBeGreaterThan(5);
    const docs = ['README.md', ...readdirSync(join(REPO, 'docs')).map((f) => `docs/${f}`)];
    for (const d of docs.filter((f) => f.endsWith('.md'))) {
      const text = records.reduce((t, r) => t.replaceAll(r, ''), docText(d));
      for (const [, name] of text.matchAll(/\b(isolate_[a-z_]+[a-z])\b/g)) {
        const base = name!.replace(/_(bucket|sum|count)$/, '');
        if (ansible.has(name!)) continue;
        expect(names.has(name!) || names.has(base), `${d}: ${name} is not a metric`).toBe(true);
      }
    }
  });

  it('the textfile of a first agent round (sample) has exactly the documented metrics', () => {
    const root = hostWithPolicy('qemu-2s-smt2');
    const file = join(root, 'var/lib/prometheus/node-exporter/isolate.prom');
    mkdirSync(join(file, '..'), { recursive: true });
    const r = cli(root, ['agent', '--once', '--metrics-textfile', file]);
    expect(r.code).toBe(1); // WARNING: the fixture host runs no Kafka
    const text = readFileSync(file, 'utf8');
    const names = [...text.matchAll(/^# TYPE (isolate_\S+) /gm)].map((x) => x[1]).sort();
    expect(names).toEqual(
      docTable(DOC, 'Metrics')
        .map((row) => codeNames(row[0]!)[0])
        .sort(),
    );
    // The isolate_* part, buckets left out and timings fixed.
    const shown = text
      .split('\n')
      .filter((l) => /^(# (HELP|TYPE) )?isolate_/.test(l) && !l.includes('_bucket{'))
      .map((l) =>
        l
          .replace(/^(isolate_reconcile_duration_seconds_sum) .*/, '$1 0.043')
          .replace(/^(isolate_last_success_timestamp_seconds) .*/, '$1 1764504000.123'),
      )
      .join('\n');
    sample('metrics', normalise(shown, root));
  });
});

describe('logs', () => {
  // Every log call in src/: the quoted strings of its first two arguments (level, message).
  const messages = new Map<string, Set<string>>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts')) {
        const src = readFileSync(p, 'utf8');
        for (const call of src.matchAll(/\blog\(\s*([^{]*?),?\s*(?:\{|\))/g)) {
          const strings = [...call[1]!.matchAll(/'([^']*)'/g)].map((s) => s[1]!);
          const levels = strings.filter((s) => ['debug', 'info', 'warn', 'error', 'OK'].includes(s));
          for (const msg of strings.filter((s) => !levels.includes(s))) {
            messages.set(msg, new Set(levels.filter((l) => l !== 'OK')));
          }
        }
      }
    }
  };
  walk(join(REPO, 'src'));
  const table = docTable(DOC, 'Log messages').map((r) => ({
    msg: codeNames(r[0]!)[0]!,
    levels: new Set(codeNames(r[1]!)),
    fields: codeNames(r[2]!),
  }));

  it('the table has every message the source logs, at its levels', () => {
    expect(messages.size).toBeGreaterThan(10);
    expect(table.map((t) => t.msg).sort()).toEqual([...messages.keys()].sort());
    for (const t of table) {
      const want = messages.get(t.msg)!;
      if (want.size > 0) expect([...t.levels].sort(), t.msg).toEqual([...want].sort());
    }
  });

  /** JSON log lines of a run, by message: the union of their field names. */
  function fieldsOf(out: string, into: Map<string, Set<string>>): void {
    for (const line of out.split('\n').filter((l) => l.startsWith('{'))) {
      const j = JSON.parse(line) as Record<string, unknown>;
      const set = into.get(j.msg as string) ?? new Set<string>();
      for (const k of Object.keys(j)) if (!['level', 'time', 'pid', 'name', 'msg'].includes(k)) set.add(k);
      into.set(j.msg as string, set);
    }
  }

  it('the fields of each message are those real runs log (apply, a failed apply, rollback, agent)', () => {
    const seen = new Map<string, Set<string>>();
    const json = { ISOLATE_LOG: 'json' };
    const root = hostWithPolicy('qemu-2s-smt2');
    const agent = cli(root, ['agent', '--once'], json);
    sample('agent-first-round', transcript(root, 'isolate agent --once', agent, { code: true }));
    fieldsOf(agent.stdout, seen);
    fieldsOf(cli(root, ['rollback'], json).stderr, seen);
    fieldsOf(cli(root, ['apply', '--yes'], json).stderr, seen);
    // A write refused by the kernel (here: file permissions of an unprivileged run) fails the step.
    const denied = hostWithPolicy('qemu-2s-smt2');
    spawnSync('chown', ['-R', '65534:65534', denied]);
    chownSync(join(denied, 'sys/fs/cgroup/hadoop-yarn/cpuset.mems'), 0, 0);
    const failed = spawnSync(process.execPath, [CLI, 'apply', '--yes', '--root', denied], {
      encoding: 'utf8',
      env: { ...process.env, ISOLATE_LOG: 'json' },
      ...(process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {}),
    });
    expect(failed.status).toBe(EXIT.rolledBack);
    fieldsOf(failed.stderr, seen);
    expect(seen.size).toBeGreaterThanOrEqual(8);
    for (const [msg, fields] of seen) {
      const row = table.find((t) => t.msg === msg);
      expect(row, `log message "${msg}" is not in the table`).toBeDefined();
      const documented = row!.fields.map((f) => f.replace(/\?$/, ''));
      const required = row!.fields.filter((f) => !f.endsWith('?'));
      expect(
        [...fields].filter((f) => !documented.includes(f)),
        `${msg}: undocumented fields`,
      ).toEqual([]);
      expect(
        required.filter((f) => !fields.has(f)),
        `${msg}: documented fields not logged`,
      ).toEqual([]);
    }
  });
});

describe('exit codes', () => {
  const rows = docTable(DOC, 'Exit codes');
  const row = (name: string) => {
    const r = rows.find((x) => x[0] === name);
    if (!r) throw new Error(`no row ${name}`);
    return r.slice(1);
  };

  it('monitoring commands: the plugin codes of src/model/finding.ts', () => {
    const cells = row('`check`, `raid check`, `raid parse --check`, `agent --once`');
    for (const [status, code] of Object.entries(EXIT_STATUS))
      expect(cells[code]).toMatch(new RegExp(`^${status}\\b`));
  });

  it('apply and rollback: the codes of src/apply/engine.ts', () => {
    const cells = row('`apply`');
    expect(cells[EXIT.refused]).toMatch(/^refused before any write/);
    expect(cells[EXIT.rolledBack]).toMatch(/every write .* undone/);
    expect(cells[EXIT.rollbackIncomplete]).toMatch(/isolate rollback/);
    // rollback has nothing to roll back to: a failed undo is incomplete (3), never 2.
    const undo = row('`rollback`');
    expect(undo[EXIT.refused]).toMatch(/^refused before any undo/);
    expect(undo[EXIT.rolledBack]).toBe('—');
    expect(undo[EXIT.rollbackIncomplete]).toMatch(/did not complete.*isolate rollback/);
  });

  it('the codes real runs return', () => {
    const root = hostWithPolicy('qemu-2s-smt2');
    const code = (args: string[]) => cli(root, args).code;
    expect(code(['plan', '--dry-run', '--detailed-exitcode'])).toBe(2);
    expect(code(['plan', '--dry-run', '--policy', join(root, 'nope.yaml')])).toBe(1);
    expect(code(['check', '--policy', join(root, 'nope.yaml')])).toBe(EXIT_STATUS.UNKNOWN);
    putProcesses(root, [
      { pid: 3300, name: 'java', cgroup: '/hadoop-yarn/c1', threads: [3300], cpus: '0-7' },
    ]);
    settleEffective(root, '0-7');
    expect(code(['check'])).toBe(EXIT_STATUS.CRITICAL);
    expect(code(['apply', '--yes'])).toBe(0);
    expect(code(['plan', '--dry-run', '--detailed-exitcode'])).toBe(0);
    expect(code(['rollback'])).toBe(0);
    expect(
      row('`plan --detailed-exitcode`')
        .slice(0, 3)
        .map((c) => c.split(' ')[0]),
    ).toEqual(['no', 'error', 'changes']);
  });
});

describe('docs/observability.md: coverage', () => {
  it('every sample in the doc is produced by this file', () => {
    expect(sampleIds(DOC).filter((i) => !checked.has(i))).toEqual([]);
  });
});
