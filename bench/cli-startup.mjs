// Whole-process cost of `isolate plan --dry-run` against a two-socket sysfs tree, versus `node -e 0`
// on the same machine (target ≤ 1.5×). Run after `npm run build`: node bench/cli-startup.mjs [runs]
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const runs = Number(process.argv[2] ?? 30);
const root = ['qemu-2s-smt2']
  .map((n) => join(repo, 'test/fixtures/sysfs', n))
  .find((p) => existsSync(join(p, 'sys/devices/system/cpu')));
if (!root) throw new Error('no two-socket fixture tree under test/fixtures/sysfs');
const policy = join(repo, 'policies/default.yaml');

function time(args) {
  const samples = [];
  for (let i = 0; i < runs + 3; i++) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, args, { encoding: 'utf8' });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    if (i >= 3) samples.push(ms); // first runs warm the page cache
  }
  samples.sort((a, b) => a - b);
  return { median: samples[Math.floor(samples.length / 2)], min: samples[0] };
}

const base = time(['-e', '0']);
const plan = time([join(repo, 'dist/cli.js'), 'plan', '--dry-run', '--root', root, '--policy', policy]);
const ratio = plan.median / base.median;
console.log(
  `node -e 0:                      median ${base.median.toFixed(1)} ms (min ${base.min.toFixed(1)})`,
);
console.log(
  `isolate plan --dry-run (${root.split('/').pop()}): median ${plan.median.toFixed(1)} ms (min ${plan.min.toFixed(1)})`,
);
console.log(`ratio ${ratio.toFixed(2)}× (target ≤ 1.5×) over ${runs} runs`);
