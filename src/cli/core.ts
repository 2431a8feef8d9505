import type { Command } from 'commander';
import { UserError } from '../errors.js';
import { notice, printJson, requireDir, rootOption } from './options.js';

interface CommonOpts {
  root?: string;
  json?: boolean;
  policy?: string;
}

/** `isolate topology`, `isolate policy validate`, `isolate plan`. */
export function registerCore(program: Command): void {
  program
    .command('topology')
    .description('show packages, NUMA nodes, physical cores, CPUs, memory and devices per node')
    .option('--root <dir>', 'read sysfs under this directory instead of /', '/')
    .option('--json', 'machine-readable output')
    .action(async (opts: CommonOpts) => {
      const root = rootOption(opts.root);
      requireDir(root);
      const { readTopology } = await import('../topology/read.js');
      const { topologyToJson, formatTopology } = await import('../topology/format.js');
      const topology = readTopology(root);
      if (opts.json) printJson(topologyToJson(topology));
      else process.stdout.write(formatTopology(topology, root === '/' ? await hostFacts() : undefined));
    });

  const policy = program.command('policy').description('work with policy files');
  policy
    .command('validate')
    .description('check a policy file; prints nothing but "ok" when it is valid')
    .argument('<file>', 'policy YAML file')
    .option('--root <dir>', 'also check it against the topology under this directory')
    .action(async (file: string, opts: CommonOpts) => {
      const { loadPolicyFile } = await import('../policy/load.js');
      const p = loadPolicyFile(file);
      if (opts.root) {
        // A policy can be valid YAML and still not fit the host (too many cores, unknown CPUs).
        const root = rootOption(opts.root);
        requireDir(root);
        const { readTopology } = await import('../topology/read.js');
        const { allocate } = await import('../planner/allocate.js');
        allocate(readTopology(root), p, undefined, []);
      }
      process.stdout.write(`${file}: ok (${p.workloads.length} workloads)\n`);
    });

  program
    .command('plan')
    .description('compute the allocation and the changes that apply would make')
    .option('--root <dir>', 'host root: sysfs, cgroupfs, /proc and /etc/isolate are read under it', '/')
    .option('--policy <file>', 'policy file (default /etc/isolate/policy.yaml, else the bundled default)')
    .option('--dry-run', 'only print the plan; write nothing anywhere')
    .option(
      '--out <file>',
      'where to save the plan for `isolate apply --plan` (default <root>/var/lib/isolate/plan.json)',
    )
    .option('--json', 'machine-readable output')
    .option(
      '--detailed-exitcode',
      'exit 0 when there is nothing to change, 2 when there are changes, 1 on error',
    )
    .action(async (opts: CommonOpts & { dryRun?: boolean; out?: string; detailedExitcode?: boolean }) => {
      const root = rootOption(opts.root);
      requireDir(root);
      const { buildPlan } = await import('../planner/build.js');
      const { planToJson } = await import('../planner/json.js');
      const { formatPlan } = await import('../planner/format.js');
      const built = await buildPlan({ root, ...(opts.policy ? { policyPath: opts.policy } : {}), notice });
      const json = planToJson(built.plan);
      if (opts.json) printJson(json);
      else process.stdout.write(formatPlan(built.plan, built.policy.source));
      if (!opts.dryRun) {
        const out = opts.out ?? `${root.replace(/\/$/, '')}/var/lib/isolate/plan.json`;
        const { writeFileAtomic } = await import('../cgroup/journal.js');
        const saved = { ...json, policy: built.policy.source, root, createdAt: new Date().toISOString() };
        try {
          await writeFileAtomic(out, `${JSON.stringify(saved, null, 2)}\n`);
        } catch (err) {
          throw new UserError(
            `cannot save the plan to ${out} (${(err as Error).message}); use --out FILE or --dry-run`,
          );
        }
        if (!opts.json)
          process.stdout.write(`Plan saved to ${out}; apply it with: isolate apply --plan ${out}\n`);
      }
      if (opts.detailedExitcode) process.exitCode = json.changes.length > 0 ? 2 : 0;
    });
}

/** CPU model and memory from systeminformation, for the human view on a live host only. */
async function hostFacts(): Promise<string | undefined> {
  try {
    const si = await import('systeminformation');
    const [cpu, mem] = await Promise.all([si.cpu(), si.mem()]);
    return `${cpu.manufacturer} ${cpu.brand}, ${(mem.total / 1024 ** 3).toFixed(1)} GiB`;
  } catch {
    return undefined;
  }
}
