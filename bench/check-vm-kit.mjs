// Shared by bench/check-vm.mjs and bench/apply-vm.mjs: bundles the qemu harness (TypeScript) with
// esbuild so plain node can use it, and a timer the guest runs to measure commands with hrtime.
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Runs in the guest: `'name=cmd|arg|arg' ...`; interleaves the commands, prints medians as JSON. */
const TIMER = `
import { spawnSync } from 'node:child_process';
const runs = Number(process.env.RUNS ?? 5);
const cmds = process.argv.slice(2).map((a) => { const i = a.indexOf('='); const [c, ...args] = a.slice(i + 1).split('|'); return { name: a.slice(0, i), c, args, s: [] }; });
for (let i = 0; i < runs + 1; i++) {
  for (const k of cmds) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(k.c, k.args, { stdio: ['inherit', 'ignore', 'pipe'] }); // procps ps wants a tty on stdin
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const ok = k.name.startsWith('check') ? r.status !== null && r.status <= 3 : r.status === 0;
    if (r.error || !ok) { console.error(k.name + ' failed: ' + (r.error ?? r.status) + ' ' + String(r.stderr).trim().slice(0, 300)); process.exit(1); }
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
  // Under TCG every syscall of a process with a large address space pays a soft-TLB flush when
  // the guest kernel switches page tables (KPTI), which distorts node-vs-C comparisons far beyond
  // real hardware. ISOLATE_BENCH_KERNEL_ARGS (default "mitigations=off"; "" for the default boot).
  const kernelArgs = process.env.ISOLATE_BENCH_KERNEL_ARGS ?? 'mitigations=off';
  const layout = { ...mod.LAYOUTS.twoSocketSmt2, kernelArgs };
  return { ...mod, layout, layoutName: `twoSocketSmt2${kernelArgs ? `, ${kernelArgs}` : ''}` };
}

export async function runTimed(kit, script, files = {}) {
  kit.ensureVmPrereqs();
  const r = await kit.runInVm({
    layout: kit.layout,
    includeProject: true,
    script,
    files: {
      '/usr/local/bin/standin': kit.standinBinary(),
      '/harness/lib.sh': kit.LIB,
      '/bench/timer.mjs': TIMER,
      // procps ps (busybox's has no -L); not on PATH, where busybox --install puts its own.
      ...kit.hostBinaryFiles('/usr/bin/ps', '/opt/procps/bin/ps'),
      ...files,
    },
    timeoutMs: 1_500_000,
  });
  if (r.exitStatus === null || !r.sections.timing) {
    throw new Error(`guest failed (exit ${r.exitStatus}):\n${r.console.slice(-3000)}`);
  }
  return r;
}
