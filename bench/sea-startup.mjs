// Start-up of the packaged executable (`npm run package` → out/isolate) for `plan --dry-run` on a
// two-socket sysfs tree, against `node -e 0` of the runtime packaged inside it (the ratio the target is
// stated in: ≤ 1.2×), `node -e 0` of the build machine's Node.js, and `node dist/cli.js`.
//   npm run build && npm run package && node bench/sea-startup.mjs [runs]
// Both binaries are put in the same page-cache state first (see below).
// Like hyperfine: warm-up rounds, then many runs of every command, interleaved round by round so a load
// change on a shared machine hits every row alike; wall-clock median and p90, and the median CPU time
// (user + system, from the child's rusage), which a busy machine disturbs less than the wall clock.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RUNTIME } from '../scripts/bundle-common.mjs';
import { readThrough } from './page-cache.mjs';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const runs = Number(process.argv[2] ?? 40);
const exe = join(repo, 'out/isolate');
if (!existsSync(exe)) throw new Error('no out/isolate: run npm run package first');
const root = join(repo, 'test/fixtures/sysfs/qemu-2s-smt2');
const policy = join(repo, 'policies/default.yaml');
// The pinned runtime packaged inside, not whichever version .cache/ happens to list first (it keeps
// every runtime ever pinned: the row was Node 22's start-up while the executable ran Node 24).
const packagedNode = join(repo, '.cache/node-runtime', RUNTIME.version, 'node');
if (!existsSync(packagedNode)) throw new Error(`no ${packagedNode}: run npm run package first`);

const plan = ['plan', '--dry-run', '--root', root, '--policy', policy];
const rows = [
  [`node -e 0 (${RUNTIME.version}, inside out/isolate)`, packagedNode, ['-e', '0']],
  [`node -e 0 (${process.version}, build machine)`, process.execPath, ['-e', '0']],
  ['node dist/cli.js plan --dry-run', process.execPath, [join(repo, 'dist/cli.js'), ...plan]],
  ['out/isolate plan --dry-run', exe, plan],
  ['out/isolate --version', exe, ['--version']],
];

/**
 * One run, timed by bash's `time` around the command alone (bash's own start is outside it): wall
 * clock, and CPU time (user + system from the child's rusage), each in ms.
 */
function once(cmd, args) {
  const r = spawnSync(
    'bash',
    ['-c', 'TIMEFORMAT="%3R %3U %3S"; time "$@" >/dev/null 2>&1', 'run', cmd, ...args],
    {
      encoding: 'utf8',
      env: { ...process.env, ISOLATE_LOG: 'off' },
    },
  );
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}`);
  const [real, user, sys] = r.stderr.trim().split('\n').at(-1).split(' ').map(Number);
  return { wall: real * 1000, cpu: (user + sys) * 1000 };
}

// How a binary came into the page cache decides how many page faults mapping it costs, and on this
// kind of VM a fault costs 13-18 µs (a loop touching fresh pages): read from start to end first, it
// costs fewer faults than when paged in by faults (the first exec after the cache lost it) — the kernel
// maps more of it per fault then (larger page-cache folios from readahead, presumably; not verified). Measured with `perf stat -e minor-faults` on 2026-12-02:
// `node -e 0` 2,476 faults after a sequential read, 2,782 after an exec came first; `plan --dry-run`
// 3,430 and 3,789; a binary freshly written by `npm run package` ~3,350-3,420. So both the runtime and
// the executable (files of this checkout) are first dropped from the cache (dd's iflag=nocache with
// count=0: posix_fadvise DONTNEED of clean pages) and read through once, and every run compares them in
// the same state, whatever ran before.
for (const file of [packagedNode, exe]) readThrough(file);

const warmup = 3;
const samples = rows.map(() => ({ wall: [], cpu: [] }));
for (let i = 0; i < runs + warmup; i++) {
  rows.forEach(([, cmd, args], j) => {
    const s = once(cmd, args);
    if (i >= warmup) {
      samples[j].wall.push(s.wall);
      samples[j].cpu.push(s.cpu);
    }
  });
}
const q = (v, p) => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor(v.length * p))];
const base = q(samples[0].wall, 0.5);
const baseCpu = q(samples[0].cpu, 0.5);
console.log(`${''.padEnd(44)}   wall median    p90   ratio   cpu median  ratio`);
rows.forEach(([name], j) => {
  const m = q(samples[j].wall, 0.5);
  const c = q(samples[j].cpu, 0.5);
  console.log(
    `${name.padEnd(44)} ${m.toFixed(1).padStart(9)} ms ${q(samples[j].wall, 0.9).toFixed(1).padStart(6)} ms ${(m / base).toFixed(2).padStart(5)}×   ${c.toFixed(0).padStart(7)} ms ${(c / baseCpu).toFixed(2).padStart(5)}×`,
  );
});
console.log(`${runs} interleaved rounds after ${warmup} warm-up rounds; ratios against the first row`);
