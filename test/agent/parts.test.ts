// The agent's small parts: flags, PSI parsing, backoff, the metrics endpoint, GC durations, and `agent --once`.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { afterFailure, NO_BACKOFF } from '../../src/agent/backoff.js';
import { createMetrics, serveMetrics } from '../../src/agent/metrics.js';
import { notifier } from '../../src/agent/notify.js';
import { parsePsi, readPsi } from '../../src/cgroup/psi.js';
import { parseAddress, parseDuration } from '../../src/cli/agent.js';
import { isolate } from '../cli/run.js';
import { fakeCgroupHost } from '../support/cgroup-tree.js';

describe('agent flags', () => {
  it.each([
    ['5s', 5000],
    ['500ms', 500],
    ['10m', 600_000],
    ['2', 2000],
    ['1.5s', 1500],
  ])('duration %s is %d ms', (text, ms) => expect(parseDuration('--interval', text, 100)).toBe(ms));

  it.each(['0s', 'fast', '-1s', '5x'])('refuses duration %s in one line naming the flag', (text) => {
    expect(() => parseDuration('--interval', text, 1000)).toThrow(
      /^--interval .*: expected a duration of at least 1s/,
    );
  });

  it('metrics listen on loopback unless an address says otherwise', () => {
    expect(parseAddress(':9464')).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(parseAddress('[::1]:9500')).toEqual({ host: '::1', port: 9500 });
    expect(parseAddress('0.0.0.0:9464')).toEqual({ host: '0.0.0.0', port: 9464 });
    expect(() => parseAddress('9464')).toThrow(/HOST:PORT/);
    expect(() => parseAddress('127.0.0.1:70000')).toThrow(/HOST:PORT/);
  });
});

describe('pressure stall information', () => {
  it('parses some/full lines and leaves out what it does not recognise', () => {
    const p = parsePsi(
      'some avg10=1.50 avg60=0.20 avg300=0.00 total=12345\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n',
    );
    expect(p.some).toEqual({ avg10: 1.5, avg60: 0.2, avg300: 0, total: 12345 });
    expect(p.full?.total).toBe(0);
    expect(parsePsi('some avg10=x\n')).toEqual({ some: null, full: null });
  });
});

describe('backoff', () => {
  it('doubles from the interval up to the cap', () => {
    let b = NO_BACKOFF;
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      b = afterFailure(b, 1000, 100, 1000);
      waits.push(b.nextAt - 1000);
    }
    expect(waits).toEqual([100, 200, 400, 800, 1000, 1000]);
  });
});

describe('metrics endpoint', () => {
  it('serves the Prometheus text format on /metrics with isolate and process metrics', async () => {
    const m = await createMetrics();
    m.policyValid(true);
    const server = await serveMetrics(m, '127.0.0.1', 0);
    const port = (server.address() as { port: number }).port;
    try {
      const body = await new Promise<string>((resolve, reject) => {
        get({ host: '127.0.0.1', port, path: '/metrics' }, (res) => {
          let s = '';
          res.on('data', (d) => {
            s += d;
          });
          res.on('end', () => resolve(s));
        }).on('error', reject);
      });
      expect(body).toMatch(/^isolate_policy_valid 1$/m);
      expect(body).toMatch(/^process_resident_memory_bytes \d+/m);
      // The lag measured at the scrape, not the delay histogram's (see metrics.ts).
      expect(body).toMatch(/^nodejs_eventloop_lag_seconds /m);
      expect(body).not.toMatch(/^nodejs_eventloop_lag_(min|max|mean|stddev|p50|p90|p99)_seconds/m);
    } finally {
      server.close();
    }
  });
});

describe('process metrics', () => {
  it("are prom-client's defaults but the event-loop delay histogram's gauges", async () => {
    const prom = await import('prom-client');
    const defaults = new prom.Registry();
    prom.collectDefaultMetrics({ register: defaults, eventLoopMonitoringPrecision: 3_600_000 });
    const names = (r: { getMetricsAsArray(): { name: string }[] }) =>
      r.getMetricsAsArray().map((x) => x.name);
    const left = /^nodejs_eventloop_lag_(min|max|mean|stddev|p50|p90|p99)_seconds$/;
    const expected = names(defaults).filter((n) => !left.test(n));
    // A prom-client that adds a default collector shows here; the GC histogram is among them.
    expect(expected).toContain('nodejs_gc_duration_seconds');
    expect(expected.length).toBeLessThan(names(defaults).length);
    const ours = names((await createMetrics()).registry);
    expect(ours.filter((n) => /^(process|nodejs)_/.test(n)).sort()).toEqual([...expected].sort());
  });
});

describe('pressure metrics', () => {
  it("are read from each workload's cgroup when scraped, so two scrapes see the kernel's two values", async () => {
    const { root, cg } = fakeCgroupHost(['kafka.slice']);
    const cpu = join(cg, 'kafka.slice/cpu.pressure');
    const psi = (avg10: string, total: number) =>
      `some avg10=${avg10} avg60=0.00 avg300=0.00 total=${total}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n`;
    writeFileSync(cpu, psi('12.50', 2_000_000));
    const m = await createMetrics();
    m.pressureOf([{ workload: 'kafka', target: '/kafka.slice' }], (target) => readPsi(root, target));
    const line = (body: string, re: RegExp) => body.split('\n').find((l) => re.test(l));
    const first = await m.registry.metrics();
    expect(line(first, /^isolate_pressure_ratio\{.*resource="cpu",kind="some",window="avg10"/)).toMatch(
      / 0\.125$/,
    );
    expect(line(first, /^isolate_pressure_stalled_seconds_total\{.*resource="cpu",kind="some"/)).toMatch(
      / 2$/,
    );
    writeFileSync(cpu, psi('50.00', 3_000_000));
    const second = await m.registry.metrics();
    expect(line(second, /^isolate_pressure_ratio\{.*resource="cpu",kind="some",window="avg10"/)).toMatch(
      / 0\.5$/,
    );
    expect(line(second, /^isolate_pressure_stalled_seconds_total\{.*resource="cpu",kind="some"/)).toMatch(
      / 3$/,
    );
    // A workload no longer in the allocation leaves no stale series behind.
    m.pressureOf([], (target) => readPsi(root, target));
    expect(await m.registry.metrics()).not.toMatch(/^isolate_pressure_ratio\{/m);
  });
});

describe('isolate agent --once', () => {
  it("converges once, then exits with check's code (WARNING: the workloads are not running)", () => {
    const { root, cg } = fakeCgroupHost(['kafka.slice', 'hadoop-yarn']);

    mkdirSync(join(root, 'etc/isolate'), { recursive: true });
    writeFileSync(
      join(root, 'etc/isolate/policy.yaml'),
      `apiVersion: isolate/v1
kind: HostPolicy
workloads:
  - { name: kafka, class: exclusive, cores: 1, match: { cgroup: /kafka.slice } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
`,
    );
    const r = isolate(['agent', '--once', '--root', root], { env: { ISOLATE_LOG: 'json' } });
    expect(r.code, r.stderr).toBe(1);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.find((e) => e.msg === 'check')).toMatchObject({ status: 'WARNING' });
    expect(events.filter((e) => e.msg === 'corrected').length).toBeGreaterThan(0);
    expect(readFileSync(join(cg, 'hadoop-yarn/cpuset.cpus'), 'utf8').trim()).not.toBe('');
  });

  it('refuses to start without a policy the operator chose', () => {
    const { root } = fakeCgroupHost([]);
    const r = isolate(['agent', '--once', '--root', root]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/etc\/isolate\/policy\.yaml: no policy; .*--policy FILE/);
  });
});

describe('sd_notify', () => {
  it('a watchdog ping that does not reach systemd is logged, not dropped', async () => {
    const logs: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];
    const n = notifier(
      { NOTIFY_SOCKET: '/nonexistent/isolate-notify.sock', WATCHDOG_USEC: '1000000' },
      (level, msg, fields) => logs.push({ level, msg, fields }),
    );
    expect(n.watchdogMs).toBe(500);
    await n.watchdog();
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({
      level: 'error',
      msg: 'watchdog ping failed',
      fields: { message: 'WATCHDOG=1' },
    });
    expect(String(logs[0]!.fields!.error)).not.toBe('');
    // Without a socket (not under systemd) nothing is sent and nothing logged.
    await notifier({}, (level, msg) => logs.push({ level, msg })).watchdog();
    expect(logs).toHaveLength(1);
  });
});

describe('metrics of what no longer exists', () => {
  it('a workload gone from the allocation, and a drive or controller no longer seen, stop reporting', async () => {
    const { CpuSet } = await import('../../src/model/cpuset.js');
    const m = await createMetrics();
    const w = (name: string, cpus: string) => ({
      name,
      class: 'exclusive' as const,
      target: `/${name}.slice`,
      cpus: CpuSet.parse(cpus),
      cores: [],
      nodes: [0],
      mems: [0],
      memory: {},
      reason: '',
    });
    m.allocation({ workloads: [w('kafka', '2-3'), w('zookeeper', '4-5')], reserved: CpuSet.parse('0-1') });
    const text = () => m.registry.getSingleMetricAsString('isolate_exclusive_cpus');
    expect(await text()).toMatch(/workload="zookeeper"\} 2/);
    m.allocation({ workloads: [w('kafka', '2-3')], reserved: CpuSet.parse('0-1') });
    expect(await text()).toMatch(/workload="kafka"\} 2/);
    expect(await text()).not.toMatch(/zookeeper/);
    const drive = (target: string) => ({ target, currentWrite: 'write-back' });
    const ctl = (id: string, drives: string[]) => ({
      id,
      protection: { healthy: true },
      logicalDrives: drives.map(drive),
    });
    const raid = (controllers: unknown[]) =>
      m.raid({ controllers, findings: [], mdArrays: [], hostAdapters: [] } as unknown as Parameters<
        typeof m.raid
      >[0]);
    raid([ctl('storcli:/c0', ['storcli:/c0/v0', 'storcli:/c0/v1'])]);
    raid([ctl('storcli:/c1', ['storcli:/c1/v0'])]);
    const write = await m.registry.getSingleMetricAsString('isolate_raid_write_policy');
    const healthy = await m.registry.getSingleMetricAsString('isolate_raid_protection_healthy');
    expect(write).toMatch(/storcli:\/c1\/v0/);
    expect(write).not.toMatch(/storcli:\/c0/);
    expect(healthy).toMatch(/controller="storcli:\/c1"\} 1/);
    expect(healthy).not.toMatch(/storcli:\/c0/);
  });
});

describe('io metrics', () => {
  it("add each audit's I/O per workload and Kafka disk; a window whose counts are unknown adds nothing", async () => {
    const m = await createMetrics();
    const report = (flinkSdb: { rbytes: number; wbytes: number; rios: number; wios: number } | null) => ({
      windowMs: 1000,
      disks: [{ name: 'sdb', dev: '8:16', of: ['kafka'] }],
      workloads: [
        {
          name: 'kafka',
          class: 'exclusive' as const,
          target: '/kafka.slice',
          disks: { sdb: { rbytes: 4096, wbytes: 0, rios: 1, wios: 0 } },
          pressure: null,
        },
        {
          name: 'flink',
          class: 'batch' as const,
          target: '/hadoop-yarn',
          disks: { sdb: flinkSdb },
          pressure: null,
        },
      ],
      unknown: [],
      notes: [],
    });
    m.io(report({ rbytes: 0, wbytes: 1_048_576, rios: 0, wios: 8 }));
    m.io(report(null));
    m.io(report({ rbytes: 512, wbytes: 1_048_576, rios: 1, wios: 8 }));
    const bytes = await m.registry.getSingleMetricAsString('isolate_io_bytes_total');
    const reqs = await m.registry.getSingleMetricAsString('isolate_io_requests_total');
    expect(bytes).toContain(
      'isolate_io_bytes_total{workload="flink",class="batch",device="sdb",direction="write"} 2097152',
    );
    expect(bytes).toContain(
      'isolate_io_bytes_total{workload="flink",class="batch",device="sdb",direction="read"} 512',
    );
    expect(bytes).toContain(
      'isolate_io_bytes_total{workload="kafka",class="exclusive",device="sdb",direction="read"} 12288',
    );
    expect(reqs).toContain(
      'isolate_io_requests_total{workload="flink",class="batch",device="sdb",direction="write"} 16',
    );
  });
});
