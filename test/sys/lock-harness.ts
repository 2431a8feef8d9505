// N real processes × M trials contending for one lock, optionally each trial against a stale lock
// left by a SIGKILLed holder; every critical section is logged with enter/leave times and overlaps
// are counted. Used by test/sys/lock.test.ts (small) and bench/lock-contention.mjs (large).
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ContentionResult {
  n: number;
  m: number;
  stale: boolean;
  impl: 'sys' | 'naive';
  /** Critical sections logged (should be n × m). */
  sections: number;
  /** Pairs of sections whose [enter, leave] intervals intersect. */
  overlaps: number;
  /** Sections that found another process inside (marker file). */
  clashes: number;
  /** Trials that started with a stale lock file in place (should be m when stale). */
  staleTrials: number;
  ms: number;
}

export async function runContention(opts: {
  workerScript: string;
  n: number;
  m: number;
  stale: boolean;
  impl?: 'sys' | 'naive';
  holdMs?: number;
}): Promise<ContentionResult> {
  const impl = opts.impl ?? 'sys';
  const dir = mkdtempSync(join(tmpdir(), 'isolate-lock-'));
  const lock = join(dir, 'host.lock');
  const log = join(dir, 'sections.log');
  writeFileSync(log, '');
  const args = (role: string) => [role, impl, lock, log, String(opts.holdMs ?? 0.5)];
  const started = Date.now();
  const workers: ChildProcess[] = [];
  let staleTrials = 0;
  try {
    for (let i = 0; i < opts.n; i++)
      workers.push(fork(opts.workerScript, args('worker'), { stdio: 'inherit' }));
    await Promise.all(workers.map((w) => once(w, (m) => 'ready' in m)));
    for (let t = 0; t < opts.m; t++) {
      if (opts.stale) {
        const holder = fork(opts.workerScript, args('holder'), { stdio: 'inherit' });
        await once(holder, (m) => 'held' in m);
        const gone = new Promise((r) => holder.once('exit', r));
        holder.kill('SIGKILL');
        await gone;
        if (existsSync(lock)) staleTrials++;
      }
      const done = workers.map((w) => once(w, (m) => m.done === t));
      for (const w of workers) w.send({ trial: t });
      await Promise.all(done);
    }
  } finally {
    for (const w of workers) if (w.connected) w.send({ exit: true });
    await Promise.all(
      workers.map((w) => (w.exitCode === null ? new Promise((r) => w.once('exit', r)) : null)),
    );
  }
  const rows = readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.split(' '))
    .map(([, , enter, leave, clash]) => ({
      enter: BigInt(enter as string),
      leave: BigInt(leave as string),
      clash: clash === '1',
    }));
  rm(dir);
  return {
    n: opts.n,
    m: opts.m,
    stale: opts.stale,
    impl,
    sections: rows.length,
    overlaps: countOverlaps(rows),
    clashes: rows.filter((r) => r.clash).length,
    staleTrials,
    ms: Date.now() - started,
  };
}

function countOverlaps(rows: { enter: bigint; leave: bigint }[]): number {
  const sorted = [...rows].sort((a, b) => (a.enter < b.enter ? -1 : a.enter > b.enter ? 1 : 0));
  let overlaps = 0;
  for (let i = 0; i < sorted.length; i++) {
    for (
      let j = i + 1;
      j < sorted.length && (sorted[j] as { enter: bigint }).enter < (sorted[i] as { leave: bigint }).leave;
      j++
    ) {
      overlaps++;
    }
  }
  return overlaps;
}

function once(child: ChildProcess, match: (m: Record<string, unknown>) => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: unknown) => {
      if (m && typeof m === 'object' && match(m as Record<string, unknown>)) {
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve();
      }
    };
    const onExit = (code: number | null) => reject(new Error(`lock harness child exited (${code}) early`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

function rm(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
