// The isolation benchmark's host-side logic: percentiles, ratios, the verdict, the plot, arguments,
// accelerator choice, the real-host refusals and cgroup layouts (unified, hybrid, legacy fixture trees),
// and the I/O bench's disk, io settings and report. No guest is booted here (see test/vm/isolation-smoke).
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chooseAccel } from '../../bench/isolation/accel.js';
import { type Histogram, percentiles, spectrum, valueAt } from '../../bench/isolation/histogram.js';
import { benchDirs, benchHierarchies } from '../../bench/isolation/hierarchies.js';
import { policyFiles } from '../../bench/isolation/guest.js';
import { hostProblems, ioEnv, ioTarget, removeRunState } from '../../bench/isolation/host.js';
import { buildIoReport, formatIoText, parseBatchCounters } from '../../bench/isolation/io-report.js';
import { ioPlan, ioPlanShell } from '../../bench/isolation/io-settings.js';
import { parseCap, parseParams } from '../../bench/isolation/params.js';
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
      const p = parsePolicy(benchPolicy({ strict, cores: 2, quiet: true }), 'bench');
      expect(p.strict).toBe(strict);
      expect(p.workloads.map((w) => [w.name, w.class])).toEqual([
        ['bench-probe', 'exclusive'],
        ['bench-batch', 'batch'],
      ]);
    }
  });
  it("leave a real host's IRQs and workqueues alone unless --host-wide; a guest keeps quiet cores on", () => {
    const quiet = (args: string[]) =>
      Object.values(policyFiles(parseParams(args, 'o'))).map((text) => parsePolicy(text, 'bench').quiet);
    const host = ['--host-cgroup-root', '/sys/fs/cgroup'];
    expect(quiet(host)).toEqual([
      { irqs: false, workqueues: false },
      { irqs: false, workqueues: false },
    ]);
    for (const q of [...quiet([...host, '--host-wide']), ...quiet(['--guest'])]) {
      expect(q.irqs).toBe(true);
      expect(q.workqueues).not.toBe(false);
    }
  });
});

describe("the run's isolate state", () => {
  it('is removed once rolled back, and kept (the way back) when the rollback did not finish', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-state-'));
    try {
      const state = join(dir, 'var/lib/isolate');
      mkdirSync(state, { recursive: true });
      writeFileSync(join(state, 'journal.json'), '{"state":"rolled-back"}');
      removeRunState(state);
      expect(existsSync(state)).toBe(false);
      mkdirSync(state, { recursive: true });
      writeFileSync(join(state, 'journal.json'), '{"state":"applied"}');
      removeRunState(state);
      expect(existsSync(join(state, 'journal.json'))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
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

/** A host tree: mountinfo plus the cgroup mounts it names, with the files layout detection reads. */
function hostTree(
  shape: 'unified' | 'hybrid' | 'legacy-no-blkio',
  opts: { existing?: string[]; journal?: string; v2Controllers?: string; v2Subtree?: string } = {},
) {
  const root = mkdtempSync(join(tmpdir(), 'bench-host-'));
  const cg = join(root, 'sys/fs/cgroup');
  const lines: string[] = [];
  const v2 = (dir: string, id: number) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'cgroup.controllers'), opts.v2Controllers ?? 'cpuset cpu io memory pids\n');
    writeFileSync(join(dir, 'cgroup.subtree_control'), opts.v2Subtree ?? 'cpuset cpu io memory pids\n');
    lines.push(`${id} 24 0:${id} / /${dir.slice(root.length + 1)} rw,nosuid - cgroup2 cgroup2 rw`);
  };
  const v1 = (name: string, id: number) => {
    const dir = join(cg, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'tasks'), '');
    if (name === 'cpuset') writeFileSync(join(dir, 'cpuset.cpus'), '0-1\n');
    lines.push(`${id} 24 0:${id} / /sys/fs/cgroup/${name} rw,relatime - cgroup cgroup rw,${name}`);
  };
  if (shape === 'unified') v2(cg, 30);
  else {
    mkdirSync(cg, { recursive: true });
    lines.push('29 24 0:29 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755');
    v1('cpuset', 31);
    v1('memory', 32);
    if (shape === 'hybrid') {
      v1('blkio', 33);
      v2(join(cg, 'unified'), 34);
    }
  }
  for (const d of opts.existing ?? []) mkdirSync(join(cg, d), { recursive: true });
  if (opts.journal) {
    mkdirSync(join(root, 'var/lib/isolate'), { recursive: true });
    writeFileSync(join(root, 'var/lib/isolate/journal.json'), opts.journal);
  }
  mkdirSync(join(root, 'proc/self'), { recursive: true });
  writeFileSync(join(root, 'proc/self/mountinfo'), `${lines.join('\n')}\n`);
  return { root, cg };
}

const facts = (h: { root: string; cg: string }, benches: Array<'cpu' | 'io'> = ['cpu']) => ({
  cgroupRoot: h.cg,
  root: h.root,
  uid: 0,
  benches,
});

describe('real-host refusals', () => {
  it('accepts a clean unified host, and one whose isolate journal is rolled back', async () => {
    expect(await hostProblems(facts(hostTree('unified')))).toEqual([]);
    expect(await hostProblems(facts(hostTree('unified', { journal: '{"state":"rolled-back"}' })))).toEqual(
      [],
    );
  });
  it('refuses when its cgroups exist, isolate is applied, cpuset is missing, or not root', async () => {
    expect(
      (await hostProblems(facts(hostTree('unified', { existing: ['isolate-bench-probe'] })))).join(),
    ).toMatch(/already exists/);
    expect(
      (await hostProblems(facts(hostTree('unified', { journal: '{"state":"applied"}' })))).join(),
    ).toMatch(/runs isolate for real/);
    expect((await hostProblems(facts(hostTree('unified', { v2Controllers: 'cpu memory' })))).join()).toMatch(
      /no cpuset controller/,
    );
    expect((await hostProblems({ ...facts(hostTree('unified')), uid: 1000 })).join()).toMatch(/root/);
  });
  it('refuses any directory other than the cgroup mount root isolate reads', async () => {
    const h = hostTree('unified');
    expect((await hostProblems({ ...facts(h), cgroupRoot: join(h.root, 'sys') })).join()).toMatch(
      /name that one/,
    );
  });
  it('runs on a hybrid host (v1 cpuset and blkio, cgroup2 at unified) and refuses a leftover there', async () => {
    const h = hostTree('hybrid');
    expect(await hostProblems(facts(h, ['cpu', 'io']))).toEqual([]);
    const left = hostTree('hybrid', { existing: ['blkio/isolate-bench-batch'] });
    expect(await hostProblems(facts(left, ['cpu']))).toEqual([]); // the CPU bench does not use blkio
    expect((await hostProblems(facts(left, ['cpu', 'io']))).join()).toMatch(
      /blkio\/isolate-bench-batch already exists/,
    );
  });
  it('says what is missing for the I/O bench: no io controller, or io not enabled below the root', async () => {
    expect((await hostProblems(facts(hostTree('legacy-no-blkio'), ['io']))).join()).toMatch(
      /no io controller on this host \(cgroup layout legacy\)/,
    );
    expect(
      (await hostProblems(facts(hostTree('unified', { v2Subtree: 'cpuset cpu memory' }), ['io']))).join(),
    ).toMatch(/cgroup.subtree_control lacks io: .*echo \+io/);
  });
});

describe('cgroup layouts (where the bench makes its cgroups)', () => {
  it('unified: one hierarchy for both benches', async () => {
    const h = hostTree('unified');
    const r = await benchHierarchies(h.root, ['cpu', 'io']);
    expect(r).toMatchObject({
      layout: 'unified',
      cpu: { kind: 'v2', dir: h.cg },
      io: { kind: 'v2', dir: h.cg },
    });
    expect(benchDirs(r, ['cpu', 'io'])).toEqual([h.cg]);
  });
  it('hybrid: v1 cpuset for the CPU bench, v1 blkio for the I/O bench (io is bound to v1, not cgroup2)', async () => {
    const h = hostTree('hybrid');
    const r = await benchHierarchies(h.root, ['cpu', 'io']);
    expect(r).toMatchObject({
      layout: 'hybrid',
      cpu: { kind: 'v1', dir: join(h.cg, 'cpuset') },
      io: { kind: 'v1', dir: join(h.cg, 'blkio') },
      problems: [],
    });
    expect(benchDirs(r, ['cpu', 'io'])).toEqual([join(h.cg, 'cpuset'), join(h.cg, 'blkio')]);
    expect(benchDirs(r, ['io'])).toEqual([join(h.cg, 'blkio')]);
  });
  it('refuses a mount table that contradicts the directories instead of guessing', async () => {
    const h = hostTree('hybrid');
    rmSync(join(h.cg, 'blkio'), { recursive: true });
    expect((await benchHierarchies(h.root, ['io'])).problems.join()).toMatch(/blkio .*does not exist/);
  });
});

const DISKS = join(import.meta.dirname, '../fixtures/disks/r630-kafka');

describe("the I/O bench's disk", () => {
  it('resolves a directory on a partition to the whole disk, with its scheduler', () => {
    expect(ioTarget(DISKS, '/data1/kafka-logs', 'v1')).toEqual({
      disks: [{ name: 'sda', dev: '8:0', scheduler: 'mq-deadline', rotational: true, iocost: false }],
      problems: [],
    });
  });
  it('resolves LVM over md raid1 to both disks underneath', () => {
    expect(ioTarget(DISKS, '/data2/kafka-logs', 'v2').disks.map((d) => [d.dev, d.scheduler])).toEqual([
      ['8:16', 'bfq'],
      ['8:32', 'bfq'],
    ]);
  });
  it('refuses a directory with no block device, a missing path, and anything but a directory', () => {
    expect(ioTarget(DISKS, '/scratch/kafka', 'v1').problems.join()).toMatch(/tmpfs/);
    expect(ioTarget(DISKS, '/nowhere', 'v1').problems.join()).toMatch(/ENOENT/);
    const root = mkdtempSync(join(tmpdir(), 'bench-io-'));
    writeFileSync(join(root, 'sda'), '');
    expect(ioTarget(root, '/sda', 'v1').problems.join()).toMatch(/not a directory .*never to a device/);
  });
});

describe("the isolated I/O arm's settings", () => {
  const disk = (scheduler: string, iocost = false) => ({
    name: 'sda',
    dev: '8:0',
    scheduler,
    rotational: true,
    iocost,
  });
  const both = { wiops: true, wbps: true };
  it('v1 with mq-deadline: throttles only, and says why there is no latency target and no weight', () => {
    const p = ioPlan('v1', [disk('mq-deadline')], { latencyTargetUs: 10_000, cap: both });
    expect(p.settings).toEqual([
      { cgroup: 'batch', file: 'blkio.throttle.write_iops_device', value: '8:0 $CAP_WIOPS' },
      { cgroup: 'batch', file: 'blkio.throttle.write_bps_device', value: '8:0 $CAP_WBPS' },
    ]);
    expect(p.notes.join('\n')).toMatch(/no latency target[\s\S]*weights act only with BFQ .*mq-deadline/);
  });
  it('v1 with BFQ: weights too', () => {
    const p = ioPlan('v1', [disk('bfq')], { latencyTargetUs: 10_000, cap: { wiops: true, wbps: false } });
    expect(p.settings.map((s) => `${s.cgroup} ${s.file}=${s.value}`)).toEqual([
      'probe blkio.bfq.weight=1000',
      'batch blkio.bfq.weight=25',
      'batch blkio.throttle.write_iops_device=8:0 $CAP_WIOPS',
    ]);
  });
  it('v2: io.latency always; BFQ or iocost weights only where they act; io.max with the caps asked for', () => {
    const none = ioPlan('v2', [disk('none')], { latencyTargetUs: 5000, cap: { wiops: false, wbps: true } });
    expect(none.settings.map((s) => `${s.cgroup} ${s.file}=${s.value}`)).toEqual([
      'probe io.latency=8:0 target=5000',
      'batch io.max=8:0 wbps=$CAP_WBPS',
    ]);
    expect(none.notes.join()).toMatch(/io.weight acts only with BFQ or iocost/);
    expect(
      ioPlan('v2', [disk('none', true)], { latencyTargetUs: 5000, cap: both }).settings.map((s) => s.file),
    ).toEqual(['io.latency', 'io.weight', 'io.weight', 'io.max']);
    expect(ioPlan('v2', [disk('bfq')], { latencyTargetUs: 5000, cap: both }).settings[1]).toEqual({
      cgroup: 'probe',
      file: 'io.bfq.weight',
      value: '8:0 1000',
    });
  });
  it('warns when the batch would get nothing at all', () => {
    const p = ioPlan('v1', [disk('mq-deadline')], { latencyTargetUs: 1, cap: { wiops: false, wbps: false } });
    expect(p.notes.join()).toMatch(/measures nothing but noise/);
  });
  it('renders a shell function that writes each file of the bench cgroups, and refuses anything else', () => {
    const sh = ioPlanShell(ioPlan('v2', [disk('none')], { latencyTargetUs: 5000, cap: both }));
    expect(sh).toBe(
      [
        'io_isolate() {',
        '  io_set "$P" io.latency "8:0 target=5000" || return 1',
        '  io_set "$B" io.max "8:0 wbps=$CAP_WBPS wiops=$CAP_WIOPS" || return 1',
        '  return 0',
        '}',
      ].join('\n'),
    );
    expect(() =>
      ioPlan('v1', [{ ...disk('none'), dev: '8:0; rm -rf /' }], { latencyTargetUs: 1, cap: both }),
    ).toThrow(/bad MAJ:MIN/);
    expect(() =>
      ioPlanShell({ settings: [{ cgroup: 'batch', file: '../x', value: '1' }], notes: [] }),
    ).toThrow(/not a cgroup file/);
  });
  it('passes a share cap, or fixed caps, to the arms script', async () => {
    const h = hostTree('hybrid');
    const hier = await benchHierarchies(h.root, ['io']);
    const share = parseParams(
      ['--host-cgroup-root', '/sys/fs/cgroup', '--benches', 'io', '--io-dir', '/data1'],
      'o',
    );
    const e1 = ioEnv(share, hier, [disk('mq-deadline')]).env;
    expect(e1).toMatchObject({
      IO_ARMS: 'alone unisolated isolated',
      IO_KIND: 'v1',
      IO_DEVS: '8:0',
      CAP_SHARE: '25',
    });
    expect(e1.CAP_WIOPS).toBeUndefined();
    const fixed = parseParams(
      ['--host-cgroup-root', '/sys/fs/cgroup', '--io-dir', '/data1', '--io-batch-cap', 'wiops=100'],
      'o',
    );
    const e2 = ioEnv(fixed, hier, [disk('mq-deadline')]);
    expect(e2.env).toMatchObject({ CAP_WIOPS: '100' });
    expect(e2.env.CAP_SHARE).toBeUndefined();
    expect(e2.plan.settings.map((s) => s.file)).toEqual(['blkio.throttle.write_iops_device']);
  });
});

describe('I/O arguments', () => {
  const host = ['--host-cgroup-root', '/sys/fs/cgroup'];
  it('runs the I/O bench with --io-dir, on a real host only', () => {
    const p = parseParams([...host, '--io-dir', '/data1/bench'], 'o');
    expect(p.arms).toEqual(['alone', 'unisolated', 'isolated']);
    expect(p.ioArms).toEqual(['alone', 'unisolated', 'isolated']);
    expect(p.io).toMatchObject({
      dir: '/data1/bench',
      rate: 1000,
      fsyncMs: 20,
      cap: { kind: 'share', percent: 25 },
    });
    expect(parseParams([...host, '--io-dir', '/d', '--benches', 'io'], 'o').arms).toEqual([]);
    expect(parseParams(host, 'o').ioArms).toEqual([]);
    expect(() => parseParams(['--guest', '--io-dir', '/d'], 'o')).toThrow(/real host only/);
    expect(() => parseParams([...host, '--benches', 'io'], 'o')).toThrow(/--io-dir/);
    expect(() => parseParams([...host, '--io-rate', '5'], 'o')).toThrow(/--io-rate needs --io-dir/);
    expect(() => parseParams([...host, '--io-dir', 'rel/dir'], 'o')).toThrow(/absolute/);
    expect(() => parseParams([...host, '--io-dir', '/d x'], 'o')).toThrow(/letters, digits/);
  });
  it('keeps the strict arm off a real host unless --host-wide', () => {
    expect(parseParams(['--guest'], 'o').arms).toContain('strict');
    expect(() => parseParams([...host, '--arms', 'alone,strict'], 'o')).toThrow(/--host-wide/);
    expect(parseParams([...host, '--arms', 'alone,strict', '--host-wide'], 'o').arms).toEqual([
      'alone',
      'strict',
    ]);
    expect(
      parseParams([...host, '--arms', 'alone,strict', '--benches', 'io', '--io-dir', '/d'], 'o').ioArms,
    ).toEqual(['alone']);
  });
  it('parses caps: a whole share, or fixed wiops/wbps; a share needs the unisolated arm', () => {
    expect(parseCap('10%')).toEqual({ kind: 'share', percent: 10 });
    expect(parseCap('wiops=200,wbps=1048576')).toEqual({ kind: 'fixed', wiops: 200, wbps: 1048576 });
    for (const bad of ['0%', '101%', '2.5%', 'riops=1', 'wiops=0', 'wiops=x'])
      expect(() => parseCap(bad)).toThrow(/--io-batch-cap/);
    expect(() => parseParams([...host, '--io-dir', '/d', '--arms', 'alone,isolated'], 'o')).toThrow(
      /unisolated arm/,
    );
    expect(
      parseParams(
        [...host, '--io-dir', '/d', '--arms', 'alone,isolated', '--io-batch-cap', 'wbps=1000000'],
        'o',
      ).ioArms,
    ).toEqual(['alone', 'isolated']);
  });
});

function appenderOut(label: string, write: Histogram, fsync: Histogram, read: Histogram): string {
  const op = (h: Histogram) => ({ count: 0, maxNs: h.maxNs, buckets: h.buckets });
  return JSON.stringify({ label, rate: 1000, ops: { write: op(write), fsync: op(fsync), read: op(read) } });
}

describe('I/O report', () => {
  const quick = hist([[10_000, 100]]);
  const s = {
    'io-info': 'kind=v1 hierarchy=/sys/fs/cgroup/blkio devices=8:0',
    'io-probe-alone': appenderOut(
      'alone',
      hist([
        [50_000, 980],
        [1_000_000, 20],
      ]),
      hist([
        [1_000_000, 99],
        [2_000_000, 1],
      ]),
      quick,
    ),
    'io-probe-alone-rc': '0\n',
    'io-batch-alone': 'wios=0 wbytes=0 ms=10000',
    'io-probe-unisolated': appenderOut(
      'unisolated',
      hist([
        [50_000, 900],
        [8_000_000, 100],
      ]),
      hist([
        [1_000_000, 90],
        [6_000_000, 10],
      ]),
      quick,
    ),
    'io-probe-unisolated-rc': '0\n',
    'io-batch-unisolated': 'wios=400000 wbytes=6553600000 ms=10000',
    'io-settings-isolated': 'isolate-bench-batch/blkio.throttle.write_iops_device: 8:0 10000',
    'io-settings-isolated-rc': '0',
    'io-probe-isolated': appenderOut(
      'isolated',
      hist([
        [50_000, 980],
        [1_100_000, 20],
      ]),
      hist([
        [1_000_000, 99],
        [2_400_000, 1],
      ]),
      quick,
    ),
    'io-probe-isolated-rc': '0\n',
    'io-batch-isolated': 'wios=100000 wbytes=1638400000 ms=10000',
  };
  it("gives write/fsync/read ratios to alone and the batch's rates", () => {
    const r = buildIoReport(s, ['alone', 'unisolated', 'isolated'], ['v1 has no io.latency']);
    expect(r.arms.map((a) => a.ok)).toEqual([true, true, true]);
    expect(r.arms[1]!.ratioToAlone!.fsync.p99).toBe(6);
    expect(r.arms[1]!.ratioToAlone!.write.p99).toBe(8);
    expect(r.arms[2]!.ratioToAlone!.write.p99).toBeCloseTo(1.1);
    expect(r.arms[2]!.ratioToAlone!.fsync.p99).toBe(1);
    expect(r.arms[1]!.batch).toEqual({ wiops: 40_000, wbps: 655_360_000, seconds: 10 });
    expect(r.arms[0]!.batch).toBeUndefined();
    expect(r.summary).toBe(
      'unisolated: fsync p99 6.00× alone, write p99 8.00× alone; isolated: fsync p99 1.00× alone, write p99 1.10× alone.',
    );
    const text = formatIoText(r, {
      rate: 1000,
      appendBytes: 4096,
      fsyncMs: 20,
      warmupS: 1,
      durationS: 10,
    }).join('\n');
    expect(text).toMatch(/note: v1 has no io.latency/);
    expect(text).toMatch(/batch wrote 40000 IOPS, 655.4 MB\/s/);
    expect(text).toMatch(/blkio.throttle.write_iops_device: 8:0 10000/);
  });
  it('fails an arm whose settings were refused or whose appender failed, and reads no garbled counters', () => {
    const r = buildIoReport(
      {
        ...s,
        'io-settings-isolated-rc': '1',
        'io-settings-isolated': 'io: /x/io.max: write of "8:0 wbps=1" refused',
        'io-probe-unisolated-rc': '1\nappender: write: No space left on device',
      },
      ['alone', 'unisolated', 'isolated'],
      [],
    );
    expect(r.arms.map((a) => a.ok)).toEqual([true, false, false]);
    expect(r.arms[1]!.error).toMatch(/appender failed \(exit 1/);
    expect(r.arms[2]!.error).toMatch(/io settings failed: .*refused/);
    expect(r.summary).toMatch(/no ratios/);
    expect(parseBatchCounters('wios=1 wbytes=2 ms=0')).toBeUndefined();
    expect(parseBatchCounters('garbage')).toBeUndefined();
  });
  it('joins the CPU report, or stands alone when only the I/O bench ran', () => {
    const ioOnly = parseParams(
      ['--host-cgroup-root', '/sys/fs/cgroup', '--benches', 'io', '--io-dir', '/d'],
      'o',
    );
    const r = buildReport({
      sections: s,
      params: ioOnly,
      where: { kind: 'host', emulated: false, detail: 'h' },
      wallMs: 1,
    });
    expect(r.arms).toEqual([]);
    expect(r.io?.arms.map((a) => a.ok)).toEqual([true, true, true]);
    const text = formatText(r);
    expect(text).toMatch(/I\/O result: unisolated: fsync p99 6\.00× alone/);
    expect(text).not.toMatch(/req\/s offered/);
  });
});
