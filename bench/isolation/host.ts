/**
 * Runs the arms on a real host, only when the operator named its cgroup root with
 * --host-cgroup-root. The bench makes its own top-level cgroups (isolate-bench-probe,
 * isolate-bench-batch), applies and rolls back isolate's plan around each isolated arm, and removes
 * its cgroups at the end (the arms script's exit trap, also on Ctrl-C). It refuses to start if any
 * of its cgroups already exists or if isolate has a plan applied on this host, whose journal an
 * apply/rollback of the bench's own policy would replace.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSections } from '../../test/vm/harness/run.js';
import { REPO_ROOT } from '../../test/vm/harness/paths.js';
import { benchBinary } from './build.js';
import { type ArmsOutput, armsEnv, policyFiles } from './guest.js';
import type { Params } from './params.js';
import { BATCH_CGROUP, PROBE_CGROUP } from './policy.js';

export interface HostFacts {
  /** The directory the operator named. */
  cgroupRoot: string;
  /** `/` on a host; a fixture tree in tests. isolate reads `<root>/sys/fs/cgroup`. */
  root: string;
  uid: number;
  /** /proc/self/mountinfo. */
  mountinfo: string;
}

/** Every reason not to run here; empty when the host is fit. */
export function hostProblems(f: HostFacts): string[] {
  const problems: string[] = [];
  if (f.uid !== 0) problems.push('must run as root: it creates cgroups and runs isolate apply');
  const expected = join(f.root, 'sys/fs/cgroup');
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  };
  if (real(f.cgroupRoot) !== real(expected)) {
    problems.push(
      `--host-cgroup-root ${f.cgroupRoot}: isolate manages the cgroup2 mount at ${expected}; name that one`,
    );
    return problems;
  }
  const mountpoint = `/${real(expected).slice(real(f.root).length).replace(/^\/+/, '')}`;
  const cgroup2 = f.mountinfo
    .split('\n')
    .some((l) => l.split(' ')[4] === mountpoint && / - cgroup2 /.test(l));
  if (!cgroup2) problems.push(`${expected} is not a cgroup2 mount (unified hierarchy needed)`);
  let controllers = '';
  try {
    controllers = readFileSync(join(expected, 'cgroup.controllers'), 'utf8');
  } catch {
    // reported just below
  }
  if (!/\bcpuset\b/.test(controllers))
    problems.push(`${expected}/cgroup.controllers has no cpuset: the kernel cannot fence CPUs here`);
  for (const cg of [PROBE_CGROUP, BATCH_CGROUP]) {
    if (existsSync(join(expected, cg)))
      problems.push(
        `${expected}${cg} already exists: another run is going on, or one was killed; remove it first`,
      );
  }
  const journal = join(f.root, 'var/lib/isolate/journal.json');
  if (existsSync(journal)) {
    let state = 'unreadable';
    try {
      state = String(JSON.parse(readFileSync(journal, 'utf8')).state);
    } catch {
      // keep "unreadable"
    }
    if (state !== 'rolled-back')
      problems.push(
        `isolate's journal (${journal}) is "${state}": this host runs isolate for real; the bench's apply and rollback would replace that state`,
      );
  }
  return problems;
}

export async function runHostArms(p: Params & { where: { kind: 'host' } }): Promise<ArmsOutput> {
  const problems = hostProblems({
    cgroupRoot: p.where.cgroupRoot,
    root: '/',
    uid: process.getuid?.() ?? -1,
    mountinfo: readFileSync('/proc/self/mountinfo', 'utf8'),
  });
  if (problems.length > 0) throw new Error(`refusing to run on this host:\n  ${problems.join('\n  ')}`);
  const work = mkdtempSync(join(tmpdir(), 'isolate-bench-'));
  try {
    for (const [name, text] of Object.entries(policyFiles(p))) writeFileSync(join(work, name), text);
    const env = {
      CG: '/sys/fs/cgroup',
      ISOLATE: `${process.execPath} ${join(REPO_ROOT, 'dist/cli.js')}`,
      ISOLATE_LOG: 'off',
      PROBE: benchBinary('probe'),
      BATCH: benchBinary('batch'),
      WORK: work,
      NOISE: '0',
    };
    const script = `${armsEnv(p, env)}\n. '${join(REPO_ROOT, 'bench/isolation/arms.sh')}'\n`;
    return await runShell(script);
  } finally {
    rmSync(work, { recursive: true, force: true });
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
