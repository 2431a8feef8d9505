// Timing short commands like hyperfine (bench/cli-startup.mjs, bench/sea-startup.mjs): warm-up rounds,
// then many runs of every command, interleaved round by round so a load change on a shared machine hits every row alike;
// wall-clock median and p90, and the median CPU time (user + system, from the child's rusage), which a
// busy machine disturbs less than the wall clock.
import { spawnSync } from 'node:child_process';

/**
 * One run, timed by bash's `time` around the command alone (bash's own start is outside it): wall
 * clock, and CPU time (user + system from the child's rusage), each in ms.
 */
function once(cmd, args, env) {
  const r = spawnSync(
    'bash',
    ['-c', 'TIMEFORMAT="%3R %3U %3S"; time "$@" >/dev/null 2>&1', 'run', cmd, ...args],
    { encoding: 'utf8', env: { ...process.env, ...env } },
  );
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}`);
  const [real, user, sys] = r.stderr.trim().split('\n').at(-1).split(' ').map(Number);
  return { wall: real * 1000, cpu: (user + sys) * 1000 };
}

export const WARMUP_ROUNDS = 3;

/** Rows are [name, command, args]; returns each row's { wall: ms[], cpu: ms[] }. */
export function timeInterleaved(rows, runs, env = {}) {
  const samples = rows.map(() => ({ wall: [], cpu: [] }));
  for (let i = 0; i < runs + WARMUP_ROUNDS; i++) {
    rows.forEach(([, cmd, args], j) => {
      const s = once(cmd, args, env);
      if (i >= WARMUP_ROUNDS) {
        samples[j].wall.push(s.wall);
        samples[j].cpu.push(s.cpu);
      }
    });
  }
  return samples;
}

/** The value at quantile p of the samples. */
export const quantile = (v, p) =>
  [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor(v.length * p))];

/** One line per row: median and p90 wall clock, median CPU, each median as a ratio to the first row's. */
export function printTimes(rows, samples, runs) {
  const base = quantile(samples[0].wall, 0.5);
  const baseCpu = quantile(samples[0].cpu, 0.5);
  console.log(`${''.padEnd(44)}   wall median    p90   ratio   cpu median  ratio`);
  rows.forEach(([name], j) => {
    const m = quantile(samples[j].wall, 0.5);
    const c = quantile(samples[j].cpu, 0.5);
    console.log(
      `${name.padEnd(44)} ${m.toFixed(1).padStart(9)} ms ${quantile(samples[j].wall, 0.9).toFixed(1).padStart(6)} ms ${(m / base).toFixed(2).padStart(5)}×   ${c.toFixed(0).padStart(7)} ms ${(c / baseCpu).toFixed(2).padStart(5)}×`,
    );
  });
  console.log(
    `${runs} interleaved rounds after ${WARMUP_ROUNDS} warm-up rounds; ratios against the first row`,
  );
}
