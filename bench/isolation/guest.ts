/** Runs the arms inside a qemu guest of the test harness: a real kernel, never this machine's cgroups. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LAYOUTS, runInVm, type VmLayout } from '../../test/vm/harness/index.js';
import { REPO_ROOT } from '../../test/vm/harness/paths.js';
import { benchBinary } from './build.js';
import type { Params } from './params.js';
import { benchPolicy } from './policy.js';

export interface ArmsOutput {
  sections: Record<string, string>;
  /** Everything the arms printed, for the error message when a section is missing. */
  log: string;
  wallMs: number;
}

// Two packages, SMT2, two NUMA nodes: the smallest shape where isolate's choices (whole cores, one
// node, a reserved core per package) are all visible. mitigations=off because under TCG every
// page-table switch costs a soft-TLB flush, which would dominate a syscall-heavy probe.
export const GUEST_LAYOUT: VmLayout = { ...LAYOUTS.twoSocketSmt2, kernelArgs: 'mitigations=off' };

export function armsEnv(p: Params, env: Record<string, string>): string {
  const vars: Record<string, string> = {
    RATE: String(p.rate),
    WARMUP: String(p.warmupS),
    DURATION: String(p.durationS),
    PROBE_OPTS: p.probeOpts,
    BATCH_THREADS: p.batchThreads === undefined ? '' : String(p.batchThreads),
    ARMS: p.arms.join(' '),
    ...env,
  };
  return Object.entries(vars)
    .map(([k, v]) => `export ${k}='${v.replace(/'/g, `'\\''`)}'`)
    .join('\n');
}

export function policyFiles(p: Params): Record<string, string> {
  const quiet = p.where.kind === 'guest' || p.hostWide;
  return {
    'policy-loose.yaml': benchPolicy({ strict: false, cores: p.cores, quiet }),
    'policy-strict.yaml': benchPolicy({ strict: true, cores: p.cores, quiet }),
  };
}

export async function runGuestArms(p: Params, accel: 'kvm' | 'tcg'): Promise<ArmsOutput> {
  const files: Record<string, string | Buffer> = {
    '/opt/bench/bin/probe': readFileSync(benchBinary('probe')),
    '/opt/bench/bin/batch': readFileSync(benchBinary('batch')),
    '/opt/bench/arms.sh': readFileSync(join(REPO_ROOT, 'bench/isolation/arms.sh'), 'utf8'),
  };
  for (const [name, text] of Object.entries(policyFiles(p))) files[`/tmp/bench/${name}`] = text;
  const script = `${armsEnv(p, {
    CG: '/sys/fs/cgroup',
    ISOLATE: 'node /opt/isolate/dist/cli.js',
    ISOLATE_LOG: 'off',
    PROBE: '/opt/bench/bin/probe',
    BATCH: '/opt/bench/bin/batch',
    WORK: '/tmp/bench',
    NOISE: '1',
  })}
# The harness boots with no network at all; the probe only needs loopback.
ip link set lo up
sh /opt/bench/arms.sh
# What the arms left behind: nothing, if their exit trap cleaned up.
echo =====BEGIN leftover=====; ls -1 /sys/fs/cgroup | grep isolate-bench; ls -1 /sys/fs/cgroup/system.slice 2>/dev/null | grep isolate-bench; echo =====END leftover=====
`;
  const perArm = p.warmupS + p.durationS + Math.max(5, p.durationS);
  const r = await runInVm({
    layout: GUEST_LAYOUT,
    includeProject: true,
    script,
    files,
    accel,
    // Emulated isolate commands take seconds each; the probe's own drain can take a whole duration.
    timeoutMs: 240_000 + p.arms.length * (perArm * 3 + 60) * 1000,
  });
  return { sections: r.sections, log: r.console, wallMs: r.durationMs };
}

/** A guest that boots under KVM and prints one section, or not, within 40 s. */
export async function kvmBootTest(): Promise<boolean> {
  try {
    const r = await runInVm({
      layout: LAYOUTS.noSmt,
      script: 'echo =====BEGIN kvm=====; echo ok; echo =====END kvm=====',
      accel: 'kvm',
      bootAttempts: 1,
      timeoutMs: 40_000,
    });
    return r.sections.kvm?.trim() === 'ok';
  } catch {
    return false;
  }
}
