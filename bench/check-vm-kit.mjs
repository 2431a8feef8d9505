// Shared by bench/check-vm.mjs and bench/apply-vm.mjs: bundles the qemu harness (TypeScript) with
// esbuild so plain node can use it, and a timer the guest runs to measure commands with hrtime.
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Runs in the guest: `name=cmd,arg,arg ...`; interleaves the commands, prints medians as JSON. */
const TIMER = `
import { spawnSync } from 'node:child_process';
const runs = Number(process.env.RUNS ?? 5);
const cmds = process.argv.slice(2).map((a) => { const i = a.indexOf('='); const [c, ...args] = a.slice(i + 1).split(','); return { name: a.slice(0, i), c, args, s: [] }; });
for (let i = 0; i < runs + 1; i++) {
  for (const k of cmds) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(k.c, k.args, { stdio: ['ignore', 'ignore', 'ignore'] });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (r.error || r.status > 3) { console.error(k.name + ' failed: ' + (r.error ?? r.status)); process.exit(1); }
    if (i > 0) k.s.push(ms);
  }
}
const out = {};
for (const k of cmds) { k.s.sort((a, b) => a - b); out[k.name] = { median: k.s[k.s.length >> 1], min: k.s[0], runs }; }
console.log(JSON.stringify(out));
`;

export async function loadVmKit() {
  // Three levels below the repository, like test/vm/harness: the harness finds the repo from its own URL.
  const out = join(repo, '.vm-cache', 'bench', 'kit', 'bench-kit.mjs');
  mkdirSync(dirname(out), { recursive: true });
  await build({
    stdin: {
      contents: `export * from './test/vm/harness/index.ts'; export * from './test/vm/support/guest.ts';`,
      resolveDir: repo,
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outfile: out,
    logLevel: 'warning',
  });
  const mod = await import(`${pathToFileURL(out).href}?t=${Date.now()}`);
  return { ...mod, layoutName: 'twoSocketSmt2' };
}

export async function runTimed(kit, script, files = {}) {
  kit.ensureVmPrereqs();
  const r = await kit.runInVm({
    layout: kit.LAYOUTS.twoSocketSmt2,
    includeProject: true,
    script,
    files: {
      '/usr/local/bin/standin': kit.standinBinary(),
      '/harness/lib.sh': kit.LIB,
      '/bench/timer.mjs': TIMER,
      ...kit.hostBinaryFiles('/usr/bin/ps', '/usr/bin/ps'),
      ...files,
    },
    timeoutMs: 1_500_000,
  });
  if (r.exitStatus === null || !r.sections.timing) {
    throw new Error(`guest failed (exit ${r.exitStatus}):\n${r.console.slice(-3000)}`);
  }
  return r;
}
