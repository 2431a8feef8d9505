// CI smoke for the isolation benchmark (bench/isolation): one short guest run of all four arms, checking
// that the harness works end to end — every arm produces a histogram, isolate's plan is applied and
// rolled back around the isolated arms, nothing is left behind — never the latency numbers, which
// under TCG are emulation noise.
import { beforeAll, describe, expect, it } from 'vitest';
import { runGuestArms } from '../../bench/isolation/guest.js';
import { parseParams } from '../../bench/isolation/params.js';
import { buildReport, formatText, type Report } from '../../bench/isolation/report.js';
import { renderSvg } from '../../bench/isolation/svg.js';
import { CpuSet } from '../../src/model/cpuset.js';
import { ensureVmPrereqs } from './harness/index.js';
import { keepConsole } from './support/guest.js';

const params = parseParams(
  [
    '--guest',
    '--accel',
    'tcg',
    '--rate',
    '40',
    '--warmup',
    '0.5',
    '--duration',
    '1.5',
    '--batch-threads',
    '2',
  ],
  '/nonexistent',
);

describe('isolation benchmark, smoke run in a TCG guest', () => {
  let s: Record<string, string>;
  let report: Report;

  beforeAll(async () => {
    ensureVmPrereqs();
    const out = await runGuestArms(params, 'tcg');
    keepConsole('isolation-smoke', out.log);
    s = out.sections;
    if (!s['arms-done']) throw new Error(`the arms did not finish:\n${out.log.slice(-4000)}`);
    report = buildReport({
      sections: s,
      params,
      where: { kind: 'guest', accel: 'tcg', emulated: true, detail: 'smoke' },
      wallMs: out.wallMs,
    });
  });

  it('every arm produces a histogram of the requests it measured', () => {
    expect(report.arms.map((a) => [a.name, a.ok, a.error])).toEqual(
      ['alone', 'unisolated', 'isolated', 'strict'].map((n) => [n, true, undefined]),
    );
    for (const a of report.arms) {
      expect(a.percentiles!.count, a.name).toBe(Number(a.probe!.recorded));
      expect(a.percentiles!.count, a.name).toBeGreaterThan(0);
      expect(a.percentiles!.p50).toBeLessThanOrEqual(a.percentiles!.p99);
      expect(a.percentiles!.p99).toBeLessThanOrEqual(a.percentiles!.max);
      expect(a.ratioToAlone, a.name).toBeDefined();
    }
  });

  /** cpuset.cpus.effective and partition of a bench cgroup during an arm, from the guest's own files. */
  const cpus = (arm: string, cg: string) => {
    const line = report.arms
      .find((a) => a.name === arm)!
      .cpus.split('\n')
      .find((l) => l.startsWith(`${cg} `));
    const m = /cpus=(\S+).* partition=(\S+)/.exec(line ?? '');
    return { cpus: m?.[1] ?? '', partition: m?.[2] ?? '' };
  };

  it('runs the first two arms unconstrained and the isolated ones on the plan', () => {
    for (const arm of ['alone', 'unisolated']) expect(cpus(arm, '/isolate-bench-probe').cpus).toBe('all');
    for (const arm of ['isolated', 'strict']) {
      expect(s[`apply-${arm}-rc`]?.trim(), s[`apply-${arm}`]).toBe('0');
      const probe = cpus(arm, '/isolate-bench-probe');
      const batch = cpus(arm, '/isolate-bench-batch');
      expect(probe.partition).toBe('root');
      // One whole core of twoSocketSmt2 (siblings adjacent), never the reserved core 0 of a package.
      expect(['2-3', '6-7']).toContain(probe.cpus);
      const p = CpuSet.parse(probe.cpus);
      const b = CpuSet.parse(batch.cpus);
      expect(b.overlaps(p)).toBe(false);
      expect(b.size).toBe(6);
      expect(CpuSet.parse(cpus(arm, '/system.slice').cpus).overlaps(p)).toBe(false);
    }
  });

  it('rolls back after each isolated arm and leaves no cgroup behind', () => {
    for (const arm of ['isolated', 'strict'])
      expect(s[`rollback-${arm}-rc`]?.trim(), s[`rollback-${arm}`]).toBe('0');
    expect(s['cleanup-rollback']).toBeUndefined();
    expect(s.leftover?.trim()).toBe('');
  });

  it('reports the topology and renders text and a plot of every arm', () => {
    expect(report.topology.text).toMatch(/4 physical cores, 2 NUMA nodes/);
    expect((report.topology.json as { cpus: unknown[] }).cpus).toHaveLength(8);
    expect(formatText(report)).toMatch(/emulation noise/);
    expect([...renderSvg(report).matchAll(/data-arm="(\w+)"/g)].map((m) => m[1])).toEqual([
      'alone',
      'unisolated',
      'isolated',
      'strict',
    ]);
  });
});
