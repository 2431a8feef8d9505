// Start-up of the packaged executable (`npm run package` → out/isolate) for `plan --dry-run` on a
// two-socket sysfs tree, against `node -e 0` of the runtime packaged inside it (the ratio the budget is
// stated in: ≤ 1.5×, issue 49), `node -e 0` of the build machine's Node.js, and `node dist/cli.js`.
//   npm run build && npm run package && node bench/sea-startup.mjs [runs]
// A candidate runtime (scripts/package.mjs --runtime): node bench/sea-startup.mjs [runs] --exe DIR/isolate
// --runtime VERSION times that executable against `node -e 0` of its own runtime (the ratio's base),
// with the pinned runtime's `node -e 0` and the pinned executable (out/isolate) beside them.
// The binaries are put in the same page-cache state first (see below), then timed interleaved
// (bench/startup-timing.mjs).
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RUNTIME } from '../scripts/bundle-common.mjs';
import { readThrough } from './page-cache.mjs';
import { printTimes, timeInterleaved } from './startup-timing.mjs';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const flag = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const runs = Number(argv[0] && !argv[0].startsWith('--') ? argv[0] : 40);
const pinnedExe = join(repo, 'out/isolate');
const exe = resolve(flag('--exe') ?? pinnedExe);
const version = flag('--runtime') ?? RUNTIME.version;
if (!existsSync(exe)) throw new Error(`no ${exe}: run npm run package first`);
const root = join(repo, 'test/fixtures/sysfs/qemu-2s-smt2');
const policy = join(repo, 'policies/default.yaml');
// The pinned runtime packaged inside, not whichever version .cache/ happens to list first (it keeps
// every runtime ever pinned: the row was Node 22's start-up while the executable ran Node 24).
const packagedNode = join(repo, '.cache/node-runtime', version, 'node');
if (!existsSync(packagedNode)) throw new Error(`no ${packagedNode}: run npm run package first`);
const pinnedNode = join(repo, '.cache/node-runtime', RUNTIME.version, 'node');
const candidate = exe !== pinnedExe || version !== RUNTIME.version;

const plan = ['plan', '--dry-run', '--root', root, '--policy', policy];
const rows = candidate
  ? [
      [`node -e 0 (${version}, inside the candidate)`, packagedNode, ['-e', '0']],
      [`node -e 0 (${RUNTIME.version}, pinned)`, pinnedNode, ['-e', '0']],
      [`candidate (${version}) plan --dry-run`, exe, plan],
      [`candidate (${version}) --version`, exe, ['--version']],
      ...(existsSync(pinnedExe)
        ? [
            ['out/isolate plan --dry-run', pinnedExe, plan],
            ['out/isolate --version', pinnedExe, ['--version']],
          ]
        : []),
    ]
  : [
      [`node -e 0 (${RUNTIME.version}, inside out/isolate)`, packagedNode, ['-e', '0']],
      [`node -e 0 (${process.version}, build machine)`, process.execPath, ['-e', '0']],
      ['node dist/cli.js plan --dry-run', process.execPath, [join(repo, 'dist/cli.js'), ...plan]],
      ['out/isolate plan --dry-run', exe, plan],
      ['out/isolate --version', exe, ['--version']],
    ];

// How a binary came into the page cache decides how many page faults mapping it costs, and on this
// kind of VM a fault costs 13-18 µs (a loop touching fresh pages): read from start to end first, it
// costs fewer faults than when paged in by faults (the first exec after the cache lost it) — the kernel
// maps more of it per fault then (larger page-cache folios from readahead, presumably; not verified). Measured with `perf stat -e minor-faults` on 2026-12-02:
// `node -e 0` 2,476 faults after a sequential read, 2,782 after an exec came first; `plan --dry-run`
// 3,430 and 3,789; a binary freshly written by `npm run package` ~3,350-3,420. So both the runtime and
// the executable (files of this checkout) are first dropped from the cache (dd's iflag=nocache with
// count=0: posix_fadvise DONTNEED of clean pages) and read through once, and every run compares them in
// the same state, whatever ran before.
for (const file of new Set(rows.map(([, cmd]) => cmd))) if (file !== process.execPath) readThrough(file);

printTimes(rows, timeInterleaved(rows, runs, { ISOLATE_LOG: 'off' }), runs);
