// Whole-process cost of `node dist/cli.js plan --dry-run` against a two-socket sysfs tree, versus
// `node -e 0` of the same Node (budget ≤ 1.5×, issue 49), timed interleaved (bench/startup-timing.mjs).
// Run after `npm run build`: node bench/cli-startup.mjs [runs]
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { printTimes, timeInterleaved } from './startup-timing.mjs';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const runs = Number(process.argv[2] ?? 30);
const root = join(repo, 'test/fixtures/sysfs/qemu-2s-smt2');
if (!existsSync(join(root, 'sys/devices/system/cpu'))) throw new Error(`no fixture tree ${root}`);
const cli = join(repo, 'dist/cli.js');
if (!existsSync(cli)) throw new Error('no dist/cli.js: run npm run build first');
const policy = join(repo, 'policies/default.yaml');

const rows = [
  [`node -e 0 (${process.version})`, process.execPath, ['-e', '0']],
  [
    'node dist/cli.js plan --dry-run',
    process.execPath,
    [cli, 'plan', '--dry-run', '--root', root, '--policy', policy],
  ],
];
printTimes(rows, timeInterleaved(rows, runs, { ISOLATE_LOG: 'off' }), runs);
console.log('budget: plan --dry-run ≤ 1.5× node -e 0 (wall-clock medians)');
