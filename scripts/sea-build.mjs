// The single executable around a bundle (scripts/package.mjs, bench/sea-floor.mjs): the launcher
// (scripts/sea-launcher.cjs), the bundle and its V8 code cache as assets, the blob injected into a
// stripped copy of the runtime with postject.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EXEC_ARGV } from './bundle-common.mjs';

const here = import.meta.dirname;

// The fuse every Node.js binary carries; postject flips it so the binary runs its blob.
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/**
 * Makes `target` from `node` (the runtime), `main` (a bundle in its CommonJS wrapper, ASCII, in
 * `work`) and other `assets` ({ name: file }). The code cache is what a run of the launcher with
 * `warmup` as its arguments compiled.
 */
export function seaExecutable({ node, work, main, assets = {}, warmup, target }) {
  if (main !== join(work, 'main.cjs')) throw new Error(`sea-build: ${main} is not ${work}/main.cjs`);
  const launcher = join(work, 'sea-launcher.cjs');
  copyFileSync(join(here, 'sea-launcher.cjs'), launcher);
  // The code cache: the launcher runs main.cjs under the runtime with `warmup`, then saves every
  // function compiled by then (V8 keeps the bytecode of functions that ran).
  const warm = spawnSync(node, [...EXEC_ARGV, launcher, ...warmup], {
    env: { ...process.env, ISOLATE_SEA_BUILD_CACHE: work, ISOLATE_LOG: 'off' },
    encoding: 'utf8',
  });
  if (warm.status !== 0 || !existsSync(join(work, 'main.cache'))) {
    throw new Error(`package: code cache run (exit ${warm.status}): ${warm.stderr}`);
  }
  // The cache asset is stored with CACHE_PAD bytes around it (see alignCodeCache).
  const cache = readFileSync(join(work, 'main.cache'));
  const cacheAsset = join(work, 'main.cache.asset');
  writeFileSync(cacheAsset, paddedCache(cache, CACHE_PAD));
  const config = join(work, 'sea-config.json');
  const blob = join(work, 'isolate.blob');
  writeFileSync(
    config,
    JSON.stringify({
      main: launcher,
      output: blob,
      disableExperimentalSEAWarning: true,
      // No startup snapshot: Node copies a snapshot out of the executable on every start, and an empty
      // one already costs more than loading this bundle through its code cache (docs/install.md).
      useSnapshot: false,
      execArgv: EXEC_ARGV,
      assets: { ...assets, 'main.cjs': main, 'main.cache': cacheAsset },
    }),
  );
  const made = spawnSync(node, ['--experimental-sea-config', config], { encoding: 'utf8' });
  const stderr = made.stderr
    .split('\n')
    .filter((l) => l && !/Wrote single executable/.test(l))
    .join('\n');
  if (made.status !== 0 || stderr) throw new Error(`package: SEA blob (exit ${made.status}): ${stderr}`);
  const tmp = `${target}.tmp`;
  copyFileSync(node, tmp);
  chmodSync(tmp, 0o755);
  // Debug symbols are most of the binary's size and no one debugs a production host with them.
  // Stripped before injection: postject appends a note that strip would drop.
  // strip warns about Node's unnamed note sections; it keeps them, so the warnings are not shown.
  spawnSync('strip', ['--strip-all', '--remove-section=.comment', tmp], { stdio: 'ignore' });
  execFileSync(
    process.execPath,
    [
      join(here, '../node_modules/postject/dist/cli.js'),
      tmp,
      'NODE_SEA_BLOB',
      blob,
      '--sentinel-fuse',
      SEA_FUSE,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  alignCodeCache(tmp, cache);
  renameSync(tmp, target);
  // A cache V8 rejects (another runtime, other flags) would only cost start-up time, silently.
  const check = spawnSync(target, ['--version'], { env: { ISOLATE_SEA_DEBUG: '1' }, encoding: 'utf8' });
  if (check.status !== 0 || !check.stderr.includes('isolate sea: code cache accepted')) {
    throw new Error(`package: ${target} --version (exit ${check.status}): ${check.stderr.trim()}`);
  }
}

// V8 uses a code cache in place only when it is 8-byte aligned; otherwise it copies it first, which on
// these VMs costs ~120 page faults (~2 ms) of every start (perf: AlignedCachedData). An asset lies
// wherever the blob's layout puts it, so the asset holds a byte giving the cache's start, padding, the
// cache, and padding to a fixed size: moving the cache inside the asset changes nothing else.
// scripts/sea-launcher.cjs reads it back (the start byte, and the 8 bytes of padding in all).
const CACHE_PAD = 8;
function paddedCache(cache, start) {
  const asset = Buffer.alloc(cache.length + CACHE_PAD);
  asset[0] = start;
  cache.copy(asset, start);
  return asset;
}

/** Moves the code cache inside its asset, in the executable, to an 8-byte aligned file offset. */
function alignCodeCache(exe, cache) {
  const bytes = readFileSync(exe);
  const stored = paddedCache(cache, CACHE_PAD);
  const at = bytes.indexOf(stored);
  if (at < 0 || bytes.indexOf(stored, at + 1) >= 0) {
    throw new Error(`package: the code cache asset is not found once in ${exe}`);
  }
  // A mapping keeps a file offset's place within its page, so an aligned offset is an aligned address.
  const start = (8 - (at % 8)) % 8 || 8;
  paddedCache(cache, start).copy(bytes, at);
  writeFileSync(exe, bytes);
}
