/**
 * Runs the arms on a real host, only when the operator named its cgroup root with
 * --host-cgroup-root. The bench makes its own top-level cgroups (isolate-bench-probe,
 * isolate-bench-batch) in each hierarchy it uses: the cgroup2 mount on a unified host; v1's cpuset
 * (CPU bench) and blkio (I/O bench) on a hybrid or legacy one. It applies and rolls back isolate's
 * plan around each isolated CPU arm, writes the I/O arm's io settings into its own cgroups only, and
 * removes its cgroups and scratch files at the end (the arms script's exit trap, also on Ctrl-C). It
 * refuses to start if any of its cgroups already exists or if isolate has a plan applied on this host,
 * whose journal an apply/rollback of the bench's own policy would replace.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readWorkloadDisks } from '../../src/topology/disks.js';
import { parseSections } from '../../test/vm/harness/run.js';
import { REPO_ROOT } from '../../test/vm/harness/paths.js';
import { benchBinary } from './build.js';
import { type ArmsOutput, armsEnv, policyFiles } from './guest.js';
import { type BenchHierarchies, benchDirs, benchHierarchies, existingBenchCgroups } from './hierarchies.js';
import { type IoDisk, type IoPlan, ioPlan, ioPlanShell } from './io-settings.js';
import type { Bench, Params } from './params.js';
import { BATCH_CGROUP, PROBE_CGROUP } from './policy.js';

export interface HostFacts {
  /** The directory the operator named. */
  cgroupRoot: string;
  /** `/` on a host; a fixture tree in tests. isolate reads `<root>/sys/fs/cgroup`, `<root>/proc/self/mountinfo`. */
  root: string;
  uid: number;
  benches: readonly Bench[];
}

export interface HostCheck {
  problems: string[];
  hierarchies: BenchHierarchies;
}

const real = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
};

/** Every reason not to run here (empty when the host is fit), and the hierarchies the bench would use. */
export async function checkHost(f: HostFacts): Promise<HostCheck> {
  const problems: string[] = [];
  if (f.uid !== 0) problems.push('must run as root: it creates cgroups and runs isolate apply');
  const expected = join(f.root, 'sys/fs/cgroup');
  const hierarchies = await benchHierarchies(f.root, f.benches);
  if (real(f.cgroupRoot) !== real(expected)) {
    problems.push(
      `--host-cgroup-root ${f.cgroupRoot}: isolate manages the cgroup mounts at ${expected}; name that one`,
    );
    return { problems, hierarchies };
  }
  problems.push(...hierarchies.problems);
  for (const p of existingBenchCgroups(benchDirs(hierarchies, f.benches), [PROBE_CGROUP, BATCH_CGROUP]))
    problems.push(`${p} already exists: another run is going on, or one was killed; remove it first`);
  const journal = join(f.root, 'var/lib/isolate/journal.json');
  if (f.benches.includes('cpu') && existsSync(journal)) {
    const state = journalState(journal);
    if (state !== 'rolled-back')
      problems.push(
        `isolate's journal (${journal}) is "${state}": this host runs isolate for real; the bench's apply and rollback would replace that state`,
      );
  }
  return { problems, hierarchies };
}

function journalState(journal: string): string {
  try {
    return String(JSON.parse(readFileSync(journal, 'utf8')).state);
  } catch {
    return 'unreadable';
  }
}

/**
 * Removes isolate's state directory that this run created, but only once its journal says rolled back:
 * a journal still applied (a failed rollback) is the only way back for the host, so it stays and is named.
 */
export function removeRunState(stateDir: string): void {
  const journal = join(stateDir, 'journal.json');
  const state = existsSync(journal) ? journalState(journal) : 'rolled-back';
  if (state === 'rolled-back') rmSync(stateDir, { recursive: true, force: true });
  else
    process.stderr.write(
      `bench: isolate's journal ${journal} is "${state}", left in place: run \`isolate rollback\`, then remove ${stateDir}\n`,
    );
}

/** Every reason not to run here; empty when the host is fit. */
export async function hostProblems(f: HostFacts): Promise<string[]> {
  return (await checkHost(f)).problems;
}

export interface IoTarget {
  disks: IoDisk[];
  problems: string[];
}

/**
 * The whole disks under the I/O bench's directory, read the way isolate reads Kafka's log
 * directories (src/topology/disks.ts): partitions, LVM and md resolve to the disks underneath; a
 * directory with no block device (tmpfs, overlay, NFS) is refused, as is anything but a directory.
 */
export function ioTarget(root: string, dir: string, kind: 'v1' | 'v2' | null): IoTarget {
  const problems: string[] = [];
  const here = join(root, dir);
  let isDir = false;
  try {
    isDir = statSync(here).isDirectory();
  } catch (e) {
    problems.push(`--io-dir ${dir}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    return { disks: [], problems };
  }
  if (!isDir) {
    problems.push(
      `--io-dir ${dir}: not a directory (the bench writes files in a directory, never to a device)`,
    );
    return { disks: [], problems };
  }
  const [w] = readWorkloadDisks(root, [{ workload: 'bench-io', source: { kind: 'paths', paths: [dir] } }]);
  for (const f of w?.findings ?? [])
    if (f.severity !== 'info') problems.push(`--io-dir ${dir}: ${f.message}`);
  const qos = kind === 'v2' ? readOr(join(root, 'sys/fs/cgroup/io.cost.qos')) : '';
  const disks: IoDisk[] = [];
  for (const d of w?.disks ?? []) {
    if (d.dev === null) {
      problems.push(`--io-dir ${dir}: the MAJ:MIN of disk ${d.name} is unknown`);
      continue;
    }
    const iocost = new RegExp(`^${d.dev} .*\\benable=1\\b`, 'm').test(qos);
    disks.push({ name: d.name, dev: d.dev, scheduler: d.scheduler, rotational: d.rotational, iocost });
  }
  if (disks.length === 0 && problems.length === 0)
    problems.push(
      `--io-dir ${dir}: no block device under it (a filesystem without a disk): name a directory on the disk under test`,
    );
  return { disks, problems };
}

function readOr(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** The I/O arms' environment for arms.sh, and the plan it writes in the isolated arm. */
export function ioEnv(
  p: Params,
  h: BenchHierarchies,
  disks: IoDisk[],
): { env: Record<string, string>; plan: IoPlan } {
  const io = p.io!;
  const hier = h.io!;
  const cap =
    io.cap.kind === 'share'
      ? { wiops: true, wbps: true }
      : { wiops: io.cap.wiops !== undefined, wbps: io.cap.wbps !== undefined };
  const plan = ioPlan(hier.kind, disks, { latencyTargetUs: io.latencyTargetUs, cap });
  const env: Record<string, string> = {
    IO_ARMS: p.ioArms.join(' '),
    IO_CG: hier.dir,
    IO_KIND: hier.kind,
    IO_DIR: io.dir,
    IO_DEVS: disks.map((d) => d.dev).join(' '),
    IO_RATE: String(io.rate),
    IO_APPEND: String(io.appendBytes),
    IO_FSYNC_MS: String(io.fsyncMs),
    IO_BATCH_THREADS: String(io.batchThreads),
    IO_BATCH_BS_KIB: String(io.batchBsKiB),
    IO_BATCH_FILE_MIB: String(io.batchFileMiB),
    IO_ISOLATE_FN: ioPlanShell(plan),
  };
  if (io.cap.kind === 'share') env.CAP_SHARE = String(io.cap.percent);
  else {
    if (io.cap.wiops !== undefined) env.CAP_WIOPS = String(io.cap.wiops);
    if (io.cap.wbps !== undefined) env.CAP_WBPS = String(io.cap.wbps);
  }
  return { env, plan };
}

export interface HostArmsOutput extends ArmsOutput {
  layout: string;
  io?: { disks: IoDisk[]; plan: IoPlan; kind: 'v1' | 'v2' };
}

export async function runHostArms(p: Params & { where: { kind: 'host' } }): Promise<HostArmsOutput> {
  const benches: Bench[] = [
    ...(p.arms.length > 0 ? ['cpu' as const] : []),
    ...(p.ioArms.length > 0 ? ['io' as const] : []),
  ];
  const { problems, hierarchies: h } = await checkHost({
    cgroupRoot: p.where.cgroupRoot,
    root: '/',
    uid: process.getuid?.() ?? -1,
    benches,
  });
  const target = p.io && p.ioArms.length > 0 ? ioTarget('/', p.io.dir, h.io?.kind ?? null) : undefined;
  problems.push(...(target?.problems ?? []));
  if (problems.length > 0) throw new Error(`refusing to run on this host:\n  ${problems.join('\n  ')}`);
  const work = mkdtempSync(join(tmpdir(), 'isolate-bench-'));
  // The CPU arms' apply and rollback leave isolate's journal behind; a host that had no isolate state
  // before the run has none after it.
  const stateDir = '/var/lib/isolate';
  const hadState = existsSync(stateDir);
  try {
    for (const [name, text] of Object.entries(policyFiles(p))) writeFileSync(join(work, name), text);
    const cpuDir = h.cpu?.dir ?? h.io!.dir;
    const env: Record<string, string> = {
      CG: cpuDir,
      CG_DIRS: benchDirs(h, benches).join(' '),
      CPUSET_V1: h.cpu?.kind === 'v1' ? '1' : '0',
      ISOLATE: `${process.execPath} ${join(REPO_ROOT, 'dist/cli.js')}`,
      ISOLATE_LOG: 'off',
      PROBE: benchBinary('probe'),
      BATCH: benchBinary('batch'),
      WORK: work,
      NOISE: '0',
    };
    let io: HostArmsOutput['io'];
    if (target && p.io) {
      const { env: ioVars, plan } = ioEnv(p, h, target.disks);
      Object.assign(env, ioVars, { APPENDER: benchBinary('appender'), IOBATCH: benchBinary('iobatch') });
      io = { disks: target.disks, plan, kind: h.io!.kind };
    }
    const script = `${armsEnv(p, env)}\n. '${join(REPO_ROOT, 'bench/isolation/arms.sh')}'\n`;
    return { ...(await runShell(script)), layout: h.layout, ...(io ? { io } : {}) };
  } finally {
    rmSync(work, { recursive: true, force: true });
    if (!hadState) removeRunState(stateDir);
  }
}

function runShell(script: string): Promise<ArmsOutput> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    // Ctrl-C reaches the shell too (same process group); its trap rolls back and removes the cgroups.
    const onSignal = () => process.stderr.write('bench: interrupted; the arms script is cleaning up\n');
    process.on('SIGINT', onSignal);
    child.on('error', reject);
    child.on('close', (code) => {
      process.off('SIGINT', onSignal);
      const log = Buffer.concat(out).toString('utf8');
      if (code !== 0) {
        reject(new Error(`the arms script exited ${code}; its output:\n${log.slice(-3000)}`));
        return;
      }
      resolve({ sections: parseSections(log), log, wallMs: Date.now() - started });
    });
  });
}
