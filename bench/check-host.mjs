// `isolate check` versus `ps -eLo pid,tid,psr,comm` over the same large process table, on this
// machine: 2,000 sleeping stand-in processes × 10 threads are started (and killed afterwards, by
// PID). isolate reads the live /proc through `--root` (a temp dir whose proc/ links to /proc and
// whose sys/ is a sysfs fixture), so the machine's own cgroups are never read or written; it runs in a
// private mount namespace whose /sys/fs/cgroup is cgroup2 (private-cgroup2.mjs: on a v1 or hybrid
// bench host every check was UNKNOWN before it read a thread). Root only.
// Target: check ≤ 1× ps. Run after `npm run build`: node bench/check-host.mjs [procs] [threads] [runs]
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PRIVATE_CGROUP2 } from './private-cgroup2.mjs';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const procs = Number(process.argv[2] ?? 2000);
const threads = Number(process.argv[3] ?? 10);
const runs = Number(process.argv[4] ?? 7);

const bin = join(repo, '.vm-cache', 'standin-host');
mkdirSync(dirname(bin), { recursive: true });
execFileSync('gcc', ['-static', '-O2', '-pthread', '-o', bin, join(repo, 'test/vm/support/standin.c')]);

const root = mkdtempSync(join(tmpdir(), 'isolate-bench-'));
symlinkSync('/proc', join(root, 'proc'));
cpSync(join(repo, 'test/fixtures/sysfs/qemu-2s-smt2/sys'), join(root, 'sys'), { recursive: true });
// The cgroup2 tree of plain files check reads (its layout check wants the root's controllers).
const cg = join(root, 'sys/fs/cgroup');
mkdirSync(cg, { recursive: true });
writeFileSync(join(cg, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
writeFileSync(join(cg, 'cgroup.subtree_control'), 'cpuset cpu memory\n');
const policy = join(root, 'policy.yaml');
writeFileSync(
  policy,
  `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
strict: true
workloads:
  - name: kafka
    class: exclusive
    cores: 1
    numa: single
    match: { process: { cmdline: 'kafka\\.Kafka' } }
    memory: { mems: local }
`,
);

const inNamespace = (argv) => {
  const [cmd, ...args] = [...PRIVATE_CGROUP2, ...argv];
  return [cmd, args];
};
const started = [];
try {
  const kafka = spawn(bin, ['kafka.Kafka', '8', 'sleep'], { stdio: 'ignore' });
  started.push(kafka.pid);
  const out = execFileSync(bin, ['--fanout', String(procs), String(threads - 1)], { encoding: 'utf8' });
  for (const l of out.split('\n')) if (/^\d+$/.test(l)) started.push(Number(l));
  await new Promise((r) => setTimeout(r, 1000));
  const table = spawnSync('ps', ['-eLo', 'pid'], { encoding: 'utf8' }).stdout.split('\n').length - 2;

  const cmds = {
    ps: ['ps', ['-eLo', 'pid,tid,psr,comm']],
    check: inNamespace([
      process.execPath,
      join(repo, 'dist/cli.js'),
      'check',
      '--root',
      root,
      '--policy',
      policy,
    ]),
  };
  const samples = { ps: [], check: [] };
  for (let i = 0; i < runs + 1; i++) {
    for (const [name, [cmd, args]] of Object.entries(cmds)) {
      const t0 = process.hrtime.bigint();
      const r = spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (r.status === null || r.status > 3) throw new Error(`${name} failed (${r.status}): ${r.stderr}`);
      if (i > 0) samples[name].push(ms);
    }
  }
  const med = (a) => a.sort((x, y) => x - y)[a.length >> 1];
  const scan = JSON.parse(
    spawnSync(
      ...inNamespace([
        process.execPath,
        join(repo, 'dist/cli.js'),
        'check',
        '--json',
        '--root',
        root,
        '--policy',
        policy,
      ]),
      { encoding: 'utf8' },
    ).stdout,
  );
  console.log(
    `process table: ${scan.stats.processes} processes, ${scan.stats.threads} threads (ps sees ${table})`,
  );
  console.log(`  ps -eLo pid,tid,psr,comm : median ${med(samples.ps).toFixed(0)} ms`);
  console.log(
    `  isolate check (whole)    : median ${med(samples.check).toFixed(0)} ms (its /proc scan: ${scan.stats.scanMs} ms)`,
  );
  console.log(
    `  ratio check/ps           : ${(med(samples.check) / med(samples.ps)).toFixed(2)}× (target ≤ 1×), ${runs} runs each`,
  );
} finally {
  for (const pid of started) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
  rmSync(root, { recursive: true, force: true });
}
if (!existsSync(join(repo, 'dist/cli.js'))) console.error('build first: npm run build');
