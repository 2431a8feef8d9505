// `isolate agent`: every interval observe → plan → apply only what differs → verify, through the
// same application layer as the CLI. The real state is observed every round; nothing is assumed
// from what was last written, so drift of any kind (a hand-made write, systemd rewriting on
// daemon-reload, a unit restarted into a fresh cgroup, a new YARN container) is corrected.
import { existsSync, type FSWatcher, watch } from 'node:fs';
import type { CheckReport } from '../audit/report.js';
import { cgroupDir } from '../cgroup/fsutil.js';
import { bornSince, probeBirths } from '../cgroup/observe.js';
import { ProcessScanMemo } from '../cgroup/proc-scan.js';
import { readPsi } from '../cgroup/psi.js';
import { UserError } from '../model/errors.js';
import { cgroupTarget } from '../model/describe.js';
import { EXIT_STATUS } from '../model/finding.js';
import type { LogFn } from '../model/log.js';
import type { Allocation } from '../model/plan.js';
import { apply } from '../ops/apply.js';
import { check } from '../ops/check.js';
import { PlanMemo } from '../ops/plan.js';
import { SystemdMemo } from '../ops/systemd-memo.js';
import type { Topology } from '../model/topology.js';
import { KeptFiles } from '../sys/kept-files.js';
import { readTopology, topologyStamp } from '../topology/read.js';
import { afterFailure, type Backoff, due, NO_BACKOFF } from './backoff.js';
import { DropInWatch } from './dropins.js';
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
  /**
   * After each thread audit (the first one follows the first round): hand the garbage of that work
   * back to the kernel now (agent/heap.ts). Returns whether it could.
   */
  compactHeap?: () => boolean;
  /** Resident memory in bytes (tests; default process.memoryUsage.rss). */
  rss?: () => number;
  /** The least time between a thread audit and a heap compaction, either way (default: heapKeeper's). */
  heavyGapMs?: number;
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

  // Kept across rounds: PIDs that matched no workload are not re-read every second (proc-scan.ts).
  const processScan = new ProcessScanMemo();
  // And the last plan that changed nothing: a round that observes the same host plans the same.
  const planMemo = new PlanMemo();
  // And systemd's last answer about the units: asked again when the cgroup tree shows a change.
  const systemdMemo = new SystemdMemo();
  // And the cgroup files and mount table a round reads, open: each round reads them again from offset 0.
  const keptFiles = new KeptFiles(KEPT_FILES);
  let backoff: Backoff = NO_BACKOFF;
  let nextRaid = 0;
  let nextCheck = 0;
  let reload = false;
  let wake: ((now: boolean) => void) | null = null;
  // Set by every event (a write to a watched file, a probe's find, SIGHUP); one that arrives while a
  // round runs (which may have read the file just before the write) makes the next sleep short.
  let nudged = false;
  const nudge = () => {
    nudged = true;
    wake?.(false);
  };
  let roundEndedAt = 0;
  o.onReload?.(() => {
    reload = true;
    nudge();
  });
  o.stop.addEventListener('abort', () => wake?.(true), { once: true });
  const watchers = new Map<string, FSWatcher>();
  // systemd's answer is forgotten when a set-property drop-in changes (what no cgroup file may show).
  const dropIns = new DropInWatch(o.root, () => {
    systemdMemo.forget();
    nudge();
  });
  const heap = heapKeeper(o);
  let readyDone = false;
  let lastWatchdog = 0;

  try {
    for (;;) {
      const now = Date.now();
      if (o.notify?.watchdogMs && now - lastWatchdog >= o.notify.watchdogMs / 2) {
        lastWatchdog = now;
        await o.notify.watchdog();
      }
      if (await policy.refresh(reload)) backoff = NO_BACKOFF;
      reload = false;
      o.metrics?.policyValid(policy.error === null);

      let round: RoundResult | null = null;
      if (o.once || due(backoff, now)) {
        const raidDue = o.once || now >= nextRaid;
        round = await reconcile(o, policy, raidDue, { processScan, planMemo, keptFiles, systemdMemo });
        if (raidDue && round.ok) nextRaid = now + o.raidIntervalMs;
        backoff = round.ok ? NO_BACKOFF : afterFailure(backoff, now, o.intervalMs, o.maxBackoffMs);
        o.metrics?.failures(backoff.failures);
        if (!round.ok) {
          o.log('error', 'reconcile failed; retrying with backoff', {
            error: round.error,
            failures: backoff.failures,
            retryInMs: backoff.nextAt - now,
          });
        }
        if (round.allocation) {
          watchWorkloads(o, round.allocation, watchers, nudge);
          recordPressure(o, round.allocation);
        }
        if (systemdMemo.systemdRuns && !o.once) dropIns.refresh();
        await o.afterRound?.(round);
        roundEndedAt = Date.now();
      }
      if (!readyDone) {
        readyDone = true;
        await o.notify?.ready(round?.ok ? 'converged' : 'running; last reconcile failed');
      }

      if (o.once) {
        const report = await hostCheck(o, policy, processScan);
        logCheck(o, report);
        return round?.ok === false && report.status === 'OK'
          ? EXIT_STATUS.WARNING
          : EXIT_STATUS[report.status];
      }
      // An audit due within a quiet gap after a compaction waits for the gap's end (heapKeeper).
      const audited = Date.now() >= nextCheck && heap.auditMayRun(Date.now());
      if (audited) {
        nextCheck = Date.now() + o.checkIntervalMs;
        // Logged like `isolate check` (status and summary), so the journal of an agent host says what
        // each audit found, not only the metrics; an audit that cannot run is UNKNOWN, as there.
        const report = await hostCheck(o, policy, processScan).catch((err: unknown) => {
          o.log('warn', 'check', {
            status: 'UNKNOWN',
            summary: err instanceof Error ? err.message : String(err),
          });
          return null;
        });
        if (report) {
          logCheck(o, report);
          // The counts, not the lists' lengths: the report lists at most 1,000 of each.
          o.metrics?.violations({
            user: report.counts.violations,
            kernel: report.counts.kernelViolations,
            workload: report.counts.outside,
          });
        }
      }
      heap.afterRound(audited);
      if (o.stop.aborted) return 0;
      let sleepMs = Math.max(
        0,
        Math.min(o.intervalMs, due(backoff, Date.now()) ? o.intervalMs : backoff.nextAt - Date.now()),
      );
      // Never more than one round per MIN_NUDGE_GAP_MS from events, so a file that keeps changing
      // cannot spin the loop; a backoff is never cut short by them.
      const gap = () => Math.max(0, roundEndedAt + MIN_NUDGE_GAP_MS - Date.now());
      if (nudged && due(backoff, Date.now())) sleepMs = Math.min(sleepMs, gap());
      nudged = false;
      const probing = startProbe(o, processScan, nudge, sleepMs);
      await new Promise<void>((resolve) => {
        let t = setTimeout(resolve, sleepMs);
        wake = (now) => {
          clearTimeout(t);
          if (now) resolve();
          else t = setTimeout(resolve, gap());
        };
      });
      wake = null;
      probing.stop();
      if (o.stop.aborted) return 0;
    }
  } finally {
    for (const w of watchers.values()) w.close();
    dropIns.close();
    keptFiles.closeAll();
    await o.notify?.stopping();
  }
}

/**
 * Resident memory above its working level that makes the agent compact again between audits: the
 * rounds leave garbage in V8's old generation that only a full GC frees, and a build without these
 * compactions reached 68.8 MB in 10 minutes on the bench (bench/agent-idle.mjs, 2,000 processes;
 * README). Much of the growth measured then outside V8's heap was the recordings of stopped GC
 * profilers (metrics.ts); without them it grew ~2 KiB/s and compacted every ~8-9 minutes (~50-80 ms of
 * CPU each time, 30-56 ms of it on the main thread), most of that the garbage of prom-client's `gc`
 * performance observer, left out since (metrics.ts collectDefaultMetricsButGc).
 */
export const HEAP_GROWTH_BYTES = 2 ** 20;

/**
 * Rounds after a compaction before resident memory is measured as its working level. A compaction
 * leaves it ~2 MB lower than the rounds keep it (V8 shrinks the young generation, which then fills
 * again, ~0.1 MB a round for ~15 rounds on the bench): measured straight after, the next compaction
 * fired on the refill, not on growth — twice more in the two rounds after the start-up audit, each
 * one ~50 ms of CPU on the main thread and V8's workers (debug log and 5 s CPU slices of the bench).
 */
export const HEAP_SETTLE_ROUNDS = 30;

/**
 * The least time between a thread audit and a heap compaction that resident memory's growth asks for,
 * in either order: the two largest bursts of the agent's CPU with 2,000 processes (an audit ~20-25 ms; a
 * compaction 40-80 ms with V8's GC helpers, ~35-50 ms on the main thread alone, which the executable's
 * --single-threaded-gc keeps it to), and in one 60 s window together they were what put that
 * window over the 0.5 % target (bench/agent-idle.mjs, AGENT_CPU_TRACE=1: the audit's 5 s slice and
 * the compaction's next to it). A compaction that growth asks for right after an audit waits until
 * the gap has passed; an audit due within the gap after a compaction waits as long (at most a
 * minute late, every ten). The start-up audit's compaction does not wait: it is before any window.
 */
export const HEAVY_GAP_MS = 60_000;

/**
 * The heap compactions (agent/heap.ts): after the start-up audit, and later, after an audit or between
 * audits, when resident memory has grown. A later audit no longer grows it by itself: its scan decides
 * each cgroup once (audit/threads.ts) and allocates ~1.3 MB, which the young generation's collections
 * free; compacting after every audit anyway cost 30-50 ms of CPU (main thread and V8's workers) in the
 * audit's 60 s window. Growth found within HEAVY_GAP_MS of an audit waits for the gap's end, so that
 * no 60 s window holds both.
 */
function heapKeeper(o: AgentOptions): {
  /**
   * After each round: the start-up audit compacts; later, any round once resident memory has grown
   * and HEAVY_GAP_MS have passed since the last audit.
   */
  afterRound: (audited: boolean) => void;
  /** Whether an audit that is due may run now: not within HEAVY_GAP_MS after a compaction. */
  auditMayRun: (now: number) => boolean;
} {
  const rss = o.rss ?? (() => process.memoryUsage.rss());
  // Half the audit interval when that is shorter: with audits every 10 s, a compaction still finds a gap.
  const gap = o.heavyGapMs ?? Math.min(HEAVY_GAP_MS, o.checkIntervalMs / 2);
  // Rounds since the last compaction (null before the first), and the level measured once settled.
  let roundsSince: number | null = null;
  let working: number | null = null;
  // When the last compaction ended, and when the last audit did (never: any audit or compaction may run).
  let compactedAt = -Infinity;
  let auditedAt = -Infinity;
  const compact = (afterAudit: boolean) => {
    if (!o.compactHeap) return;
    const before = rss();
    const started = performance.now();
    if (!o.compactHeap()) return;
    const ms = Math.round(performance.now() - started);
    const after = rss();
    o.log('debug', afterAudit ? 'heap compacted after the thread audit' : 'heap compacted as it grew', {
      rssBeforeMiB: +(before / 2 ** 20).toFixed(1),
      rssAfterMiB: +(after / 2 ** 20).toFixed(1),
      ms,
      ...(afterAudit || working === null ? {} : { workingMiB: +(working / 2 ** 20).toFixed(1) }),
    });
    roundsSince = 0;
    working = null;
    compactedAt = Date.now();
  };
  return {
    afterRound: (audited) => {
      const now = Date.now();
      const startUp = audited && roundsSince === null;
      if (audited) auditedAt = now;
      // Every round, audit or not: the rounds since the last compaction, and the level once settled.
      if (roundsSince !== null && working === null && ++roundsSince >= HEAP_SETTLE_ROUNDS) working = rss();
      const grown = working !== null && now - auditedAt >= gap && rss() > working + HEAP_GROWTH_BYTES;
      if (startUp || grown) compact(audited);
    },
    auditMayRun: (now) => now - compactedAt >= gap,
  };
}

/** The shortest time between the end of a round and a round brought forward by an event. */
const MIN_NUDGE_GAP_MS = 100;

/**
 * The probe for new matching processes looks once between two rounds, half an interval after the
 * round (not under 100 ms): a new broker then waits half an interval at most, not a whole one. Not
 * more often: on the VMs this was measured on, each wake-up of an idle Node.js process costs ~0.3 ms
 * of CPU (an empty 250 ms timer: 0.2 % of a core, a 1 s one 0.08 %), and the three more a second of
 * a quarter-interval probe were 11-15 % of the agent's idle cost (bench/agent-idle.mjs, side by side).
 */
export function probePeriodMs(intervalMs: number): number {
  return Math.max(100, Math.floor(intervalMs / 2));
}

/**
 * Between rounds, look for processes born since the last round that a `process:` matcher selects
 * (proc-scan.ts): a new broker then waits a fraction of the interval, not the rest of it. Costs one
 * read of /proc/loadavg per probe while no task is born; nothing without process matchers. Looks
 * at once (a process born while the round ran), then every probe period until `sleepMs` is nearly
 * over: never in the last half period, where the round's own timer wakes the agent anyway.
 */
function startProbe(
  o: AgentOptions,
  memo: ProcessScanMemo,
  nudge: () => void,
  sleepMs: number,
): { stop: () => void } {
  if (!memo.target() || o.once) return { stop: () => {} };
  let busy = false;
  const tick = () => {
    if (busy) return;
    // Nearly every tick finds nothing born: decided without a promise. (A timer's exception would
    // end the agent; the round reads /proc itself and reports what fails there.)
    let pids: number[];
    try {
      pids = bornSince(memo);
    } catch {
      return;
    }
    if (pids.length === 0) return;
    busy = true;
    probeBirths(memo, pids)
      .then((pid) => {
        if (pid === null) return;
        o.log('debug', 'new matching process; reconciling now', { process: pid });
        nudge();
      })
      .catch(() => {})
      .finally(() => {
        busy = false;
      });
  };
  tick();
  const period = probePeriodMs(o.intervalMs);
  const end = Date.now() + sleepMs;
  let t: ReturnType<typeof setTimeout> | undefined;
  const next = () => {
    if (Date.now() + period > end - period / 2) return;
    t = setTimeout(() => {
      tick();
      next();
    }, period);
  };
  next();
  return { stop: () => clearTimeout(t) };
}

/**
 * Files the agent keeps open (sys/kept-files.ts): the mount table and 10-20 files in each observed
 * cgroup (the workloads' cgroups and their ancestors; on a systemd host also every top-level unit and
 * slice, read for their cpuset files). Past that, the oldest kept one is closed for each new one; far under the 1,024
 * descriptors a service gets by default.
 */
const KEPT_FILES = 512;

/** Re-read sysfs only when the online lists change (hotplug), or every TOPOLOGY_REFRESH_MS anyway. */
const TOPOLOGY_REFRESH_MS = 300_000;
let cachedTopology: { root: string; stamp: string; at: number; topology: Topology } | null = null;

function topologyFor(root: string): Topology {
  const stamp = topologyStamp(root);
  const now = Date.now();
  if (
    !cachedTopology ||
    cachedTopology.root !== root ||
    cachedTopology.stamp !== stamp ||
    now - cachedTopology.at > TOPOLOGY_REFRESH_MS
  ) {
    cachedTopology = { root, stamp, at: now, topology: readTopology(root) };
  }
  return cachedTopology.topology;
}

/** What the agent keeps from one round to the next to make the next one cheaper (never what it wrote). */
interface RoundMemory {
  processScan: ProcessScanMemo;
  planMemo: PlanMemo;
  keptFiles: KeptFiles;
  systemdMemo: SystemdMemo;
}

async function reconcile(
  o: AgentOptions,
  policy: PolicyHolder,
  raidDue: boolean,
  memory: RoundMemory,
): Promise<RoundResult> {
  const t0 = performance.now();
  try {
    const out = await apply({
      root: o.root,
      policySource: policy.current!,
      observeRaid: raidDue,
      topology: topologyFor(o.root),
      ...memory,
      log: o.log,
      notice: (m) => o.log('warn', m),
    }).finally(() => memory.keptFiles.endRound());
    const applied = out.steps.filter((s) => s.status === 'applied').map((s) => s.change);
    for (const c of applied) {
      o.log('info', 'corrected', {
        workload: c.workload,
        target: cgroupTarget(c),
        setting: c.setting,
        from: c.from,
        to: c.to,
        reason: 'the host differed from the policy',
        ...(c.note ? { note: c.note } : {}),
      });
    }
    o.metrics?.reconciled((performance.now() - t0) / 1000, true, Date.now());
    o.metrics?.corrected(applied);
    o.metrics?.systemdAsked(memory.systemdMemo.stats.asked);
    if (out.allocation) o.metrics?.allocation(out.allocation);
    if (out.raid) o.metrics?.raid(out.raid);
    return { ok: true, changed: out.changed, ...(out.allocation ? { allocation: out.allocation } : {}) };
  } catch (err) {
    o.metrics?.reconciled((performance.now() - t0) / 1000, false, Date.now());
    return { ok: false, changed: 0, error: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * The kernel says sooner than the next round: `cgroup.events` when a watched cgroup gains or loses
 * processes, and an inotify IN_MODIFY on a cpuset file when anyone writes it (the VFS reports every
 * write(2), cgroupfs included) — a hand-made write or systemd's re-realization is corrected at
 * once, not at the next round. The agent's own writes wake it too: one extra round that finds
 * nothing to do.
 */
const WATCHED_FILES = ['cgroup.events', 'cpuset.cpus', 'cpuset.mems', 'cpuset.cpus.partition'];

function watchWorkloads(
  o: AgentOptions,
  a: Allocation,
  watchers: Map<string, FSWatcher>,
  nudge: () => void,
): void {
  for (const w of a.workloads) {
    for (const name of WATCHED_FILES) {
      const file = `${cgroupDir(o.root, w.target)}/${name}`;
      // Not there yet (a workload that does not run, a controller not enabled): a failed watch
      // costs an exception every round, a look costs one access(2).
      if (watchers.has(file) || !existsSync(file)) continue;
      try {
        const watcher = watch(file, { persistent: false }, (event) => {
          // The cgroup went away (a unit restarted into a fresh one): watch its successor next round.
          if (event === 'rename') {
            watcher.close();
            watchers.delete(file);
          }
          nudge();
        });
        watcher.on('error', () => {
          watcher.close();
          watchers.delete(file);
        });
        watchers.set(file, watcher);
      } catch {
        // Gone between the look and the watch, or not watchable: try again next round.
      }
    }
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

/**
 * The audit plans with what the round before it knew: the topology, and which processes to read
 * again (a view of the rounds' memory that leaves the probe's births alone, proc-scan.ts).
 */
function hostCheck(
  o: AgentOptions,
  policy: PolicyHolder,
  processScan: ProcessScanMemo,
): Promise<CheckReport> {
  const view = processScan.view();
  return check({
    root: o.root,
    policySource: policy.current!,
    observeRaid: false,
    listCap: AGENT_LIST_CAP,
    topology: topologyFor(o.root),
    ...(view ? { processScan: view } : {}),
  });
}
