// bench/damon.mjs: describing this machine's DAMON from its sysfs admin tree, pausing it in spans and
// always restoring it, and the per-span CPU report. Run against a copy of the admin tree's layout
// (the values are this VM's, read 2026-12-04), never the machine's own.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  describeDamon,
  kdamonds,
  parseSamples,
  parseSwitches,
  residentInRanges,
  spanReport,
  spans,
} from '../../bench/damon.mjs';

/** This VM's kdamond 0 as its admin tree lays it out (the files the bench reads). */
function adminTree(state: 'on' | 'off'): string {
  const admin = join(mkdtempSync(join(tmpdir(), 'isolate-damon-')), 'kdamonds');
  const files: Record<string, string> = {
    nr_kdamonds: '1',
    '0/state': state,
    '0/pid': '83',
    '0/contexts/nr_contexts': '1',
    '0/contexts/0/operations': 'paddr',
    '0/contexts/0/monitoring_attrs/intervals/sample_us': '500000',
    '0/contexts/0/monitoring_attrs/intervals/aggr_us': '5000000',
    '0/contexts/0/monitoring_attrs/nr_regions/min': '1024',
    '0/contexts/0/monitoring_attrs/nr_regions/max': '8192',
    '0/contexts/0/targets/nr_targets': '1',
    '0/contexts/0/targets/0/pid_target': '0',
    '0/contexts/0/targets/0/regions/nr_regions': '1',
    '0/contexts/0/targets/0/regions/0/start': '4294967296',
    '0/contexts/0/targets/0/regions/0/end': '7247757312',
    '0/contexts/0/schemes/nr_schemes': '1',
    '0/contexts/0/schemes/0/action': 'pageout',
  };
  for (const [f, v] of Object.entries(files)) {
    mkdirSync(dirname(join(admin, f)), { recursive: true });
    writeFileSync(join(admin, f), `${v}\n`);
  }
  return admin;
}

describe('describing DAMON', () => {
  it('names each kdamond, its state, operations, intervals, regions, range and schemes', () => {
    expect(describeDamon(adminTree('on'))).toBe(
      'DAMON: kdamond 0 on (paddr, sampling every 500 ms, aggregating every 5000 ms, 1024-8192 regions over 4.00-6.75 GiB, schemes: pageout)',
    );
    expect(kdamonds(adminTree('off'))[0]?.state).toBe('off');
  });
  it('says none where the kernel has no DAMON admin tree', () => {
    expect(describeDamon(join(tmpdir(), 'no-such-damon-admin'))).toBe('DAMON: none');
  });
});

describe("where a process's pages lie", () => {
  it("counts this process's resident pages as the kernel does, and those inside the given ranges", () => {
    const all = residentInRanges(process.pid, [[0, Number.MAX_SAFE_INTEGER]]);
    const vmRss = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) / 4;
    expect(all.resident).toBeGreaterThan(1000);
    expect(Math.abs(all.resident - vmRss) / vmRss).toBeLessThan(0.1);
    expect(all.inside).toBe(all.resident);
    expect(residentInRanges(process.pid, []).inside).toBe(0);
  });
});

describe('pausing DAMON in spans', () => {
  it('pauses a monitor that was on, logs each switch and leaves it on', async () => {
    const admin = adminTree('on');
    const log = join(dirname(admin), 'switches.log');
    await spans(0.02, 0.02, 2, log, admin);
    expect(readFileSync(join(admin, '0/state'), 'utf8')).toBe('on');
    expect(parseSwitches(readFileSync(log, 'utf8')).map((s) => s.state)).toEqual([
      'on',
      'off',
      'on',
      'off',
      'on',
    ]);
  });
  it('pauses from the start for a whole run when there is no span as found', async () => {
    const admin = adminTree('on');
    const log = join(dirname(admin), 'switches.log');
    const run = spans(0, 0.2, 1, log, admin);
    await new Promise((r) => setTimeout(r, 50));
    expect(readFileSync(join(admin, '0/state'), 'utf8')).toBe('off');
    await run;
    expect(readFileSync(join(admin, '0/state'), 'utf8')).toBe('on');
    expect(parseSwitches(readFileSync(log, 'utf8')).map((s) => s.state)).toEqual(['off', 'on']);
  });
  it('restores the monitors it paused when another one cannot be paused', async () => {
    const admin = adminTree('on');
    mkdirSync(join(admin, '1'));
    writeFileSync(join(admin, '1/state'), 'on\n');
    const run = spans(0.1, 0.1, 1, join(dirname(admin), 'l'), admin);
    // Before the pause: kdamond 1's state becomes something no write can change.
    await new Promise((r) => setTimeout(r, 20));
    rmSync(join(admin, '1/state'));
    mkdirSync(join(admin, '1/state'));
    await expect(run).rejects.toThrow(/EISDIR/);
    expect(readFileSync(join(admin, '0/state'), 'utf8')).toBe('on');
  });
  it('refuses when no monitor is on, changing nothing', async () => {
    const admin = adminTree('off');
    await expect(spans(0.02, 0.02, 1, join(dirname(admin), 'l'), admin)).rejects.toThrow(/nothing to pause/);
    expect(readFileSync(join(admin, '0/state'), 'utf8').trim()).toBe('off');
  });
});

describe('the per-span report', () => {
  // Two processes sampled every 10 s: "a" spends 6 ticks (0.6 % of a core) each 10 s while the
  // monitor is on and 3 (0.3 %) while it is paused; "b" always 4. A switch to off at 300 s.
  const lines: string[] = [];
  let a = 0;
  let b = 0;
  for (let t = 0; t <= 600; t += 10) {
    lines.push(`${1000 + t} a=${a},0,58000 b=${Math.floor(b / 2)},${Math.ceil(b / 2)},57000`);
    a += t < 300 ? 6 : 3;
    b += 4;
  }
  const samples = parseSamples(lines.join('\n'));
  const switches = parseSwitches('1000 on\n1300 off\n');

  it('gives each process its CPU in each span, the minute after a switch left out', () => {
    const { names, spans: rows } = spanReport(samples, switches, { windowS: 60 });
    expect(names).toEqual(['a', 'b']);
    expect(rows.map((r) => [r.state, r.from, r.to])).toEqual([
      ['on', 1060, 1290],
      ['off', 1360, 1600],
    ]);
    expect(rows[0]?.cpu.a).toBeCloseTo(0.6, 6);
    expect(rows[1]?.cpu.a).toBeCloseTo(0.3, 6);
    expect(rows[0]?.cpu.b).toBeCloseTo(0.4, 6);
    expect(rows[1]?.windows.a).toEqual({ min: expect.closeTo(0.3, 6), max: expect.closeTo(0.3, 6), n: 19 });
  });
  it('skips a sample line whose process has no numbers (a kernel thread has no resident size, a process gone)', () => {
    const s = parseSamples('1 k=5,3, x=\n11 k=9,5,');
    expect(s.map((x) => x.cpu)).toEqual([{ k: 8 }, { k: 14 }]);
  });
});
