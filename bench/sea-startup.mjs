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

function time(cmd, args) {
  const samples = [];
  for (let i = 0; i < runs + 3; i++) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(cmd, args, { encoding: 'utf8', env: { ...process.env, ISOLATE_LOG: 'off' } });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    if (i >= 3) samples.push(ms); // first runs warm the page cache
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

const plan = ['plan', '--dry-run', '--root', root, '--policy', policy];
const rows = [
  [`node -e 0 (${process.version}, build machine)`, time(process.execPath, ['-e', '0'])],
  ...(packagedNode ? [['node -e 0 (runtime inside out/isolate)', time(packagedNode, ['-e', '0'])]] : []),
  ['node dist/cli.js plan --dry-run', time(process.execPath, [join(repo, 'dist/cli.js'), ...plan])],
  ['out/isolate plan --dry-run', time(exe, plan)],
  ['out/isolate --version', time(exe, ['--version'])],
];
const base = rows[0][1];
for (const [name, ms] of rows)
  console.log(`${name.padEnd(44)} median ${ms.toFixed(1).padStart(6)} ms  ${(ms / base).toFixed(2)}×`);
console.log(`over ${runs} runs`);
