// Start-up of the packaged executable (`npm run package` → out/isolate) for `plan --dry-run` on a
// two-socket sysfs tree, against `node -e 0` (the build machine's Node.js and the runtime packaged
// inside the executable) and `node dist/cli.js`. Target: out/isolate ≤ 1.2× `node -e 0`.
//   npm run build && npm run package && node bench/sea-startup.mjs [runs]
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const runs = Number(process.argv[2] ?? 30);
const exe = join(repo, 'out/isolate');
if (!existsSync(exe)) throw new Error('no out/isolate: run npm run package first');
const root = join(repo, 'test/fixtures/sysfs/qemu-2s-smt2');
const policy = join(repo, 'policies/default.yaml');
const runtimes = join(repo, '.cache/node-runtime');
const packagedNode = existsSync(runtimes)
  ? readdirSync(runtimes).map((v) => join(runtimes, v, 'node'))[0]
  : undefined;

const plan = ['plan', '--dry-run', '--root', root, '--policy', policy];
const rows = [
  [`node -e 0 (${process.version}, build machine)`, process.execPath, ['-e', '0']],
  ...(packagedNode ? [['node -e 0 (runtime inside out/isolate)', packagedNode, ['-e', '0']]] : []),
  ['node dist/cli.js plan --dry-run', process.execPath, [join(repo, 'dist/cli.js'), ...plan]],
  ['out/isolate plan --dry-run', exe, plan],
  ['out/isolate --version', exe, ['--version']],
];
// Interleaved (one run of each command per round) so load changes on a shared machine hit every row alike.
const samples = rows.map(() => []);
for (let i = 0; i < runs + 3; i++) {
  rows.forEach(([, cmd, args], j) => {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(cmd, args, { encoding: 'utf8', env: { ...process.env, ISOLATE_LOG: 'off' } });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    if (i >= 3) samples[j].push(ms); // first rounds warm the page cache
  });
}
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const min = (v) => Math.min(...v);
const base = median(samples[0]);
rows.forEach(([name], j) => {
  const m = median(samples[j]);
  console.log(
    `${name.padEnd(44)} median ${m.toFixed(1).padStart(6)} ms  min ${min(samples[j]).toFixed(1).padStart(6)} ms  ${(m / base).toFixed(2)}×`,
  );
});
console.log(`over ${runs} interleaved rounds`);
