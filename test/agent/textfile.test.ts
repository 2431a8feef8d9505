// `isolate agent --metrics-textfile`: a file node_exporter (its own user, its own process_* metrics) can
// read and serve — mode 0644 whatever the umask, isolate_* alone — and a path it would never read, or
// the agent could never write, refused at start in one line.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/agent/metrics.js';
import { checkTextfile, TEXTFILE_MODE, textfileWriter } from '../../src/agent/textfile.js';
import type { LogFn } from '../../src/model/log.js';
import { cli, hostWithPolicy } from '../docs/host.js';

const scratch = () => mkdtempSync(join(tmpdir(), 'isolate-textfile-'));
const names = (text: string) => [...new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!))];

describe('the textfile', () => {
  const umask = process.umask();
  afterEach(() => {
    process.umask(umask);
  });

  it('is written 0644 under the unit’s UMask=0077, replacing an older file’s mode too', async () => {
    process.umask(0o077);
    const m = await createMetrics();
    m.policyValid(true);
    const file = join(scratch(), 'isolate.prom');
    const logs: unknown[] = [];
    const write = textfileWriter(file, m, (...a) => logs.push(a));
    await write();
    expect(statSync(file).mode & 0o777).toBe(TEXTFILE_MODE);
    expect(TEXTFILE_MODE).toBe(0o644);
    chmodSync(file, 0o600);
    await write();
    expect(statSync(file).mode & 0o777).toBe(0o644);
    expect(logs).toEqual([]);
    // No temporary file left for the collector to find.
    expect(readdirSync(join(file, '..'))).toEqual(['isolate.prom']);
  });

  it("holds every isolate_* metric and none of prom-client's process_* and nodejs_*, which /metrics keeps", async () => {
    const m = await createMetrics();
    m.policyValid(true);
    m.failures(0);
    const file = join(scratch(), 'isolate.prom');
    await textfileWriter(file, m, () => {})();
    const text = readFileSync(file, 'utf8');
    const served = await m.registry.metrics();
    const own = names(served).filter((n) => n.startsWith('isolate_'));
    expect(own.length).toBeGreaterThan(10);
    expect(names(text).sort()).toEqual(own.sort());
    expect(text).not.toMatch(/^(# (HELP|TYPE) )?(process|nodejs)_/m);
    expect(text).toMatch(/^isolate_policy_valid 1$/m);
    // The endpoint still serves the agent's own CPU and memory.
    expect(served).toMatch(/^process_cpu_seconds_total /m);
    expect(served).toMatch(/^process_resident_memory_bytes /m);
    expect(served).toMatch(/^nodejs_heap_size_used_bytes /m);
    expect(served).toMatch(/^isolate_policy_valid 1$/m);
  });

  it('that cannot be written is logged once per error, retried, and its recovery logged', async () => {
    const m = await createMetrics();
    const dir = join(scratch(), 'gone');
    const file = join(dir, 'isolate.prom');
    const logs: [string, string, Record<string, unknown>?][] = [];
    const log: LogFn = (level, msg, fields) => logs.push([level, msg, fields]);
    const write = textfileWriter(file, m, log);
    await write();
    await write();
    expect(logs).toHaveLength(1);
    expect(logs[0]![0]).toBe('warn');
    expect(logs[0]![1]).toBe('metrics textfile not written');
    expect(logs[0]![2]).toMatchObject({ file, error: expect.stringContaining(`${dir} does not exist`) });
    mkdirSync(dir);
    await write();
    expect(logs.map((l) => l[1])).toEqual(['metrics textfile not written', 'metrics textfile written again']);
    expect(readFileSync(file, 'utf8')).toMatch(/^# TYPE isolate_policy_valid gauge$/m);
  });
});

describe('--metrics-textfile FILE', () => {
  it('is refused unless named *.prom (the collector reads no other name)', () => {
    const dir = scratch();
    for (const f of ['isolate.txt', 'isolate.prom.tmp', '.prom'])
      expect(() => checkTextfile(join(dir, f))).toThrow(
        /reads only files named \*\.prom; name it e\.g\. .*\/isolate\.prom$/,
      );
    expect(() => checkTextfile(join(dir, 'isolate.prom'))).not.toThrow();
  });

  it("is refused when its directory is missing, naming Debian's textfile directory", () => {
    expect(() => checkTextfile(join(scratch(), 'nope/isolate.prom'))).toThrow(
      /^--metrics-textfile .*nope\/isolate\.prom: directory .*nope does not exist; give node_exporter's --collector\.textfile\.directory \(Debian: \/var\/lib\/prometheus\/node-exporter\)$/,
    );
    const file = join(scratch(), 'isolate.prom');
    expect(() => checkTextfile(join(file, 'isolate.prom'))).toThrow(/does not exist/);
  });

  it('makes `isolate agent --once` write a 0644 file of isolate_* only', () => {
    const root = hostWithPolicy('qemu-2s-smt2');
    const file = join(root, 'var/lib/prometheus/node-exporter/isolate.prom');
    mkdirSync(join(file, '..'), { recursive: true });
    const r = cli(root, ['agent', '--once', '--metrics-textfile', file]);
    expect(r.code, r.stderr).toBe(1); // WARNING: the fixture host runs no Kafka
    expect(r.stderr).toBe('');
    expect(statSync(file).mode & 0o777).toBe(0o644);
    const text = readFileSync(file, 'utf8');
    expect(names(text).length).toBeGreaterThan(10);
    expect(names(text).filter((n) => !n.startsWith('isolate_'))).toEqual([]);
  });

  it('stops `isolate agent` before its first round when the name is wrong, in one line', () => {
    const root = hostWithPolicy('qemu-2s-smt2');
    const r = cli(root, ['agent', '--once', '--metrics-textfile', join(root, 'etc/isolate/isolate.txt')]);
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      /--metrics-textfile .*isolate\.txt: node_exporter's textfile collector reads only files named \*\.prom/,
    );
    // Nothing was applied: the fixture's cgroup files are as the fixture wrote them.
    expect(cli(root, ['plan', '--dry-run', '--detailed-exitcode']).code).toBe(2);
  });
});
