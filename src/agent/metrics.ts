// The agent's Prometheus metrics (prom-client, with its standard process metrics), served on
// 127.0.0.1 by default and optionally written as a node_exporter textfile (isolate's own metrics only).
import { createServer, type Server } from 'node:http';
import type * as Prom from 'prom-client';
import type { Psi, PsiLine, PsiResource } from '../cgroup/psi.js';
import type { Allocation, Change } from '../model/plan.js';
import type { RaidObservation } from '../model/raid.js';
import type { DeliveredReport } from '../irq/delivered.js';
import type { IoReport } from '../audit/io.js';

export interface AgentMetrics {
  /** Everything the HTTP endpoint serves: isolate's metrics and prom-client's process_*, nodejs_*. */
  registry: Prom.Registry;
  /**
   * The node_exporter textfile: isolate's metrics alone. node_exporter serves process_* of its own, so
   * the agent's would collide with them ("collected before with the same name") and be dropped at every
   * scrape; and nodejs_* under node_exporter's instance would describe no process a reader can tell.
   */
  textfile(): Promise<string>;
  policyValid(valid: boolean): void;
  reconciled(seconds: number, ok: boolean, at: number): void;
  corrected(changes: readonly Change[]): void;
  violations(byKind: Record<string, number>): void;
  /** Per workload: its JVMs whose GC/JIT pools were sized for more CPUs than they may use now. */
  jvmOversized(byWorkload: Record<string, number>): void;
  /** Interrupts delivered to the exclusive CPUs since the audit before, per source. */
  interrupts(r: DeliveredReport): void;
  /** I/O of each workload on the exclusive workloads' disks since the audit before. */
  io(r: IoReport): void;
  allocation(a: Allocation): void;
  /**
   * The workloads whose cgroup pressure the metrics show. Read when scraped (or the textfile is
   * written), not every round: PSI averages move every 2 s and nobody looks between scrapes.
   */
  pressureOf(workloads: readonly PressureSource[], read: PsiReader): void;
  raid(obs: RaidObservation): void;
  /** Rounds in a row that failed (0 after a round that succeeded). */
  failures(rounds: number): void;
  /** How many times the rounds have asked systemd so far (ops/systemd-memo.ts). */
  systemdAsked(total: number): void;
}

export interface PressureSource {
  workload: string;
  target: string;
}
export type PsiReader = (target: string) => Partial<Record<PsiResource, Psi>>;

const WRITE_POLICY = ['write-back', 'write-through', 'always-write-back', 'unknown'];

export async function createMetrics(): Promise<AgentMetrics> {
  const prom = await import('prom-client');
  // isolate's metrics (what the textfile carries), and the runtime's, served with them over HTTP.
  const own = new prom.Registry();
  const runtime = runtimeRegistry(prom);
  const kit = metricKit(prom, own);
  // Registered in this order, which is the order both outputs list them in.
  const rounds = roundMetrics(kit);
  const traffic = trafficMetrics(kit);
  const host = hostMetrics(kit);
  const pressure = pressureMetrics(kit);
  const raid = raidMetrics(kit);
  return {
    // The same metric objects in both: a value set once shows in both outputs.
    registry: prom.Registry.merge([runtime, own]),
    textfile: () => own.metrics(),
    ...rounds.metrics,
    reconciled(seconds, ok, at) {
      rounds.observe(seconds, ok);
      if (ok) host.lastSuccess.set(at / 1000);
    },
    ...traffic,
    ...host.metrics,
    ...pressure,
    ...raid,
  };
}

type PromClient = typeof Prom;

/** What each group of metrics registers with: the client, isolate's registry, and two shorthands. */
interface MetricKit {
  prom: PromClient;
  own: Prom.Registry;
  gauge(name: string, help: string, labelNames?: string[]): Prom.Gauge;
  counter(name: string, help: string, labelNames?: string[]): Prom.Counter;
}

function metricKit(prom: PromClient, own: Prom.Registry): MetricKit {
  return {
    prom,
    own,
    gauge: (name, help, labelNames = []) => new prom.Gauge({ name, help, labelNames, registers: [own] }),
    counter: (name, help, labelNames = []) => new prom.Counter({ name, help, labelNames, registers: [own] }),
  };
}

/** prom-client's standard process and Node.js metrics, in a registry of their own. */
function runtimeRegistry(prom: PromClient): Prom.Registry {
  const runtime = new prom.Registry();
  // prom-client's standard process and Node.js metrics, but for the event-loop delay histogram's
  // seven gauges (nodejs_eventloop_lag_{min,max,mean,stddev,p50,p90,p99}_seconds). Its sampler
  // wakes the process every 10 ms by default — 97 wake-ups a second measured, +0.7-1.0 % of a core on
  // an agent that otherwise wakes twice in 5 s (bench/agent-idle.mjs, docs/performance.md) — and it
  // cannot be turned off, only slowed; slowed to its period, its gauges would report the period, not
  // the lag. So it samples once an hour and its gauges are left out; nodejs_eventloop_lag_seconds,
  // measured when scraped, stays.
  prom.collectDefaultMetrics({ register: runtime, eventLoopMonitoringPrecision: 3_600_000 });
  for (const stat of ['min', 'max', 'mean', 'stddev', 'p50', 'p90', 'p99']) {
    runtime.removeSingleMetric(`nodejs_eventloop_lag_${stat}_seconds`);
  }
  return runtime;
}

/** The policy, each round's time and outcome, what it corrected, and what the audit found. */
function roundMetrics({ prom, own, gauge, counter }: MetricKit) {
  const policyValid = gauge(
    'isolate_policy_valid',
    '1 when the policy file in use is valid, 0 when a new one was refused',
  );
  const duration = new prom.Histogram({
    name: 'isolate_reconcile_duration_seconds',
    help: 'Time of one observe → plan → apply → verify round',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [own],
  });
  const reconciles = counter('isolate_reconciles_total', 'Reconcile rounds by outcome', ['outcome']);
  const corrections = counter(
    'isolate_drift_corrections_total',
    'Settings isolate changed back to the policy (drift corrected, or first convergence)',
    ['workload', 'setting'],
  );
  const violations = gauge('isolate_violations', 'Threads that may run where the policy forbids, by kind', [
    'kind',
  ]);
  const jvmOversized = gauge(
    'isolate_jvm_oversized_pools',
    'JVMs of each workload whose GC/JIT thread pools were sized for more CPUs than they may use now (restart them; see docs/jvm.md)',
    ['workload'],
  );
  const metrics: Pick<AgentMetrics, 'policyValid' | 'corrected' | 'violations' | 'jvmOversized'> = {
    policyValid: (v) => policyValid.set(v ? 1 : 0),
    corrected(changes) {
      for (const ch of changes) corrections.inc({ workload: ch.workload ?? '', setting: ch.setting });
    },
    violations(byKind) {
      for (const [kind, n] of Object.entries(byKind)) violations.set({ kind }, n);
    },
    jvmOversized(byWorkload) {
      // A workload gone from the policy must not keep reporting its last value.
      jvmOversized.reset();
      for (const [workload, n] of Object.entries(byWorkload)) jvmOversized.set({ workload }, n);
    },
  };
  return {
    metrics,
    observe(seconds: number, ok: boolean) {
      duration.observe(seconds);
      reconciles.inc({ outcome: ok ? 'ok' : 'failed' });
    },
  };
}

/** Interrupts on the exclusive CPUs and each workload's I/O on the exclusive workloads' disks. */
function trafficMetrics({ counter }: MetricKit): Pick<AgentMetrics, 'interrupts' | 'io'> {
  const exclusiveInterrupts = counter(
    'isolate_exclusive_cpu_interrupts_total',
    'Interrupts delivered to the exclusive CPUs, per source: a device IRQ by its handler names (kind irq), receive processing (kind softirq, NET_RX); counted between audits',
    ['kind', 'source'],
  );
  const ioBytes = counter(
    'isolate_io_bytes_total',
    "Bytes each workload read and wrote on the disks of the exclusive workloads' data directories (disks:), per disk; counted between audits from io.stat (v1: blkio.throttle.io_service_bytes)",
    ['workload', 'class', 'device', 'direction'],
  );
  const ioOps = counter(
    'isolate_io_requests_total',
    "I/O requests each workload completed on the disks of the exclusive workloads' data directories, per disk; counted between audits from io.stat (v1: blkio.throttle.io_serviced)",
    ['workload', 'class', 'device', 'direction'],
  );
  return {
    interrupts(r) {
      for (const s of r.sources)
        exclusiveInterrupts.inc(
          { kind: s.kind, source: s.kind === 'irq' ? `${s.id}:${s.name}` : s.name },
          s.total,
        );
    },
    io(r) {
      // A disk whose counters are unknown for this window adds nothing: never counted as zero I/O
      // done, only not counted.
      for (const w of r.workloads) {
        for (const [device, u] of Object.entries(w.disks)) {
          if (!u) continue;
          const labels = { workload: w.name, class: w.class, device };
          ioBytes.inc({ ...labels, direction: 'read' }, u.rbytes);
          ioBytes.inc({ ...labels, direction: 'write' }, u.wbytes);
          ioOps.inc({ ...labels, direction: 'read' }, u.rios);
          ioOps.inc({ ...labels, direction: 'write' }, u.wios);
        }
      }
    },
  };
}

/** The exclusive CPUs given, the last success, failing rounds in a row, and systemd's queries. */
function hostMetrics({ gauge, counter }: MetricKit) {
  const exclusive = gauge('isolate_exclusive_cpus', 'CPUs given to each exclusive workload', ['workload']);
  const lastSuccess = gauge(
    'isolate_last_success_timestamp_seconds',
    'When the host last matched the policy',
  );
  const failures = gauge(
    'isolate_consecutive_failures',
    'Reconcile rounds in a row that failed and are retried with backoff (0: the last round succeeded)',
  );
  const systemdQueries = counter(
    'isolate_systemd_queries_total',
    "systemctl show calls of the reconcile rounds (none while the cgroup tree and set-property's drop-ins are unchanged, for up to 5 minutes)",
  );
  let systemdAskedBefore = 0;
  const metrics: Pick<AgentMetrics, 'allocation' | 'failures' | 'systemdAsked'> = {
    allocation(a) {
      // A workload gone from the policy must not keep reporting its last value.
      exclusive.reset();
      for (const w of a.workloads)
        if (w.class === 'exclusive') exclusive.set({ workload: w.name }, w.cpus.size);
    },
    failures: (n) => failures.set(n),
    systemdAsked(total) {
      if (total > systemdAskedBefore) systemdQueries.inc(total - systemdAskedBefore);
      systemdAskedBefore = total;
    },
  };
  return { metrics, lastSuccess };
}

/** The workloads' cgroup pressure (PSI), read when the metrics are collected. */
function pressureMetrics({ prom, own }: MetricKit): Pick<AgentMetrics, 'pressureOf'> {
  let pressureSources: readonly PressureSource[] = [];
  let readPressure: PsiReader = () => ({});
  const eachPsiLine = (
    f: (labels: { workload: string; resource: string; kind: 'some' | 'full' }, line: PsiLine) => void,
  ) => {
    for (const { workload, target } of pressureSources) {
      for (const [resource, p] of Object.entries(readPressure(target))) {
        for (const kind of ['some', 'full'] as const) {
          const line = p?.[kind];
          if (line) f({ workload, resource, kind }, line);
        }
      }
    }
  };
  const psiAvg = new prom.Gauge({
    name: 'isolate_pressure_ratio',
    help: 'Pressure stall information of the workload cgroup: share of time stalled (avg10/avg60/avg300)',
    labelNames: ['workload', 'resource', 'kind', 'window'],
    registers: [own],
    collect() {
      psiAvg.reset();
      eachPsiLine((labels, line) => {
        for (const window of ['avg10', 'avg60', 'avg300'] as const)
          psiAvg.set({ ...labels, window }, line[window] / 100);
      });
    },
  });
  const psiTotal = new prom.Gauge({
    name: 'isolate_pressure_stalled_seconds_total',
    help: 'Total stall time of the workload cgroup',
    labelNames: ['workload', 'resource', 'kind'],
    registers: [own],
    collect() {
      psiTotal.reset();
      eachPsiLine((labels, line) => psiTotal.set(labels, line.total / 1e6));
    },
  });
  return {
    pressureOf(sources, read) {
      pressureSources = sources;
      readPressure = read;
    },
  };
}

/** Each RAID logical drive's write policy and each controller's battery/CacheVault health. */
function raidMetrics({ gauge }: MetricKit): Pick<AgentMetrics, 'raid'> {
  const raidWrite = gauge(
    'isolate_raid_write_policy',
    'Current write policy of each RAID logical drive (1 for the policy in effect)',
    ['drive', 'policy'],
  );
  const raidHealthy = gauge(
    'isolate_raid_protection_healthy',
    'Battery / CacheVault health per controller: 1 healthy, 0 not, -1 unknown',
    ['controller'],
  );
  return {
    raid(obs) {
      // Nor a controller or drive that is gone (replaced, or no longer seen).
      raidHealthy.reset();
      raidWrite.reset();
      for (const ctl of obs.controllers) {
        const h = ctl.protection.healthy;
        raidHealthy.set({ controller: ctl.id }, h === true ? 1 : h === false ? 0 : -1);
        for (const d of ctl.logicalDrives) {
          for (const p of WRITE_POLICY)
            raidWrite.set({ drive: d.target, policy: p }, d.currentWrite === p ? 1 : 0);
        }
      }
    },
  };
}

/** Serve /metrics; the address is the operator's choice and defaults to loopback only. */
export async function serveMetrics(m: AgentMetrics, host: string, port: number): Promise<Server> {
  const server = createServer(async (req, res) => {
    if (req.method !== 'GET' || (req.url !== '/metrics' && req.url !== '/')) {
      res.writeHead(404).end('not found; metrics are at /metrics\n');
      return;
    }
    const body = await m.registry.metrics();
    res.writeHead(200, { 'content-type': m.registry.contentType }).end(body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
