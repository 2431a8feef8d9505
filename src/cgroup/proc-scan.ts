// What the agent remembers between rounds about processes that matched no workload, so that a host
// with thousands of processes is not re-read in full every second. Reading every /proc/<pid>/cmdline
// (the kernel walks each process's memory to print it) was 3 % of a core at a 1 s interval with
// 2,000 processes (bench/agent-idle.mjs … process).
//
// What stays exact: a new PID is read in its first rounds (so a process that is exec'd into Kafka
// by its start script right after fork is seen as Kafka), a PID that matched is re-read every round,
// and every PID is re-read at least every `fullScanMs`. The one thing that waits up to `fullScanMs`:
// a process that has run for several rounds under another command line and then execs into a
// matching one.

export interface ProcessScanOptions {
  /** Every PID is read again at least this often. */
  fullScanMs: number;
  /** A new PID is read in this many scans before it is trusted not to match. */
  youngScans: number;
}

export const DEFAULT_PROCESS_SCAN: ProcessScanOptions = { fullScanMs: 30_000, youngScans: 3 };

export class ProcessScanMemo {
  /** PID → scans in a row in which it matched nothing. */
  private quiet = new Map<number, number>();
  private nextFull = 0;
  private signature = '';
  private full = true;

  constructor(
    private readonly options: ProcessScanOptions = DEFAULT_PROCESS_SCAN,
    private readonly now: () => number = Date.now,
  ) {}

  /** Start a scan for these matchers; a change of matchers forgets everything. */
  begin(signature: string): void {
    if (signature !== this.signature) {
      this.signature = signature;
      this.quiet.clear();
      this.nextFull = 0;
    }
    const t = this.now();
    this.full = t >= this.nextFull;
    if (this.full) this.nextFull = t + this.options.fullScanMs;
  }

  /** Whether this scan may skip reading the PID. */
  skip(pid: number): boolean {
    return !this.full && (this.quiet.get(pid) ?? 0) >= this.options.youngScans;
  }

  /** What reading the PID found (it was read: `skip` said no). */
  saw(pid: number, matched: boolean): void {
    if (matched) this.quiet.delete(pid);
    else this.quiet.set(pid, (this.quiet.get(pid) ?? 0) + 1);
  }

  /** Forget PIDs that are gone (a reused PID starts young again). */
  end(present: ReadonlySet<number>): void {
    for (const pid of this.quiet.keys()) if (!present.has(pid)) this.quiet.delete(pid);
  }
}
