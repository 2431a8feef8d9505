// What the agent remembers between rounds about processes that matched no workload, so that a host
// with thousands of processes is not re-read in full every second. Reading every /proc/<pid>/cmdline
// (the kernel walks each process's memory to print it) was 3 % of a core at a 1 s interval with
// 2,000 processes (bench/agent-idle.mjs … process).
//
// What stays exact: a PID born while the agent runs is read in every round of its first `youngMs`
// (and at least `youngScans` rounds), so a start script that execs into Kafka is seen as Kafka; a PID
// that matched is re-read every round; and every PID is read again at each full scan, every
// `fullScanMs`. The one thing that waits up to `fullScanMs` (2 min): a process that ran for more than
// `youngMs` under another command line and then execs into a matching one. (Brokers run as systemd
// units or in a cgroup, matched by `systemdUnit:`/`cgroup:`, never wait.) A remembered PID is the
// process with that PID *and start time* (/proc/PID/stat field 22): a PID the kernel handed out again
// is a new process, read at once, even when a wrap or a burst of births hid its birth.
//
// Two cheaper looks at the kernel's PID counter (the last field of /proc/loadavg: the last PID the
// kernel handed out, threads included):
// - a round does not list /proc again (with 20,000 threads the kernel's readdir of /proc walks every
//   one of them, ~5-8 ms a round) but looks up only the PIDs born since the last round, until the
//   next full listing (once every `fullScanMs`) or a burst of births;
// - between rounds the agent probes the PIDs born since the last look (`births`), so a new broker is
//   placed in a fraction of the interval instead of waiting for the next round.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { readHeadSync } from './fsutil.js';
import { procStatFields } from '../sys/read.js';

export interface ProcessScanOptions {
  /** Every PID is read again at least this often (spread over the period), and /proc is listed in full. */
  fullScanMs: number;
  /** A new PID is read in this many scans before it is trusted not to match... */
  youngScans: number;
  /** ...and for this long after it was first seen (PIDs already there at the first scan: not young). */
  youngMs: number;
}

// Every /proc/<pid>/cmdline once (~40 ms with 2,000 processes, more in a running agent): every 2 min
// that is ~0.05 % of a core; every 30 s it was 0.13 %, a quarter of the agent's budget.
export const DEFAULT_PROCESS_SCAN: ProcessScanOptions = {
  fullScanMs: 120_000,
  youngScans: 3,
  youngMs: 10_000,
};

/** A process's start time in clock ticks since boot (field 22 of /proc/PID/stat); null when gone. */
export function startTimeOf(procDir: string, pid: number): string | null {
  return procStatFields(procDir, pid)?.[19] ?? null;
}

/** More births than this between two probes is a busy host: the next round reads them all instead. */
export const PROBE_MAX_BIRTHS = 64;

/** The last PID the kernel allocated in this PID namespace (/proc/loadavg's last field); null when unknown. */
export function readLastPid(procDir: string): number | null {
  const text = readHeadSync(`${procDir}/loadavg`, 256)?.trimEnd();
  const last = text?.slice(text.lastIndexOf(' ') + 1);
  return last && /^\d+$/.test(last) ? Number(last) : null;
}

/** Which processes a `process:` workload selects; every given criterion must hold. */
export interface ProcessMatcher {
  /** Regex source matched against the command line (arguments joined by spaces). */
  cmdline?: string;
  /** Executable path (exact) or basename, compared with the `/proc/<pid>/exe` link. */
  exe?: string;
  /** User name or numeric uid (real uid). */
  user?: string | number;
}

/** The process a task belongs to (`Tgid:` of its status; the PID itself for a process); null when gone. */
export function tgidOf(procDir: string, pid: number): number | null {
  const status = readHeadSync(`${procDir}/${pid}/status`, 512);
  const tgid = status ? /^Tgid:\s+(\d+)/m.exec(status) : null;
  return tgid ? Number(tgid[1]) : null;
}

/** A PID's task: a process (thread-group leader, listed in /proc), a thread of one, or not there. */
function taskKind(procDir: string, pid: number): 'process' | 'thread' | 'absent' {
  const tgid = tgidOf(procDir, pid);
  if (tgid === null) return 'absent';
  return tgid === pid ? 'process' : 'thread';
}

/** What the last round scanned with: the probe between rounds reads with the same matchers. */
export interface ScanTarget {
  root: string;
  /** `<root>/proc`, joined once: the probe runs several times a second. */
  procDir: string;
  matchers: Record<string, ProcessMatcher>;
}

/** What a memory of scans is valid for: a change of root or matchers makes it another scan. */
function scanSignature(root: string, matchers: Record<string, ProcessMatcher>): string {
  return `${root}\0${JSON.stringify(matchers)}`;
}

/** What a scan of /proc (observe.ts matchProcesses) asks of a memory of earlier scans. */
export interface ProcessScanner {
  begin(root: string, matchers: Record<string, ProcessMatcher>): void;
  list(procDir: string): { names: Iterable<string>; complete: boolean };
  skip(pid: number): boolean;
  saw(pid: number, matched: boolean): void;
  end(present: ReadonlySet<number>): void;
}

export class ProcessScanMemo implements ProcessScanner {
  /** PID → its start time, and scans in a row (since when) in which it matched nothing. */
  private quiet = new Map<number, { start: string | null; scans: number; since: number }>();
  /** The first scan after (re)start: what it finds was there before the agent, not born young. */
  private first = true;
  private scanAt = 0;
  /** PIDs that matched a workload in the last scan that read them. */
  private matched = new Set<number>();
  private nextListing = 0;
  private signature = '';
  /** This scan reads every PID again (once a period: PIDs that ended are forgotten, none is missed). */
  private listAll = true;
  /**
   * How a listing of all of /proc outside a full scan tells a new process under a remembered PID:
   * the kernel hands PIDs out in order, so the counters of the last round (`after`) and of this one
   * (`upTo`) say which PIDs may belong to a new process: those between them, or after a wrap of the
   * counter those above the old one and up to the new one. Without a counter, each remembered PID's
   * start time says it. Null: this scan looks up only the PIDs born since the last round.
   */
  private reused: { after: number; upTo: number } | 'start' | null = 'start';
  /** The PID counter at the last listing, and PIDs born then but not visible yet (looked up once more). */
  private listing: {
    lastPid: number;
    unseen: Map<number, number>;
  } | null = null;
  /** PIDs read that matched nothing but are not trusted yet (see `skip`). */
  private young = new Set<number>();
  private scanned: ScanTarget | null = null;
  /** The last PID the probe (or a round's listing) has accounted for. */
  private probeCursor: number | null = null;
  /** PIDs the probe saw born but not (yet) matching: re-read in the next probes (exec after fork). */
  private pending = new Map<number, number>();

  constructor(
    private readonly options: ProcessScanOptions = DEFAULT_PROCESS_SCAN,
    // A monotonic clock: a wall clock stepped back (NTP, an operator) would hold every full scan back.
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Start a scan for these matchers; a change of matchers forgets everything. */
  begin(root: string, matchers: Record<string, ProcessMatcher>): void {
    const signature = scanSignature(root, matchers);
    if (signature !== this.signature) {
      this.signature = signature;
      this.quiet.clear();
      this.first = true;
      this.matched.clear();
      this.young.clear();
      this.listing = null;
      this.nextListing = 0;
    }
    const procDir = this.scanned?.root === root ? this.scanned.procDir : path.join(root, 'proc');
    this.scanned = { root, procDir, matchers };
    const t = this.now();
    this.scanAt = t;
    this.listAll = t >= this.nextListing;
    if (this.listAll) this.nextListing = t + this.options.fullScanMs;
  }

  /**
   * The PIDs this round must look at. A full listing of `<root>/proc` once a period, after a burst
   * of births or when the counter is unknown (`complete`); otherwise only the PIDs that are not
   * trusted yet (young, or matching), those due for their re-read, plus the processes born since the
   * last round (each looked up: a process joins, a thread does not) — a host's thousands of settled
   * PIDs are not even visited.
   * The counter is read first, so a task born during a listing is looked up by the next round.
   * Throws like readdirSync.
   */
  list(procDir: string): { names: Iterable<string>; complete: boolean } {
    const lastPid = readLastPid(procDir);
    const l = this.listing;
    this.probeCursor = lastPid;
    // Replaced, not cleared (see `due`).
    if (this.pending.size > 0) this.pending = new Map();
    if (
      !this.listAll &&
      lastPid !== null &&
      l &&
      lastPid >= l.lastPid &&
      lastPid - l.lastPid <= PROBE_MAX_BIRTHS
    ) {
      const visit = new Set<number>([...this.young, ...this.matched]);
      const pids = [...l.unseen.keys()];
      for (let pid = l.lastPid + 1; pid <= lastPid; pid++) pids.push(pid);
      for (const pid of pids) {
        const kind = taskKind(procDir, pid);
        if (kind === 'process') {
          // A new process, even where an ended one had this PID before the counter wrapped: young.
          this.quiet.delete(pid);
          visit.add(pid);
        }
        // Not visible yet (its PID is handed out before its task is attached), or already gone: once more.
        const tries = (l.unseen.get(pid) ?? 0) + 1;
        if (kind === 'absent' && tries < 2) l.unseen.set(pid, tries);
        else l.unseen.delete(pid);
      }
      l.lastPid = lastPid;
      this.reused = null;
      return { names: [...visit].map(String), complete: false };
    }
    const names = readdirSync(procDir);
    this.reused = lastPid !== null && l ? { after: l.lastPid, upTo: lastPid } : 'start';
    this.listing = lastPid === null ? null : { lastPid, unseen: new Map() };
    return { names, complete: true };
  }

  /**
   * Whether this scan may skip reading the PID: a trusted quiet PID, outside a full scan. When /proc
   * was listed in full for another reason (a burst of births, a wrap of the PID counter), the PID
   * must still be the process remembered: born before the burst, or with the start time remembered.
   */
  skip(pid: number): boolean {
    if (this.listAll) return false;
    const q = this.quiet.get(pid);
    if (q === undefined || !this.trusted(q)) return false;
    const reused = this.reused;
    const isNew =
      reused === null
        ? false
        : reused === 'start'
          ? !this.scanned || startTimeOf(this.scanned.procDir, pid) !== q.start
          : reused.upTo >= reused.after
            ? pid > reused.after && pid <= reused.upTo
            : pid > reused.after || pid <= reused.upTo;
    if (isNew) {
      this.quiet.delete(pid);
      return false;
    }
    this.young.delete(pid);
    return true;
  }

  /** Quiet for `youngScans` scans and `youngMs`: trusted not to match until the next full scan. */
  private trusted(q: { scans: number; since: number }): boolean {
    return q.scans >= this.options.youngScans && this.scanAt - q.since >= this.options.youngMs;
  }

  /** What reading the PID found (it was read: `skip` said no). */
  saw(pid: number, matched: boolean): void {
    if (matched) {
      this.quiet.delete(pid);
      this.young.delete(pid);
      this.matched.add(pid);
      return;
    }
    this.matched.delete(pid);
    const start = this.scanned ? startTimeOf(this.scanned.procDir, pid) : null;
    const q = this.quiet.get(pid);
    if (!q || q.start !== start) {
      // Not seen before, or a new process under a PID seen before.
      this.quiet.set(pid, { start, scans: 1, since: this.first ? Number.NEGATIVE_INFINITY : this.scanAt });
      this.young.add(pid);
      return;
    }
    q.scans++;
    // A trusted PID read again at a full scan stays trusted: not young again.
    if (this.trusted(q)) this.young.delete(pid);
    else this.young.add(pid);
  }

  /** Forget PIDs that are gone (a reused PID starts young again). */
  end(present: ReadonlySet<number>): void {
    this.first = false;
    for (const pid of this.quiet.keys()) if (!present.has(pid)) this.quiet.delete(pid);
    for (const pid of this.matched) if (!present.has(pid)) this.matched.delete(pid);
    for (const pid of this.young) if (!present.has(pid)) this.young.delete(pid);
  }

  /**
   * A scan that reads what the last round would read again — the PIDs not trusted yet and those
   * that matched — and changes nothing here: the host audit plans with it right after a round,
   * without reading every PID again or taking the births the probe is there to find. Other
   * matchers than the round's: every PID is read. Null before a first round.
   */
  view(): ProcessScanner | null {
    if (this.first || !this.scanned) return null;
    const signature = this.signature;
    const again = [...this.young, ...this.matched].map(String);
    let same = true;
    return {
      begin: (root, matchers) => {
        same = scanSignature(root, matchers) === signature;
      },
      list: (procDir) =>
        same ? { names: again, complete: false } : { names: readdirSync(procDir), complete: true },
      skip: () => false,
      saw: () => {},
      end: () => {},
    };
  }

  /** Whether the last scan found this PID matching a workload (so it is already being placed). */
  isMatched(pid: number): boolean {
    return this.matched.has(pid);
  }

  /** The root and matchers of the last round; null before one, or when nothing matches by process. */
  target(): ScanTarget | null {
    return this.scanned && Object.keys(this.scanned.matchers).length > 0 ? this.scanned : null;
  }

  /**
   * The PIDs a probe should read now: those born since the last look (when there are at most
   * `max` of them; more is left to the next round) and those a recent probe saw not matching yet.
   */
  births(lastPid: number | null, max: number = PROBE_MAX_BIRTHS): number[] {
    const again = [...this.pending.keys()];
    if (lastPid === null || this.probeCursor === null || lastPid === this.probeCursor) return again;
    const from = this.probeCursor;
    this.probeCursor = lastPid;
    if (lastPid < from || lastPid - from > max) return again; // wrapped, or a burst: the round reads it
    const born: number[] = [];
    for (let pid = from + 1; pid <= lastPid; pid++) if (!this.pending.has(pid)) born.push(pid);
    return [...again, ...born];
  }

  /** What a probe found for a PID: `young` ones (not matching yet) are read again by the next probes. */
  probed(pid: number, outcome: 'young' | 'settled'): void {
    if (outcome === 'settled') {
      this.pending.delete(pid);
      return;
    }
    const n = (this.pending.get(pid) ?? 0) + 1;
    if (n >= this.options.youngScans) this.pending.delete(pid);
    else this.pending.set(pid, n);
  }
}
