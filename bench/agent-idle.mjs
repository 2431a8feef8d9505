// The agent's idle cost on a busy host: resident memory and CPU over 60 s at a 1 s interval, with
// 2,000 sleeping stand-in processes × 10 threads in the process table (killed afterwards, by PID).
// The agent reads the live /proc through `--root` (a temp dir whose proc/ links to /proc, with a
// sysfs fixture and a cgroup tree of plain files), so the machine's own cgroups are never touched.
// It runs in a private mount namespace (`unshare --mount`, root) where /sys/fs/cgroup is a cgroup2
// mount only: the layout check reads the live /proc/self/mountinfo, and on a v1 or hybrid bench host
// that table would contradict the unified fixture tree. Nothing is mounted or unmounted outside it.
// Targets (issue 10): RSS ≤ 60 MB, CPU ≤ 0.5 % of one core — what it prints; issue 49 restates the
// budgets at the default 5 s interval (bench/README.md says how to run this bench for them).
// Run after `npm run build`: node bench/agent-idle.mjs [procs] [threads] [seconds] [matcher: cgroup|process]
// AGENT_INTERVAL: the agent's --interval (default 1s here; the agent's own default is 5s).
// AGENT_LAYOUT=legacy measures a cgroup v1 host instead (see below). AGENT_TREE=systemd adds a
// systemd host's top level (ten units and slices, every file the agent reads in each) to the tree.
// AGENT_CGROUP=/system.slice/standin.service: the stand-ins live in that cgroup (unfenced: it allows
// every CPU), as a real host's processes live in services and containers, not in the root cgroup
// where this machine keeps them (see below).
// AGENT_BIN=out/isolate measures the packaged executable (after `npm run package`) instead of
// `node dist/cli.js` under the Node running this script.
// AGENT_COMPARE=PATH runs a second executable (e.g. a build before a change) side by side in the same
// window, on its own copy of the host root: both see the same stand-ins and the same machine noise,
// which between two runs a few minutes apart is larger than most changes (0.50-0.63 % for one build).
// AGENT_COMPARE_DELAY_S=N starts that second executable N s after the first.
// AGENT_SMAPS=1 also prints where the resident memory lies, mapping by mapping (/proc/PID/smaps).
// AGENT_RSS_TRACE=1 prints every per-second RSS sample. The agent runs with the GLIBC_TUNABLES and
// NODE_OPTIONS Environment= lines of systemd/isolate.service, if it has any (AGENT_UNIT_ENV=0: without).
// AGENT_WARMUP_S: seconds between the agent's start and the window (default 10).
// AGENT_SCRAPE_S=15: both agents' /metrics are fetched every 15 s from their start, as Prometheus
// would (off by default, as in the numbers recorded before it existed).
// AGENT_PAGE_CACHE=keep: the measured executables are not dropped from the page cache first.
// AGENT_WAKE=0: no empty 1 s timer beside the agent (under the agent's runtime and V8 flags): what
// a bare wake-up costs on this machine, a floor under the agent's wake-ups (two a second with `process:`
// matchers: the round and the probe).
// AGENT_REFERENCE=0: no reference load beside the agent (bench/reference-load.mjs: fixed work shaped
// like an idle round, under the agent's runtime: a partial gauge of the machine's speed, see its header).
// Besides the window's average it prints the least and most CPU of any 60 s stretch of it (5 s
// slices); AGENT_CPU_TRACE=1 prints every slice. AGENT_LOG=json (with AGENT_STDOUT=1 and, say,
// ISOLATE_LOG_LEVEL=debug) shows the agent's log, which is off otherwise.
import { execFileSync, spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dropFromPageCache } from './page-cache.mjs';
import { EXEC_ARGV, RUNTIME } from '../scripts/bundle-common.mjs';
import { PRIVATE_CGROUP2 } from './private-cgroup2.mjs';
import { SYSTEMD_TOP_LEVEL, systemdUnitFiles } from './systemd-tree.mjs';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const procs = Number(process.argv[2] ?? 2000);
const threads = Number(process.argv[3] ?? 10);
const seconds = Number(process.argv[4] ?? 60);
const matcher = process.argv[5] ?? 'cgroup';
const interval = process.env.AGENT_INTERVAL ?? '1s';

const bin = join(repo, '.vm-cache', 'standin-host');
mkdirSync(dirname(bin), { recursive: true });
execFileSync('gcc', ['-static', '-O2', '-pthread', '-o', bin, join(repo, 'test/vm/support/standin.c')]);

// AGENT_LAYOUT=legacy: a cgroup v1 host (cpuset, cpu,cpuacct, memory and name=systemd hierarchies of
// plain files, and a mount table saying so in <root>/proc/self/mountinfo). <root>/proc is then a
// directory of links to the live /proc entries, made after the stand-ins start, so the processes the
// agent reads are the real ones; no mount namespace is needed.
const legacy = process.env.AGENT_LAYOUT === 'legacy';
// AGENT_CGROUP: on this machine every process is in the root of the (unused) cgroup2 hierarchy, and
// moving the stand-ins would touch the machine's own cgroups. So <root>/proc is then a directory of
// links to the live /proc entries, each stand-in's a directory of links to its live entries but
// for `cgroup`, a file naming AGENT_CGROUP (made after they start); the fixture tree has that
// cgroup. Their task/ and status files stay the kernel's: the audit's reads cost what they cost.
const standinCgroup = process.env.AGENT_CGROUP || undefined;
if (standinCgroup !== undefined && (legacy || !/^(\/[\w.@-]+)+$/.test(standinCgroup))) {
  throw new Error(
    `AGENT_CGROUP=${standinCgroup}: expected a cgroup path like /system.slice/standin.service (v2 only)`,
  );
}
const root = mkdtempSync(join(tmpdir(), 'isolate-agent-bench-'));
if (!legacy && !standinCgroup) symlinkSync('/proc', join(root, 'proc'));
cpSync(join(repo, 'test/fixtures/sysfs/qemu-2s-smt2/sys'), join(root, 'sys'), { recursive: true });
const cg = join(root, 'sys/fs/cgroup');
mkdirSync(cg, { recursive: true });
// AGENT_TREE=systemd: the cgroup tree also has a systemd host's top level (systemd-tree.mjs); by default only
// the workloads' cgroups, which understates what a round reads on a real host.
const systemdTree = process.env.AGENT_TREE === 'systemd';
const files = (dir, values) => {
  mkdirSync(dir, { recursive: true });
  for (const [f, v] of Object.entries(values)) writeFileSync(join(dir, f), `${v}\n`);
};
if (legacy) {
  const base = { 'cgroup.procs': '', tasks: '' };
  files(join(cg, 'systemd'), base);
  files(join(cg, 'cpuset'), {
    ...base,
    'cpuset.cpus': '0-7',
    'cpuset.mems': '0-1',
    'cpuset.effective_cpus': '0-7',
    'cpuset.cpu_exclusive': '1',
    'cpuset.mem_exclusive': '1',
  });
  for (const g of ['', 'hadoop-yarn']) files(join(cg, 'cpu,cpuacct', g), { ...base, 'cpu.shares': '1024' });
  files(join(cg, 'memory'), { ...base, 'memory.limit_in_bytes': '9223372036854771712' });
} else {
  writeFileSync(join(cg, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
  writeFileSync(join(cg, 'cgroup.subtree_control'), 'cpuset cpu memory\n');
  for (const g of ['kafka.slice', 'hadoop-yarn', 'isolate-kafka']) {
    mkdirSync(join(cg, g));
    for (const f of ['cpuset.cpus', 'cpuset.mems', 'cgroup.subtree_control'])
      writeFileSync(join(cg, g, f), '\n');
    writeFileSync(join(cg, g, 'cpuset.cpus.partition'), 'member\n');
    writeFileSync(join(cg, g, 'cgroup.events'), 'populated 0\nfrozen 0\n');
  }
  if (systemdTree) {
    for (const g of SYSTEMD_TOP_LEVEL) files(join(cg, g), systemdUnitFiles(g));
  }
}
if (standinCgroup) {
  // Unfenced like a real host's services under strict: false; cpuset files at the service itself.
  const dir = join(cg, standinCgroup);
  files(dir, { 'cgroup.type': 'domain', 'cpuset.cpus.effective': '0-7', 'cpuset.mems.effective': '0-1' });
}
const LEGACY_MOUNTINFO = [
  '25 22 0:24 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755',
  '27 25 0:26 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup rw,xattr,name=systemd',
  '30 25 0:29 / /sys/fs/cgroup/cpuset rw,nosuid,nodev,noexec,relatime shared:14 - cgroup cgroup rw,cpuset',
  '31 25 0:30 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:15 - cgroup cgroup rw,cpu,cpuacct',
  '32 25 0:31 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:16 - cgroup cgroup rw,memory',
  '',
].join('\n');
/** <root>/proc of an AGENT_CGROUP run: links to the live entries, the stand-ins' cgroup files its own. */
function linkProcInCgroup() {
  const dir = join(root, 'proc');
  mkdirSync(dir);
  const mine = new Set(started.map(String));
  for (const e of readdirSync('/proc')) {
    if (!mine.has(e)) {
      symlinkSync(join('/proc', e), join(dir, e));
      continue;
    }
    mkdirSync(join(dir, e));
    for (const f of readdirSync(join('/proc', e))) {
      if (f !== 'cgroup') symlinkSync(join('/proc', e, f), join(dir, e, f));
    }
    writeFileSync(join(dir, e, 'cgroup'), `0::${standinCgroup}\n`);
  }
  // What the kernel lists in the cgroup's own files (the stand-ins start no thread later).
  const tids = started.flatMap((pid) => readdirSync(`/proc/${pid}/task`));
  writeFileSync(join(cg, standinCgroup, 'cgroup.procs'), `${started.join('\n')}\n`);
  writeFileSync(join(cg, standinCgroup, 'cgroup.threads'), `${tids.join('\n')}\n`);
}
/** <root>/proc of a legacy run: a link per live /proc entry, and a mount table of its own. */
function linkProc() {
  const dir = join(root, 'proc');
  mkdirSync(join(dir, 'self'), { recursive: true });
  writeFileSync(join(dir, 'self/mountinfo'), LEGACY_MOUNTINFO);
  for (const e of readdirSync('/proc')) if (e !== 'self') symlinkSync(join('/proc', e), join(dir, e));
}
const kafkaMatch =
  matcher === 'process' ? "{ process: { cmdline: 'kafka\\.Kafka' } }" : '{ cgroup: /kafka.slice }';
const policy = join(root, 'policy.yaml');
writeFileSync(
  policy,
  `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
workloads:
  - { name: kafka, class: exclusive, cores: 1, match: ${kafkaMatch} }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
`,
);

/** Its user and system CPU time so far (utime, stime), in clock ticks. */
const cpuSplit = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return { user: Number(rest[11]), system: Number(rest[12]) };
};
// Precise on-CPU time of every thread (schedstat, ns) besides the tick-sampled utime+stime: an agent
// that wakes briefly many times a second is exactly what tick sampling measures worst.
const cpuNs = (pid) => {
  let ns = 0;
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0]);
    } catch {}
  }
  return ns;
};
const statusKb = (pid, field) =>
  Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
const rssKb = (pid) => statusKb(pid, 'VmRSS');
/** "median M, max X" of resident memory samples (MB). */
const medianMax = (mb) => {
  const sorted = [...mb].sort((a, b) => a - b);
  return `median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(1)}, max ${sorted.at(-1)?.toFixed(1)}`;
};
const hz = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
/** A process's CPU time so far, both ways, to take a window's share of a core from. */
const cpuMark = (pid) => ({ ...cpuSplit(pid), ns: cpuNs(pid) });
/**
 * Its share of one core since `mark`: tick-sampled (utime + stime, and each apart) and precise
 * (schedstat). The split tells the kernel's work (reading /proc and cgroupfs) from the program's own.
 */
const cpuShare = (pid, mark, wall) => {
  const now = cpuSplit(pid);
  const user = (now.user - mark.user) / hz / wall;
  const system = (now.system - mark.system) / hz / wall;
  return { ticks: user + system, user, system, precise: (cpuNs(pid) - mark.ns) / 1e9 / wall };
};
/** "user U %, system S %" of a cpuShare. */
const userSystem = (c) => `user ${(c.user * 100).toFixed(2)} %, system ${(c.system * 100).toFixed(2)} %`;

// The program measured: the packaged executable, or this Node with dist/cli.js (and AGENT_NODE_ARGS,
// e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it).
const isolateCmd = process.env.AGENT_BIN
  ? [process.env.AGENT_BIN]
  : [
      process.execPath,
      ...(process.env.AGENT_NODE_ARGS ?? '').split(' ').filter(Boolean),
      join(repo, 'dist/cli.js'),
    ];

// The agent as systemd/isolate.service runs it: with the unit's allocator settings (GLIBC_TUNABLES)
// and V8 options (NODE_OPTIONS), unless AGENT_UNIT_ENV=0.
const unitEnv =
  process.env.AGENT_UNIT_ENV === '0'
    ? {}
    : Object.fromEntries(
        readFileSync(join(repo, 'systemd/isolate.service'), 'utf8')
          .split('\n')
          .map((l) => /^Environment=(GLIBC_TUNABLES|NODE_OPTIONS)=(\S+)$/.exec(l))
          .filter(Boolean)
          .map((m) => [m[1], m[2]]),
      );

/** The metrics ports of the measured agent and of the one side by side (AGENT_COMPARE). */
const METRICS_PORT = 19465;
const COMPARE_METRICS_PORT = 19466;

const warmupS = Number(process.env.AGENT_WARMUP_S ?? 10);
if (!(warmupS >= 0)) throw new Error(`AGENT_WARMUP_S=${process.env.AGENT_WARMUP_S}: expected seconds`);
/** Seconds a slice of the CPU trace lasts (see the window below). */
const CPU_SLICE_S = 5;

const started = [];
let agent;
// The reference load (AGENT_REFERENCE, default on) runs under the agent's own runtime: the one packaged
// in the executable, or this Node for dist/cli.js.
const referenceNode = process.env.AGENT_BIN
  ? join(repo, '.cache/node-runtime', RUNTIME.version, 'node')
  : process.execPath;
let reference;
let idleTimer;
let scraper;
const compareBin = process.env.AGENT_COMPARE || undefined;
// AGENT_COMPARE_DELAY_S=N starts the side-by-side agent N s after the first (the window then starts
// AGENT_WARMUP_S after the second): with the same executable for both, whether an agent's cost per
// round changes with its age, apart from the machine's own drift.
const compareDelayS = Number(process.env.AGENT_COMPARE_DELAY_S ?? 0);
if (!(compareDelayS >= 0))
  throw new Error(`AGENT_COMPARE_DELAY_S=${process.env.AGENT_COMPARE_DELAY_S}: expected seconds`);
let compared;
let compareTimer;
let compareRoot;
// The executables measured start paged in by their own exec, as after a boot: read through instead
// (`cat`) the agent measured 88 MB resident and more CPU, freshly written by `npm run package` 69-74 MB
// (page-cache.mjs). AGENT_PAGE_CACHE=keep leaves them as they are.
if (process.env.AGENT_PAGE_CACHE !== 'keep') {
  for (const file of [process.env.AGENT_BIN, compareBin]) if (file) dropFromPageCache(file);
}
try {
  const out = execFileSync(bin, ['--fanout', String(procs), String(threads - 1)], { encoding: 'utf8' });
  for (const l of out.split('\n')) if (/^\d+$/.test(l)) started.push(Number(l));
  if (legacy) linkProc();
  if (standinCgroup) linkProcInCgroup();
  const inHost = (argv) => (legacy ? argv : [...PRIVATE_CGROUP2, ...argv]);
  const [cmd, ...args] = inHost([
    ...isolateCmd,
    'agent',
    '--root',
    root,
    '--policy',
    policy,
    '--interval',
    interval,
    '--metrics-address',
    `127.0.0.1:${METRICS_PORT}`,
    // Extra agent flags, e.g. AGENT_ARGS="--check-interval 1h" to measure the loop alone.
    ...(process.env.AGENT_ARGS ?? '').split(' ').filter(Boolean),
  ]);
  if (compareBin) {
    // The same host, copied before either agent writes to it (its proc/ links still lead to the live
    // entries); the second agent gets another metrics port.
    compareRoot = `${root}-compare`;
    cpSync(root, compareRoot, { recursive: true, verbatimSymlinks: true });
    const [cmdB, ...argsB] = inHost([
      compareBin,
      ...args
        .slice(args.indexOf('agent'))
        .map((a) =>
          a.startsWith(root)
            ? compareRoot + a.slice(root.length)
            : a === `127.0.0.1:${METRICS_PORT}`
              ? `127.0.0.1:${COMPARE_METRICS_PORT}`
              : a,
        ),
    ]);
    const spawnCompared = () =>
      spawn(cmdB, argsB, {
        stdio: ['ignore', 'ignore', 'inherit'],
        env: { ...process.env, ...unitEnv, ISOLATE_LOG: process.env.AGENT_LOG ?? 'off' },
      });
    if (compareDelayS > 0)
      compareTimer = setTimeout(() => (compared = spawnCompared()), compareDelayS * 1000);
    else compared = spawnCompared();
  }
  if (process.env.AGENT_REFERENCE !== '0') {
    reference = spawn(referenceNode, [join(repo, 'bench/reference-load.mjs'), cg, ...started.map(String)], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, ...unitEnv },
    });
  }
  if (process.env.AGENT_WAKE !== '0') {
    const flags = referenceNode === process.execPath ? [] : EXEC_ARGV;
    idleTimer = spawn(referenceNode, [...flags, '-e', 'setInterval(() => {}, 1000)'], {
      stdio: 'ignore',
      env: { ...process.env, ...unitEnv },
    });
  }
  agent = spawn(cmd, args, {
    stdio: ['ignore', process.env.AGENT_STDOUT ? 'inherit' : 'ignore', 'inherit'],
    env: { ...process.env, ...unitEnv, ISOLATE_LOG: process.env.AGENT_LOG ?? 'off' },
  });
  const scrapeS = Number(process.env.AGENT_SCRAPE_S ?? 0);
  if (!(scrapeS >= 0)) throw new Error(`AGENT_SCRAPE_S=${process.env.AGENT_SCRAPE_S}: expected seconds`);
  scraper =
    scrapeS > 0
      ? setInterval(() => {
          for (const port of compared ? [METRICS_PORT, COMPARE_METRICS_PORT] : [METRICS_PORT]) {
            fetch(`http://127.0.0.1:${port}/metrics`)
              .then((r) => r.text())
              .catch(() => {});
          }
        }, scrapeS * 1000)
      : undefined;
  // Start-up and first convergence (AGENT_WARMUP_S, default 10 s): the start-up audit, the compacting
  // GC after it and V8's memory reducer fall before the window when it is 60 s or more.
  await new Promise((r) => setTimeout(r, (warmupS + (compareBin ? compareDelayS : 0)) * 1000));
  // An agent that could not start (a port still held by an agent of an interrupted run) says why on
  // the stderr above; say so here too rather than fail reading its /proc entry.
  for (const [what, child] of [
    ['agent', agent],
    ['side-by-side agent', compared],
  ]) {
    if (child && child.exitCode !== null) {
      throw new Error(`the ${what} exited during the warm-up (code ${child.exitCode}); see its error above`);
    }
  }
  const a0 = cpuMark(agent.pid);
  const b0 = compared ? cpuMark(compared.pid) : null;
  const r0 = reference ? cpuMark(reference.pid) : null;
  const i0 = idleTimer ? cpuMark(idleTimer.pid) : null;
  const w0 = Date.now();
  // Resident memory moves with the GC (a full GC, then V8's memory reducer handing pooled pages back):
  // sampled every second of the window, not only at its end.
  // AGENT_RSS_TRACE=1 prints each sample (seconds into the window, RSS and its anonymous part, MB).
  const rssSamples = [];
  const compareRssSamples = [];
  // The window's CPU in slices of CPU_SLICE_S seconds (precise, schedstat), for every 60 s stretch of
  // it: the target is a share over 60 s, and a periodic burst (the audit) lands in some windows only.
  // AGENT_CPU_TRACE=1 prints each slice.
  const slices = { a: [], b: [], r: [] };
  let sliceMark = { a: a0.ns, b: b0?.ns, r: r0?.ns, at: w0 };
  const sliceTimer = setInterval(() => {
    const now = Date.now();
    const a = cpuNs(agent.pid);
    const b = compared ? cpuNs(compared.pid) : undefined;
    const r = reference ? cpuNs(reference.pid) : undefined;
    const wallS = (now - sliceMark.at) / 1000;
    slices.a.push((a - sliceMark.a) / 1e9 / wallS);
    if (b !== undefined) slices.b.push((b - sliceMark.b) / 1e9 / wallS);
    if (r !== undefined) slices.r.push((r - sliceMark.r) / 1e9 / wallS);
    if (process.env.AGENT_CPU_TRACE) {
      const at = ((now - w0) / 1000).toFixed(0);
      const pct = (v) => `${(v * 100).toFixed(2)} %`;
      console.log(
        `cpu t=${at} ${pct(slices.a.at(-1))}${b !== undefined ? ` (side by side: ${pct(slices.b.at(-1))})` : ''}${r !== undefined ? ` (reference: ${pct(slices.r.at(-1))})` : ''}`,
      );
    }
    sliceMark = { a, b, r, at: now };
  }, CPU_SLICE_S * 1000);
  const sampler = setInterval(() => {
    rssSamples.push(rssKb(agent.pid) / 1024);
    if (compared) compareRssSamples.push(rssKb(compared.pid) / 1024);
    if (process.env.AGENT_RSS_TRACE) {
      const at = ((Date.now() - w0) / 1000).toFixed(0);
      console.log(
        `rss t=${at} ${rssSamples.at(-1).toFixed(1)} anon ${(statusKb(agent.pid, 'RssAnon') / 1024).toFixed(1)}`,
      );
    }
  }, 1000);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  clearInterval(sampler);
  clearInterval(sliceTimer);
  clearInterval(scraper);
  const wall = (Date.now() - w0) / 1000;
  const agentCpu = cpuShare(agent.pid, a0, wall);
  const { ticks: cpu, precise: cpuPrecise } = agentCpu;
  const rss = rssKb(agent.pid) / 1024;
  const threadsNow = Number(
    execFileSync('sh', ['-c', 'ls /proc/*/task | grep -c "^[0-9]"'], { encoding: 'utf8' }).trim(),
  );
  for (const [k, v] of Object.entries(unitEnv)) console.log(`agent environment (the unit's): ${k}=${v}`);
  console.log(
    `host: ${started.length} stand-in processes, ~${threadsNow} threads in /proc; matcher: ${matcher}; cgroup ${legacy ? 'v1 (legacy)' : 'v2'}; stand-ins in ${standinCgroup ?? 'the root cgroup'}`,
  );
  console.log(
    `agent over ${seconds} s at --interval ${interval}, from ${warmupS} s after its start: CPU ${(cpu * 100).toFixed(2)} % of one core (target ≤ 0.5 %; schedstat: ${(cpuPrecise * 100).toFixed(2)} %; ${userSystem(agentCpu)})`,
  );
  const per = 60 / CPU_SLICE_S;
  /** The CPU of every 60 s stretch of the window (whole slices, one a slice apart). */
  const stretches = (v) => {
    const out = [];
    for (let i = 0; i + per <= v.length; i++) out.push(v.slice(i, i + per).reduce((x, y) => x + y, 0) / per);
    return out;
  };
  /** The least and most CPU of any of these 60 s stretches, or null when the window is shorter. */
  const windows = (sums) => {
    if (sums.length === 0) return null;
    return `${(Math.min(...sums) * 100).toFixed(2)}–${(Math.max(...sums) * 100).toFixed(2)} %`;
  };
  // Each series' stretches once, for every line below that reads them.
  const agentStretches = stretches(slices.a);
  const twinStretches = stretches(slices.b);
  const spread = windows(agentStretches);
  if (spread) {
    const other = windows(twinStretches);
    console.log(
      `its 60 s windows (every ${CPU_SLICE_S} s): ${spread} of one core${other ? ` (side by side: ${other})` : ''}`,
    );
    // The first and the last minute apart: an agent's cost per round rises with its age (2026-12-04:
    // 0.31-0.33 % in its first minutes, 0.45-0.6 % after 10-20 min, while a twin started later beside it
    // measured 0.33-0.42 %), so a run's mean depends on its length; this shows the trend. Not always:
    // a 3600 s run the same day held 0.29-0.35 % for 40 minutes. The rise was user time, with the same
    // calls.
    const ends = (s) =>
      s.length > 1 ? `${(s[0] * 100).toFixed(2)} % → ${(s[s.length - 1] * 100).toFixed(2)} %` : null;
    const trend = ends(agentStretches);
    if (trend) {
      const otherTrend = ends(twinStretches);
      console.log(
        `its first and last 60 s windows: ${trend}${otherTrend ? ` (side by side: ${otherTrend})` : ''}`,
      );
    }
  }
  if (r0) {
    // The agent's CPU in units of the reference's, whole window and per 60 s stretch: the machine's
    // speed taken out only in part (reference-load.mjs says how far).
    const ref = cpuShare(reference.pid, r0, wall).precise;
    const ratios = slices.a.map((v, i) => v / slices.r[i]);
    const rw = stretches(slices.r);
    const refWindows = windows(rw);
    const rr = agentStretches.map((v, i) => v / rw[i]);
    console.log(
      `reference load (bench/reference-load.mjs, fixed work, under ${referenceNode === process.execPath ? process.version : RUNTIME.version}): ${(ref * 100).toFixed(2)} % of one core (schedstat)` +
        `${refWindows ? `, 60 s windows ${refWindows}` : ''}; the agent ÷ the reference: ${(cpuPrecise / ref).toFixed(2)}` +
        `${rr.length > 0 ? ` (60 s windows ${Math.min(...rr).toFixed(2)}–${Math.max(...rr).toFixed(2)})` : ` (5 s slices ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`}`,
    );
  }
  if (i0) {
    // One wake-up a second: its share of a core in ms a wake-up is share × 1000.
    const wakeMs = cpuShare(idleTimer.pid, i0, wall).precise * 1000;
    // The round, and with `process:` matchers the probe half an interval later (src/agent/agent.ts).
    const wakes = matcher === 'process' ? 2 : 1;
    console.log(
      `an empty 1 s timer beside it (the same runtime and flags): ${wakeMs.toFixed(2)} ms of CPU a wake-up; ` +
        `the agent's ${wakes} wake-up${wakes > 1 ? 's' : ''} a second at that price: ${((wakes * wakeMs) / 10).toFixed(2)} % of one core`,
    );
  }
  if (b0) {
    const b = cpuShare(compared.pid, b0, wall);
    console.log(
      `side by side, ${compareBin}: CPU ${(b.ticks * 100).toFixed(2)} % of one core (schedstat: ${(b.precise * 100).toFixed(2)} %; ${userSystem(b)}), resident memory ${(rssKb(compared.pid) / 1024).toFixed(1)} MB (over the window: ${medianMax(compareRssSamples)})`,
    );
  }
  // How long its rounds took (its own histogram, isolate_reconcile_duration_seconds, since its start):
  // a round that does more work than the others (the process scan's re-reads all at once) also
  // delays that round's corrections.
  const slowRounds = async (port) => {
    // An agent run without metrics (AGENT_ARGS="--no-metrics") has no histogram to read.
    const text = await fetch(`http://127.0.0.1:${port}/metrics`)
      .then((r) => r.text())
      .catch(() => null);
    if (text === null) return 'unknown (no metrics)';
    const count = (le) =>
      Number(
        new RegExp(`^isolate_reconcile_duration_seconds_bucket\\{le="${le}"\\} (\\d+)`, 'm').exec(text)?.[1],
      );
    const all = count('\\+Inf');
    return `${all - count('0.025')} of ${all} over 25 ms, ${all - count('0.05')} over 50 ms, ${all - count('0.1')} over 100 ms`;
  };
  console.log(
    `its rounds: ${await slowRounds(METRICS_PORT)}${compared ? ` (side by side: ${await slowRounds(COMPARE_METRICS_PORT)})` : ''}`,
  );
  const part = (f) => (statusKb(agent.pid, f) / 1024).toFixed(1);
  console.log(
    `agent resident memory: ${rss.toFixed(1)} MB (target ≤ 60 MB; anonymous ${part('RssAnon')}, file ${part('RssFile')}; ` +
      `over the window: ${medianMax([...rssSamples, rss])})`,
  );
  // AGENT_SMAPS=1: where the resident memory lies, per mapping (file and section, or [heap]/anonymous).
  if (process.env.AGENT_SMAPS) {
    const rows = new Map();
    let name = '';
    for (const line of readFileSync(`/proc/${agent.pid}/smaps`, 'utf8').split('\n')) {
      const head = /^[0-9a-f]+-[0-9a-f]+ (\S+) [0-9a-f]+ \S+ \d+\s*(.*)$/.exec(line);
      if (head) name = `${head[2] || 'anonymous'} ${head[1]}`;
      const rssLine = /^Rss:\s+(\d+) kB/.exec(line);
      if (rssLine) rows.set(name, (rows.get(name) ?? 0) + Number(rssLine[1]));
    }
    for (const [n, kb] of [...rows].sort((a, b) => b[1] - a[1]).filter(([, kb]) => kb >= 256))
      console.log(`  ${(kb / 1024).toFixed(1).padStart(6)} MB  ${n}`);
  }
  // The full thread audit (the agent's --check-interval, and `isolate check`) on the same host: what
  // one run costs, start-up included. The shell's `times` gives the child's CPU.
  const checkCmd = inHost([...isolateCmd, 'check', '--root', root, '--policy', policy]);
  // Its status line (the first line of its output) says what the audit found on this host.
  const timed = execFileSync('sh', ['-c', `"$@" 2>/dev/null | head -1; times`, 'sh', ...checkCmd], {
    encoding: 'utf8',
    // As isolate-check.service runs it: without the agent unit's GLIBC_TUNABLES and NODE_OPTIONS.
    env: { ...process.env, ISOLATE_LOG: 'off' },
  });
  const sec = (t) => {
    const m = /(\d+)m([\d.]+)s/.exec(t);
    return m ? Number(m[1]) * 60 + Number(m[2]) : Number.NaN;
  };
  const [status, , children] = timed.trim().split('\n');
  const [u, sys] = (children ?? '').split(/\s+/);
  console.log(
    `one \`isolate check\` of this host: ${((sec(u) + sec(sys)) * 1000).toFixed(0)} ms CPU; ${status}`,
  );
} finally {
  clearInterval(scraper);
  reference?.kill('SIGTERM');
  idleTimer?.kill('SIGTERM');
  agent?.kill('SIGTERM');
  // A run that failed before the delayed start must not start it afterwards.
  clearTimeout(compareTimer);
  compared?.kill('SIGTERM');
  for (const pid of started) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
  // Gone before this returns: 20,000 dying threads are still being torn down for a few seconds, and a
  // run started meanwhile (the next run of a series) measured its agent against them.
  const until = Date.now() + 30_000;
  while (Date.now() < until && started.some((pid) => existsSync(`/proc/${pid}`))) {
    await new Promise((r) => setTimeout(r, 200));
  }
  rmSync(root, { recursive: true, force: true });
  if (compareRoot) rmSync(compareRoot, { recursive: true, force: true });
}
