// Between rounds, the agent looks for new processes a `process:` matcher selects, so that a new broker
// is placed within a fraction of the interval instead of waiting for the next round.
import { bornSince, probeBirths } from '../cgroup/processes.js';
import type { ProcessScanMemo } from '../cgroup/proc-scan.js';
import type { LogFn } from '../model/log.js';

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
export function startProbe(
  o: { intervalMs: number; once?: boolean; log: LogFn },
  memo: ProcessScanMemo,
  nudge: () => void,
  sleepMs: number,
): { stop: () => void } {
  if (!memo.target() || o.once) return { stop: () => {} };
  let busy = false;
  // A probe that fails says so (once a sleep): the rounds still read /proc themselves.
  let lastError: string | null = null;
  const failed = (err: unknown) => {
    const error = err instanceof Error ? err.message : String(err);
    if (error === lastError) return;
    lastError = error;
    o.log('warn', 'probe for new processes failed; the next round reads /proc itself', { error });
  };
  const tick = () => {
    if (busy) return;
    // Nearly every tick finds nothing born: decided without a promise. (A timer's exception would
    // end the agent.)
    let pids: number[];
    try {
      pids = bornSince(memo);
    } catch (err) {
      failed(err);
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
      .catch(failed)
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
