// The single executable around a bundle (scripts/package.mjs): the launcher (scripts/sea-launcher.cjs)
// as its main script, the bundle, its V8 code cache and the lazy dependencies as assets, the blob
// injected into a stripped copy of the runtime with postject.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EXEC_ARGV } from './bundle-common.mjs';

const here = import.meta.dirname;

// The fuse every Node.js binary carries; postject flips it so the binary runs its blob.
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/**
 * Makes `target` from `node` (the runtime) and the bundle in `work` (main.cjs, and the `assets`
 * beside it: { name: file }). The code cache is what a run of the launcher with `warmup` as its
 * arguments compiled.
 */
export function seaExecutable({ node, work, assets = {}, warmup, target }) {
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
      assets: { ...assets, 'main.cjs': join(work, 'main.cjs'), 'main.cache': join(work, 'main.cache') },
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
  renameSync(tmp, target);
  // A cache V8 rejects (another runtime, other flags) would only cost start-up time, silently.
  const check = spawnSync(target, ['--version'], { env: { ISOLATE_SEA_DEBUG: '1' }, encoding: 'utf8' });
  if (check.status !== 0 || !check.stderr.includes('isolate sea: code cache accepted')) {
    throw new Error(`package: ${target} --version (exit ${check.status}): ${check.stderr.trim()}`);
  }
}
