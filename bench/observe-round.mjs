// What one round's cgroup observation costs the agent in-process (the mount table, every observed
// cgroup's listing and files), with each file opened and closed against read again through a
// descriptor kept open (src/sys/kept-files.ts), the two interleaved so the machine's drift hits both.
// Two trees of plain files: `bench` — what bench/agent-idle.mjs gives the agent (five cgroups, five
// files each), and `systemd` — a Debian 12 host's top level (systemd 252, kernel 6.1: init.scope, the
// three slices, seven .mount units and the workloads' cgroups, each with the 17 files the agent reads
// where the cpuset, cpu, memory, io and pids controllers are on), which the agent-idle tree understates.
// Run as root after `npm ci`: node bench/observe-round.mjs [rounds] — runs under the agent's V8 flags,
// in a private mount namespace whose /sys/fs/cgroup is a cgroup2 mount (as bench/agent-idle.mjs does).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { PRIVATE_CGROUP2 } from './private-cgroup2.mjs';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const rounds = Number(process.argv[2] ?? 3000);
const out = mkdtempSync(join(tmpdir(), 'isolate-observe-bench-'));

const ENTRY = `
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { observeHost } from './src/cgroup/observe.js';
import { detectCgroupLayout } from './src/cgroup/layout.js';
import { KeptFiles } from './src/sys/kept-files.js';
import { SYSTEMD_TOP_LEVEL, systemdUnitFiles } from './bench/systemd-tree.mjs';

const [tree, n] = [process.argv[2], Number(process.argv[3])];
const WORKLOADS = ['isolate-kafka', 'hadoop-yarn', 'kafka.slice'];
const BENCH_FILES = ['cpuset.cpus', 'cpuset.mems', 'cpuset.cpus.partition', 'cgroup.subtree_control', 'cgroup.events'];
const groups = tree === 'systemd' ? [...SYSTEMD_TOP_LEVEL, ...WORKLOADS] : [...WORKLOADS, 'system.slice'];
const files = tree === 'systemd' ? Object.keys(systemdUnitFiles('x.slice')) : BENCH_FILES;
const root = mkdtempSync(join(tmpdir(), 'isolate-observe-tree-'));
const cg = join(root, 'sys/fs/cgroup');
mkdirSync(cg, { recursive: true });
writeFileSync(join(cg, 'cgroup.controllers'), 'cpuset cpu io memory pids\\n');
writeFileSync(join(cg, 'cgroup.subtree_control'), 'cpuset cpu io memory pids\\n');
for (const g of groups) {
  mkdirSync(join(cg, g));
  for (const f of files) writeFileSync(join(cg, g, f), f === 'cgroup.events' ? 'populated 1\\nfrozen 0\\n' : '0-1\\n');
}
mkdirSync(join(root, 'proc'));
symlinkSync('/proc/self', join(root, 'proc/self'));
const req = { paths: WORKLOADS.map((w) => '/' + w), units: [], processMatchers: {} };
const kept = new KeptFiles(512);
async function round(useKept) {
  const mounts = await detectCgroupLayout(root, useKept ? kept : undefined);
  const o = await observeHost(root, { ...req, mounts, ...(useKept ? { keptFiles: kept } : {}) });
  if (useKept) kept.endRound();
  return Object.keys(o.cgroup.groups).length;
}
for (let i = 0; i < 300; i++) { await round(false); await round(true); }
const cpu = { opened: 0, kept: 0 };
for (let rep = 0; rep < 10; rep++) {
  for (const mode of ['opened', 'kept']) {
    const c0 = process.cpuUsage();
    for (let i = 0; i < n / 10; i++) await round(mode === 'kept');
    const c = process.cpuUsage(c0);
    cpu[mode] += c.user + c.system;
  }
}
const observed = await round(true);
const us = (m) => (cpu[m] / n).toFixed(0);
console.log(tree.padEnd(8), String(observed).padStart(3), 'cgroups,', String(files.length).padStart(2),
  'files in each (fewer read in siblings): opened and closed', us('opened').padStart(5), 'µs a round, kept open', us('kept').padStart(5),
  'µs (' + Math.round((100 * (cpu.kept - cpu.opened)) / cpu.opened) + ' %)');
`;

try {
  await build({
    stdin: { contents: ENTRY, resolveDir: repo, loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'error',
    outfile: join(out, 'observe-round.mjs'),
  });
  for (const tree of ['bench', 'systemd']) {
    execFileSync(
      PRIVATE_CGROUP2[0],
      [
        ...PRIVATE_CGROUP2.slice(1),
        process.execPath,
        '--no-turbofan',
        '--no-maglev',
        join(out, 'observe-round.mjs'),
        tree,
        String(rounds),
      ],
      { stdio: 'inherit' },
    );
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}
