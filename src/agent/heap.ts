// V8 hands a heap's free pages back to the kernel in its memory reducer: full GCs it schedules itself
// once allocation slows down, 8 s and more after it notices. The agent's heaviest work — its first
// round and each thread audit (`--check-interval`), which read every process and thread of the host —
// then left its resident memory ~4 MB higher for another 10-20 s, or longer, at a time of V8's
// choosing (bench/agent-idle.mjs with AGENT_RSS_TRACE=1: 61.8 MB until the reducer's second GC,
// 57.6 MB after it). One memory-reducing full GC right after that work makes it deterministic.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's `gc` function. */
type Gc = (options?: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

// V8 takes gc()'s `flavor` from version 12 (Node 22); V8 11 (Node 20) collects nothing at all when
// given those options, so it gets the plain full GC.
const FLAVORED = Number(process.versions.v8.split('.')[0]) >= 12;

/**
 * The global `gc` under `node --expose-gc`; otherwise the one V8 puts in a context created after the
 * flag is set. Not `--expose-gc` for the whole executable: that flag alone made every `isolate plan
 * --dry-run` ~8 ms slower (bench/sea-startup.mjs). The context is made once and kept (its `gc`
 * holds it): made anew for each compaction, its ~170 KB became garbage in the old generation each
 * time (the agent's allocations sampled through the inspector), which only the next full GC freed.
 */
let contextGc: unknown;
export function v8Gc(): unknown {
  const global = (globalThis as { gc?: unknown }).gc;
  if (typeof global === 'function') return global;
  if (contextGc === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      contextGc = runInNewContext('gc');
    } catch {
      contextGc = null;
    }
  }
  return contextGc;
}

/** A full GC that shrinks the heap and returns its free pages now; false when V8 offers no `gc`. */
export function compactHeap(gc: unknown = v8Gc()): boolean {
  if (typeof gc !== 'function') return false;
  // 'last-resort': the GC V8 runs before giving up on memory — it also shrinks the young generation and
  // releases pooled pages, as the memory reducer's GCs do. ~10 ms on a 10 MB heap, once per audit.
  if (FLAVORED) (gc as Gc)({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  else (gc as Gc)();
  return true;
}
