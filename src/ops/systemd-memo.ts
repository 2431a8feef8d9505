// The agent's memory of systemd's answer about the units behind its plan. Asking is `systemctl show`:
// a fork and an exec every round, ~13 ms of the agent's own CPU and ~13 ms more in systemctl on the
// bench VMs (bench/systemctl-spawn.mjs), before systemd's own work to answer — at a 1 s interval
// ~2.6 % of a core, five times the agent's whole budget, on exactly the hosts it is made for.
//
// systemd realizes what it holds into the unit's cgroup files (AllowedCPUs= is its cpuset.cpus,
// MemoryLow= its memory.low, ...) whenever it changes them: on `set-property`, `revert`, a
// daemon-reload that changed a unit, a unit's start. The round reads those files anyway, so the last
// answer is used again only while everything the cgroup observation read is unchanged, for the same
// units, until the agent forgets it (a drop-in of `systemctl set-property` or `revert` changed,
// agent/dropins.ts: a property set on a unit that is not running shows in no cgroup file, but it does
// there), and for at most `maxAgeMs`, which bounds what neither shows (a unit file edited and reloaded
// for a unit that is not running; `Slice=` and `Delegate=` show when it starts). And only an answer
// that planned no change is kept: a plan with changes is always made from a fresh answer (buildPlan
// asks again), and the round after an apply asks again, so no change is ever computed from memory.
import type { ObservedSystemd } from '../model/observed.js';
import { deepFreeze } from './freeze.js';

/**
 * The longest an answer is used again while nothing in the cgroup tree or set-property's drop-ins
 * changed: what neither shows is a unit file edited for a unit that is not running (it shows when the
 * unit starts: its cgroup appears). Every 60 s, the asks of a converged systemd host cost ~0.04 % of a
 * core (~26 ms each, agent and systemctl; bench/systemctl-spawn.mjs), a tenth of the agent's budget.
 */
export const SYSTEMD_MAX_AGE_MS = 300_000;

interface Answer {
  key: string;
  at: number;
  systemd: ObservedSystemd | undefined;
}

export class SystemdMemo {
  private kept: Answer | null = null;
  private last: Answer | null = null;
  /** How many times forget() was called: an ask it interrupted is not kept. */
  private forgotten = 0;
  /** Whether the last answer handed out was kept from an earlier round. */
  private reusedLast = false;
  /** Answers asked of systemd and answers reused (metrics, tests). */
  readonly stats = { asked: 0, reused: 0 };
  /** Whether systemd answered the last ask (see systemdRuns). */
  private answered = false;
  /**
   * Asks systemd answered: `systemctl show` ran. An ask where systemd does not run the host (a
   * fixture root, a host without systemd) returns nothing at once and is not one.
   */
  get answeredBySystemd(): number {
    return this.systemdAnswers;
  }
  private systemdAnswers = 0;

  constructor(
    private readonly maxAgeMs = SYSTEMD_MAX_AGE_MS,
    // Monotonic: a wall clock stepped back would keep an answer forever.
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * The kept answer when `key` (the units asked about and the cgroup observation) is the one it was
   * given for and it is younger than maxAgeMs; otherwise systemd's, through `ask`.
   */
  async answer(
    key: string,
    ask: () => Promise<ObservedSystemd | undefined>,
  ): Promise<ObservedSystemd | undefined> {
    const k = this.kept;
    if (k && k.key === key && this.now() - k.at < this.maxAgeMs) {
      this.reusedLast = true;
      this.stats.reused++;
      return k.systemd;
    }
    this.kept = null;
    this.reusedLast = false;
    const at = this.now();
    const forgotten = this.forgotten;
    const systemd = await ask();
    this.stats.asked++;
    this.answered = systemd !== undefined;
    if (this.answered) this.systemdAnswers++;
    // Shared with later rounds: nothing may change it in between.
    const answer = { key, at, systemd: systemd && deepFreeze(systemd) };
    // Forgotten while systemctl ran: the answer may predate the change, so it is used once, not kept.
    this.last = forgotten === this.forgotten ? answer : null;
    return answer.systemd;
  }

  /**
   * Something systemd holds may have changed (a drop-in): the next answer is systemd's. An answer
   * asked before the change and not yet planned with is not kept either.
   */
  forget(): void {
    this.kept = null;
    this.last = null;
    this.forgotten++;
  }

  /** Whether systemd answered the last ask: it runs the host (agent/dropins.ts is then watched). */
  get systemdRuns(): boolean {
    return this.answered;
  }

  /** Whether the answer the last plan was made from came from memory. */
  get reused(): boolean {
    return this.reusedLast;
  }

  /**
   * What the plan made of the last answer: one that planned no change is kept (from when it was
   * asked); a plan with changes forgets it, so the next answer is systemd's own.
   */
  planned(changes: number): void {
    if (changes > 0) this.kept = null;
    else if (!this.reusedLast) this.kept = this.last;
    this.last = null;
  }
}
