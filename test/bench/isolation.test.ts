// The isolation benchmark's host-side logic: percentiles, ratios, the verdict, the plot, arguments,
// accelerator choice and the real-host refusals. No guest is booted here (see test/vm/isolation-smoke).
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chooseAccel } from '../../bench/isolation/accel.js';
import { type Histogram, percentiles, spectrum, valueAt } from '../../bench/isolation/histogram.js';
import { hostProblems } from '../../bench/isolation/host.js';
import { parseParams } from '../../bench/isolation/params.js';
import { benchPolicy } from '../../bench/isolation/policy.js';
import { buildReport, formatText } from '../../bench/isolation/report.js';
import { renderSvg } from '../../bench/isolation/svg.js';
import { parsePolicy } from '../../src/policy/load.js';

/** n requests at each of the given latencies (ns), as exact one-value buckets. */
function hist(pairs: Array<[ns: number, n: number]>): Histogram {
  return { buckets: pairs.map(([ns, n]) => [ns, ns, n]), maxNs: Math.max(...pairs.map(([ns]) => ns)) };
}

function probeOut(label: string, h: Histogram): string {
  return JSON.stringify({
    label,
    net: 2,
    handlers: 4,
    conns: 8,
    lost: 0,
    maxNs: h.maxNs,
    buckets: h.buckets,
  });
}

describe('histogram', () => {
  const h = hist([
    [100, 980],
    [1000, 10],
    [5000, 9],
    [90_000, 1],
  ]);
  it('reports percentiles as the bucket bound reaching the rank, and the exact max', () => {
    expect(percentiles(h)).toEqual({ count: 1000, p50: 100, p90: 100, p99: 1000, p999: 5000, max: 90_000 });
  });
  it('never reports a percentile below the true value inside a wide bucket', () => {
    const wide: Histogram = { buckets: [[1000, 1999, 10]], maxNs: 1500 };
    expect(valueAt(wide, 0.5)).toBe(1500); // clamped to the max, not the bucket's top
    expect(
      valueAt(
        {
          buckets: [
            [0, 9, 1],
            [1000, 1999, 1],
          ],
          maxNs: 1800,
        },
        0.5,
      ),
    ).toBe(9);
  });
  it('is empty-safe and the spectrum ends at q=1 on the max', () => {
    expect(percentiles({ buckets: [], maxNs: 0 }).p99).toBe(0);
    expect(spectrum(h).at(-1)).toEqual({ q: 1, ns: 90_000 });
  });
});

const params = parseParams(['--guest'], '/tmp/x');
const sections = (over: Record<string, string> = {}) => ({
  topology: 'core 2 cpus 2-3',
  'topology-json': '{"cpus":[]}',
  'probe-alone': probeOut(
    'alone',
    hist([
      [1_000_000, 985],
      [2_000_000, 15],
    ]),
  ),
  'probe-alone-rc': '0\n',
  'probe-unisolated': probeOut(
    'unisolated',
    hist([
      [1_000_000, 900],
      [8_000_000, 100],
    ]),
  ),
  'probe-unisolated-rc': '0\n',
  'apply-isolated-rc': '0',
  'probe-isolated': probeOut(
    'isolated',
    hist([
      [1_000_000, 985],
      [2_200_000, 15],
    ]),
  ),
  'probe-isolated-rc': '0\n',
  'apply-strict-rc': '0',
  'probe-strict': probeOut(
    'strict',
    hist([
      [1_000_000, 985],
      [3_000_000, 15],
    ]),
  ),
  'probe-strict-rc': '0\n',
  'arms-done': 'ok',
  ...over,
});

describe('report', () => {
  it('gives ratios to alone and judges the isolated arms against 1.2×', () => {
    const r = buildReport({
      sections: sections(),
      params,
      where: { kind: 'guest', accel: 'kvm', emulated: false, detail: 'kvm' },
      wallMs: 1000,
    });
    expect(r.arms.map((a) => a.ok)).toEqual([true, true, true, true]);
    expect(r.verdict.unisolatedP99Ratio).toBe(4);
    expect(r.verdict.isolated).toEqual([
      { arm: 'isolated', p99Ratio: 1.1, meetsTarget: true },
      { arm: 'strict', p99Ratio: 1.5, meetsTarget: false },
    ]);
    expect(r.verdict.meaningful).toBe(true);
    const text = formatText(r);
    expect(text).toMatch(/unisolated p99 4\.00× alone/);
    expect(text).toMatch(/strict p99 1\.50× alone \(misses the target\)/);
    expect(text).not.toMatch(/TCG/);
  });

  it('marks an emulated run as noise', () => {
    const r = buildReport({
      sections: sections(),
      params,
      where: { kind: 'guest', accel: 'tcg', emulated: true, detail: 'tcg' },
      wallMs: 1,
    });
    expect(r.verdict.meaningful).toBe(false);
    expect(formatText(r)).toMatch(/TCG emulation: every number below is emulation noise/);
    expect(renderSvg(r)).toMatch(/TCG emulation/);
  });

  it('fails an arm whose apply or probe failed, or that recorded nothing', () => {
    const r = buildReport({
      sections: sections({
        'apply-isolated-rc': '1',
        'apply-isolated': 'isolate: cannot fit',
        'probe-strict-rc': '1\nconnect: Network is unreachable',
        'probe-unisolated': probeOut('unisolated', { buckets: [], maxNs: 0 }),
      }),
      params,
      where: { kind: 'guest', accel: 'tcg', emulated: true, detail: 'tcg' },
      wallMs: 1,
    });
    expect(r.arms.map((a) => a.ok)).toEqual([true, false, false, false]);
    expect(r.arms[2]!.error).toMatch(/isolate apply failed: isolate: cannot fit/);
    expect(r.arms[3]!.error).toMatch(/probe failed \(exit 1/);
    expect(r.verdict.isolated).toEqual([]);
  });

  it('rejects a garbled histogram instead of reading zeros', () => {
    expect(() =>
      buildReport({
        sections: sections({ 'probe-alone': '{"maxNs":1,"buckets":[[5,1,3]]}' }),
        params,
        where: { kind: 'guest', emulated: true, detail: '' },
        wallMs: 1,
      }),
    ).toThrow(/bad bucket/);
  });

  it('plots one line per arm that has a histogram', () => {
    const r = buildReport({
      sections: sections({ 'probe-strict-rc': '1' }),
      params,
      where: { kind: 'host', emulated: false, detail: 'host' },
      wallMs: 1,
    });
    const svg = renderSvg(r);
    expect([...svg.matchAll(/data-arm="(\w+)"/g)].map((m) => m[1])).toEqual([
      'alone',
      'unisolated',
      'isolated',
    ]);
    expect(svg).toMatch(/^<svg /);
    expect(svg).toMatch(/99\.9%/);
  });
});

describe('arguments', () => {
  it('needs exactly one of --guest and --host-cgroup-root', () => {
    expect(() => parseParams([], 'o')).toThrow(/exactly one/);
    expect(() => parseParams(['--guest', '--host-cgroup-root', '/sys/fs/cgroup'], 'o')).toThrow(
      /exactly one/,
    );
    expect(parseParams(['--host-cgroup-root', '/sys/fs/cgroup'], 'o').where).toEqual({
      kind: 'host',
      cgroupRoot: '/sys/fs/cgroup',
    });
  });
  it('keeps the arms in their fixed order and insists on the baseline', () => {
    expect(parseParams(['--guest', '--arms', 'strict,alone'], 'o').arms).toEqual(['alone', 'strict']);
    expect(() => parseParams(['--guest', '--arms', 'strict'], 'o')).toThrow(/baseline/);
    expect(() => parseParams(['--guest', '--arms', 'alone,fast'], 'o')).toThrow(/unknown arm fast/);
  });
  it('refuses shell words in the probe options and nonsense numbers', () => {
    expect(() => parseParams(['--guest', '--probe-opts=--net 2; rm -rf /'], 'o')).toThrow(/only options/);
    expect(() => parseParams(['--guest', '--rate', '0'], 'o')).toThrow(/--rate/);
    expect(parseParams(['--guest', '--probe-opts=--handlers 8'], 'o').probeOpts).toBe('--handlers 8');
  });
});

describe('the bench policies', () => {
  it('are valid isolate policies: probe exclusive, batch batch, strict as asked', () => {
    for (const strict of [false, true]) {
      const p = parsePolicy(benchPolicy({ strict, cores: 2 }), 'bench');
      expect(p.strict).toBe(strict);
      expect(p.workloads.map((w) => [w.name, w.class])).toEqual([
        ['bench-probe', 'exclusive'],
        ['bench-batch', 'batch'],
      ]);
    }
  });
});

describe('accelerator choice', () => {
  const probes = (flags: string, dev: boolean, boots: boolean) => ({
    cpuinfo: () => `processor\t: 0\nflags\t\t: fpu sse2 ${flags}\n`,
    kvmAccessible: () => dev,
    bootsUnderKvm: async () => boots,
  });
  it('uses KVM only when a test guest really boots under it', async () => {
    expect((await chooseAccel('auto', probes('vmx', true, true))).accel).toBe('kvm');
    expect(await chooseAccel('auto', probes('svm', true, false))).toMatchObject({
      accel: 'tcg',
      reason: /hangs/,
    });
    expect(await chooseAccel('auto', probes('svm', false, true))).toMatchObject({
      accel: 'tcg',
      reason: /dev\/kvm/,
    });
    expect(await chooseAccel('auto', probes('', true, true))).toMatchObject({
      accel: 'tcg',
      reason: /vmx\/svm/,
    });
    expect((await chooseAccel('tcg', probes('vmx', true, true))).accel).toBe('tcg');
  });
});

describe('real-host refusals', () => {
  function fakeHost(opts: { controllers?: string; existing?: string[]; journal?: string } = {}) {
    const root = mkdtempSync(join(tmpdir(), 'bench-host-'));
    const cg = join(root, 'sys/fs/cgroup');
    mkdirSync(cg, { recursive: true });
    writeFileSync(join(cg, 'cgroup.controllers'), opts.controllers ?? 'cpuset cpu io memory pids\n');
    for (const d of opts.existing ?? []) mkdirSync(join(cg, d));
    if (opts.journal) {
      mkdirSync(join(root, 'var/lib/isolate'), { recursive: true });
      writeFileSync(join(root, 'var/lib/isolate/journal.json'), opts.journal);
    }
    const mountinfo = '35 24 0:30 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n';
    return { cgroupRoot: cg, root, uid: 0, mountinfo };
  }
  it('accepts a clean host', () => {
    expect(hostProblems(fakeHost())).toEqual([]);
    expect(hostProblems(fakeHost({ journal: '{"state":"rolled-back"}' }))).toEqual([]);
  });
  it('refuses when its cgroups exist, isolate is applied, cpuset is missing, or not root', () => {
    expect(hostProblems(fakeHost({ existing: ['isolate-bench-probe'] })).join()).toMatch(/already exists/);
    expect(hostProblems(fakeHost({ journal: '{"state":"applied"}' })).join()).toMatch(
      /runs isolate for real/,
    );
    expect(hostProblems(fakeHost({ controllers: 'cpu memory' })).join()).toMatch(/no cpuset/);
    expect(hostProblems({ ...fakeHost(), uid: 1000 }).join()).toMatch(/root/);
  });
  it('refuses any directory other than the cgroup2 mount isolate manages', () => {
    const h = fakeHost();
    expect(hostProblems({ ...h, cgroupRoot: join(h.root, 'sys') }).join()).toMatch(/name that one/);
    expect(hostProblems({ ...h, mountinfo: '' }).join()).toMatch(/not a cgroup2 mount/);
  });
});
