// `isolate agent`: every interval observe → plan → apply only what differs → verify, through the
// same application layer as the CLI. The real state is observed every round; nothing is assumed
// from what was last written, so drift of any kind (a hand-made write, systemd rewriting on
// daemon-reload, a unit restarted into a fresh cgroup, a new YARN container) is corrected.
import type { FSWatcher } from 'node:fs';
import type { CheckReport } from '../audit/report.js';
import { ProcessScanMemo } from '../cgroup/proc-scan.js';
import { readPsi } from '../cgroup/psi.js';
import { UserError } from '../model/errors.js';
import { cgroupTarget } from '../model/describe.js';
import { EXIT_STATUS } from '../model/finding.js';
import type { LogFn } from '../model/log.js';
import type { Allocation } from '../model/plan.js';
import { apply } from '../ops/apply.js';
import { check } from '../ops/check.js';
import type { InterruptCounts } from '../irq/delivered.js';
import type { IoCounts } from '../audit/io.js';
import { IrqMemo } from '../irq/memo.js';
import { SystemdMemo } from '../ops/systemd-memo.js';
import type { Topology } from '../model/topology.js';
import { readTopology, topologyStamp } from '../topology/read.js';
import { afterFailure, type Backoff, due, NO_BACKOFF } from './backoff.js';
import { DropInWatch } from './dropins.js';
import { startProbe } from './probe.js';
import { watchWorkloads } from './watch.js';
import type { AgentMetrics } from './metrics.js';
import type { Notifier } from './notify.js';
import { PolicyHolder } from './policy.js';

export interface AgentOptions {
  root: string;
  /** The policy file the agent follows (re-read when it changes). */
  policyPath: string;
  intervalMs: number;
  /** RAID is read (and moved toward the policy) on this slower cadence. */
  raidIntervalMs: number;
  /** The full thread audit (violations metric) runs on this cadence: it reads every thread. */
  checkIntervalMs: number;
  maxBackoffMs: number;
  /** One reconcile, then the host check; the result is check's exit code. */
  once?: boolean;
  log: LogFn;
  /** Aborted on SIGTERM/SIGINT: the round in progress finishes, then the agent returns. */
  stop: AbortSignal;
  /** Register a callback for SIGHUP (reload the policy now). */
  onReload?: (cb: () => void) => void;
  metrics?: AgentMetrics;
  notify?: Notifier;
  /** After each round (tests, the textfile writer). */
  afterRound?: (round: RoundResult) => Promise<void> | void;
}

export interface RoundResult {
  ok: boolean;
  changed: number;
  error?: string;
  allocation?: Allocation;
}

/** Run until `stop` is aborted (or once). Returns the process exit code. */
export async function runAgent(o: AgentOptions): Promise<number> {
  const policy = new PolicyHolder(o.policyPath, o.log);
  await policy.refresh(true);
  o.metrics?.policyValid(policy.error === null);
  if (!policy.current) {
    o.log('error', 'agent not started: no valid policy', { policy: o.policyPath, error: policy.error });
    throw new UserError(policy.error ?? `no policy at ${o.policyPath}`);
  }
  return new AgentLoop(o, policy).run();
}

/** The agent's loop: a round when due, the audit on its cadence, then a sleep events may cut short. */
class AgentLoop {
  // Kept across rounds (ops/round-cache.ts): PIDs that matched no workload are not read again every
  // round (proc-scan.ts), and systemd's last answer is used again while the cgroup tree reads the same.
  private readonly processScan = new ProcessScanMemo();
  // The last read of the interrupt counters: each audit measures from the one before it.
  // The closing reads of the previous audit: the next audit's windows start there.
  private readonly interruptCounts: AuditWindows = { last: null, io: null };
  private readonly systemdMemo = new SystemdMemo();
  // The last full IRQ scan: a round re-reads only the managed IRQs until IRQs or NICs change.
  private readonly irqMemo = new IrqMemo();
  private readonly cache = { processes: this.processScan, systemd: this.systemdMemo, irqs: this.irqMemo };
  private readonly topology: TopologyHolder;
  private backoff: Backoff = NO_BACKOFF;
  private nextRaid = 0;
  private nextCheck = 0;
  private reload = false;
  private wake: ((now: boolean) => void) | null = null;
  // Set by every event (a write to a watched file, a probe's find, SIGHUP); one that arrives while a
  // round runs (which may have read the file just before the write) makes the next sleep short.
  private nudged = false;
  private readonly nudge = () => {
    this.nudged = true;
    this.wake?.(false);
  };
  private roundEndedAt = 0;
  private readonly watchers = new Map<string, FSWatcher>();
  private readonly dropIns: DropInWatch;
  private readyDone = false;
  private lastWatchdog = 0;

  constructor(
    private readonly o: AgentOptions,
    private readonly policy: PolicyHolder,
  ) {
    this.topology = new TopologyHolder(o.root);
    o.onReload?.(() => {
      this.reload = true;
      this.nudge();
    });
    o.stop.addEventListener('abort', () => this.wake?.(true), { once: true });
    // systemd's answer is forgotten when a set-property drop-in changes (what no cgroup file may show).
    this.dropIns = new DropInWatch(o.root, () => {
      this.systemdMemo.forget();
      this.nudge();
    });
  }

  async run(): Promise<number> {
    const o = this.o;
    try {
      for (;;) {
        const now = Date.now();
        if (o.notify?.watchdogMs && now - this.lastWatchdog >= o.notify.watchdogMs / 2) {
          this.lastWatchdog = now;
          await o.notify.watchdog();
        }
        if (await this.policy.refresh(this.reload)) this.backoff = NO_BACKOFF;
        this.reload = false;
        o.metrics?.policyValid(this.policy.error === null);

        const round = o.once || due(this.backoff, now) ? await this.round(now) : null;
        if (!this.readyDone) {
          this.readyDone = true;
          await o.notify?.ready(round?.ok ? 'converged' : 'running; last reconcile failed');
        }

        if (o.once) {
          const report = await this.hostCheck();
          logCheck(o, report);
          return round?.ok === false && report.status === 'OK'
            ? EXIT_STATUS.WARNING
            : EXIT_STATUS[report.status];
        }
        if (Date.now() >= this.nextCheck) await this.audit();
        if (o.stop.aborted) return 0;
        await this.sleep();
        if (o.stop.aborted) return 0;
      }
    } finally {
      for (const w of this.watchers.values()) w.close();
      this.dropIns.close();
      await o.notify?.stopping();
    }
  }

  /** One reconcile (RAID too when its slower cadence is due), then the backoff, watches and metrics. */
  private async round(now: number): Promise<RoundResult> {
    const o = this.o;
    const raidDue = o.once || now >= this.nextRaid;
    const round = await reconcile(o, this.policy, raidDue, this.cache, this.topology.current());
    if (raidDue && round.ok) this.nextRaid = now + o.raidIntervalMs;
    this.backoff = round.ok ? NO_BACKOFF : afterFailure(this.backoff, now, o.intervalMs, o.maxBackoffMs);
    o.metrics?.failures(this.backoff.failures);
    if (!round.ok) {
      o.log('error', 'reconcile failed; retrying with backoff', {
        error: round.error,
        failures: this.backoff.failures,
        retryInMs: this.backoff.nextAt - now,
      });
    }
    if (round.allocation) {
      watchWorkloads(o.root, round.allocation, this.watchers, this.nudge);
      recordPressure(o, round.allocation);
    }
    if (this.systemdMemo.systemdRuns && !o.once) this.dropIns.refresh();
    await o.afterRound?.(round);
    this.roundEndedAt = Date.now();
    return round;
  }

  private hostCheck(): Promise<CheckReport> {
    return hostCheck(this.o, this.policy, this.processScan, this.topology.current(), this.interruptCounts);
  }

  /** The full thread audit on its cadence: logged, and its counts exported. */
  private async audit(): Promise<void> {
    const o = this.o;
    this.nextCheck = Date.now() + o.checkIntervalMs;
    // Logged like `isolate check` (status and summary), so the journal of an agent host says what
    // each audit found, not only the metrics; an audit that cannot run is UNKNOWN, as there.
    const report = await this.hostCheck().catch((err: unknown) => {
      o.log('warn', 'check', {
        status: 'UNKNOWN',
        summary: err instanceof Error ? err.message : String(err),
      });
      return null;
    });
    if (!report) return;
    logCheck(o, report);
    // The counts, not the lists' lengths: the report lists at most 1,000 of each.
    o.metrics?.violations({
      user: report.counts.violations,
      kernel: report.counts.kernelViolations,
      workload: report.counts.outside,
    });
    o.metrics?.jvmOversized(report.jvmOversized);
    if (report.interrupts) o.metrics?.interrupts(report.interrupts);
    if (report.io) o.metrics?.io(report.io);
  }

  /** Until the interval (or the backoff) ends, or an event brings the next round forward. */
  private async sleep(): Promise<void> {
    const o = this.o;
    let sleepMs = Math.max(
      0,
      Math.min(o.intervalMs, due(this.backoff, Date.now()) ? o.intervalMs : this.backoff.nextAt - Date.now()),
    );
    // Never more than one round per MIN_NUDGE_GAP_MS from events, so a file that keeps changing
    // cannot spin the loop; a backoff is never cut short by them.
    const gap = () => Math.max(0, this.roundEndedAt + MIN_NUDGE_GAP_MS - Date.now());
    if (this.nudged && due(this.backoff, Date.now())) sleepMs = Math.min(sleepMs, gap());
    this.nudged = false;
    const probing = startProbe(o, this.processScan, this.nudge, sleepMs);
    await new Promise<void>((resolve) => {
      let t = setTimeout(resolve, sleepMs);
      this.wake = (now) => {
        clearTimeout(t);
        if (now) resolve();
        else t = setTimeout(resolve, gap());
      };
    });
    this.wake = null;
    probing.stop();
  }
}

/** The shortest time between the end of a round and a round brought forward by an event. */
const MIN_NUDGE_GAP_MS = 100;

/** Re-read sysfs only when the online lists change (hotplug), or every TOPOLOGY_REFRESH_MS anyway. */
const TOPOLOGY_REFRESH_MS = 300_000;

/** The topology the agent plans with: read again when its stamp changes (hotplug) or it is old. */
class TopologyHolder {
  private last: { stamp: string; at: number; topology: Topology } | null = null;
  constructor(private readonly root: string) {}

  current(): Topology {
    const stamp = topologyStamp(this.root);
    const now = Date.now();
    if (!this.last || this.last.stamp !== stamp || now - this.last.at > TOPOLOGY_REFRESH_MS) {
      this.last = { stamp, at: now, topology: readTopology(this.root) };
    }
    return this.last.topology;
  }
}

async function reconcile(
  o: AgentOptions,
  policy: PolicyHolder,
  raidDue: boolean,
  cache: { processes: ProcessScanMemo; systemd: SystemdMemo; irqs: IrqMemo },
  topology: Topology,
): Promise<RoundResult> {
  const t0 = performance.now();
  try {
    const out = await apply({
      root: o.root,
      policySource: policy.current!,
      observeRaid: raidDue,
      topology,
      cache,
      log: o.log,
      notice: (m) => o.log('warn', m),
    });
    // IRQ numbers are not stable: a driver reload or hot-plug made this round read every IRQ again.
    const rescan = cache.irqs.takeRescan();
    if (rescan && rescan !== 'first round' && rescan !== 'age')
      o.log('info', 'IRQs or NICs changed; rescanned', { reason: rescan });
    const applied = out.steps.filter((s) => s.status === 'applied').map((s) => s.change);
    for (const c of applied) {
      o.log('info', 'corrected', {
        workload: c.workload,
        target: cgroupTarget(c),
        setting: c.setting,
        from: c.from,
        to: c.to,
        reason: 'the host differed from the policy',
        note: c.note,
      });
    }
    o.metrics?.reconciled((performance.now() - t0) / 1000, true, Date.now());
    o.metrics?.corrected(applied);
    o.metrics?.systemdAsked(cache.systemd.answeredBySystemd);
    if (out.allocation) o.metrics?.allocation(out.allocation);
    if (out.raid) o.metrics?.raid(out.raid);
    return { ok: true, changed: out.changed, allocation: out.allocation };
  } catch (err) {
    o.metrics?.reconciled((performance.now() - t0) / 1000, false, Date.now());
    return { ok: false, changed: 0, error: err instanceof Error ? err.message : String(err) };
  }
}

function recordPressure(o: AgentOptions, a: Allocation): void {
  o.metrics?.pressureOf(
    a.workloads.map((w) => ({ workload: w.name, target: w.target })),
    (target) => readPsi(o.root, target),
  );
}

/** A host check's result in the log, as `isolate check` reports it: `warn` unless OK. */
function logCheck(o: AgentOptions, report: CheckReport): void {
  o.log(report.status === 'OK' ? 'info' : 'warn', 'check', {
    status: report.status,
    summary: report.summary,
    // How big the audit was and what its /proc scan took: its cost on this host, for the operator.
    processes: report.stats.processes,
    threads: report.stats.threads,
    scanMs: report.stats.scanMs,
  });
}

/**
 * The agent exports the audit's counts and logs its summary; it never prints the lists, so it keeps
 * a few threads of each (enough for the summary's example), not the 1,000 `isolate check` lists.
 */
const AGENT_LIST_CAP = 20;

/** The closing reads of the previous audit (interrupts, I/O): where the next audit's windows start. */
interface AuditWindows {
  last: InterruptCounts | null;
  io: IoCounts | null;
}

/**
 * The audit plans with what the round before it knew: the topology, and which processes to read
 * again (a view of the rounds' memory that leaves the probe's births alone, proc-scan.ts).
 */
function hostCheck(
  o: AgentOptions,
  policy: PolicyHolder,
  processScan: ProcessScanMemo,
  topology: Topology,
  interruptCounts: AuditWindows,
): Promise<CheckReport> {
  return check({
    // From the previous audit's read, with no wait of its own (the first audit: over its own run).
    interrupts: {
      windowMs: 0,
      since: interruptCounts.last,
      read: (c) => {
        interruptCounts.last = c;
      },
    },
    io: {
      since: interruptCounts.io,
      read: (c) => {
        interruptCounts.io = c;
      },
    },
    root: o.root,
    policySource: policy.current!,
    observeRaid: false,
    listCap: AGENT_LIST_CAP,
    topology,
    cache: { processes: processScan.view() ?? undefined },
  });
}
