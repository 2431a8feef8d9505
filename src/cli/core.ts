// `isolate topology`, `policy validate`, `plan`: flags → one call → rendering.
import type { Command } from 'commander';
import { UserError } from '../model/errors.js';
import { writeErr, writeOut } from './output.js';
import {
  hostRoot,
  notice,
  printJson,
  printText,
  progressOnTerminal,
  requireDir,
  rootOption,
} from './options.js';

interface CommonOpts {
  json?: boolean;
  policy?: string;
}

function formatLayout(l: import('../cgroup/layout.js').CgroupMounts): string {
  const v1 = Object.entries(l.v1)
    .map(([c, h]) => (c === h ? c : `${c}→${h}`))
    .join(' ');
  const cpuset =
    l.cpuset === 'v1'
      ? `cpuset on the v1 hierarchy /sys/fs/cgroup/${l.v1.cpuset}`
      : l.cpuset === 'unified'
        ? 'cpuset on cgroup v2'
        : 'no usable cpuset controller';
  return `cgroup layout: ${l.layout} (${cpuset}${l.unified !== null ? `; cgroup2 at /sys/fs/cgroup${l.unified ? `/${l.unified}` : ''}` : ''}${v1 ? `; v1: ${v1}` : ''}; from ${l.source})`;
}

/** `topology`, `policy validate` and `plan`, in this order in the help. */
export function registerCore(program: Command): void {
  registerTopology(program);
  registerPolicy(program);
  registerPlan(program);
}

function registerTopology(program: Command): void {
  program
    .command('topology')
    .description('show packages, NUMA nodes, physical cores, CPUs, memory and devices per node')
    .option('--root <dir>', 'read sysfs under this directory instead of /')
    .option(
      '--policy <file>',
      "also show the disks under its workloads' data directories (default /etc/isolate/policy.yaml when it exists)",
    )
    .option('--json', 'machine-readable output')
    .action(async (opts: CommonOpts, cmd: Command) => {
      const root = hostRoot(cmd);
      const { readTopology } = await import('../topology/read.js');
      const { topologyToJson, formatTopology } = await import('../topology/format.js');
      const topology = readTopology(root);
      const { policyDisks } = await import('../ops/disks.js');
      const disks = policyDisks(root, opts.policy, notice);
      // The cgroup layout the other commands would judge, reported with the CPUs it would fence.
      const { detectCgroupLayout } = await import('../cgroup/layout.js');
      const cg = await detectCgroupLayout(root);
      const layout = cg.layout === 'none' ? undefined : cg;
      const { formatWorkloadDisks, workloadDisksToJson } = await import('../topology/disks-format.js');
      if (opts.json) {
        printJson({
          ...topologyToJson(topology),
          cgroupLayout: layout,
          ...(disks ? { workloadDisks: workloadDisksToJson(disks) } : {}),
        });
      } else {
        const text = formatTopology(topology, root === '/' ? await hostFacts() : undefined);
        const diskText = disks?.length ? `workload disks:\n${formatWorkloadDisks(disks).join('\n')}\n` : '';
        printText(`${text}${layout ? `${formatLayout(layout)}\n` : ''}${diskText}`);
      }
    });
}

function registerPolicy(program: Command): void {
  const policy = program.command('policy').description('work with policy files');
  policy
    .command('validate')
    .description(
      'check a policy file; prints "FILE: ok (N workloads)" when it is valid, one error line otherwise',
    )
    .argument('<file>', 'policy YAML file')
    .option(
      '--root <dir>',
      'also check it against the host under this directory: what plan refuses there, and every device, NIC and file the policy names',
    )
    .action(async (file: string, _opts: CommonOpts, cmd: Command) => {
      const given = cmd.optsWithGlobals<{ root?: string }>().root;
      const root = given === undefined ? undefined : rootOption(given);
      if (root) requireDir(root);
      const { validatePolicy } = await import('../ops/policy.js');
      const { policy: p, warnings, errors } = await validatePolicy(file, root);
      for (const w of warnings) writeErr(`${file}: warning: ${w}\n`);
      // Every error in one run, one line each; the last ends the command (exit 1).
      for (const e of errors.slice(0, -1)) writeErr(`isolate: ${e}\n`);
      if (errors.length > 0) throw new UserError(errors.at(-1)!);
      const n = p.workloads.length;
      writeOut(`${file}: ok (${n} workload${n === 1 ? '' : 's'})\n`);
    });
}

function registerPlan(program: Command): void {
  program
    .command('plan')
    .description('compute the allocation and the changes that apply would make')
    .option('--root <dir>', 'host root: sysfs, cgroupfs, /proc and /etc/isolate are read under it')
    .option(
      '--policy <file>',
      'policy file, or "default" for the bundled example (default /etc/isolate/policy.yaml; with --dry-run, the bundled example when that file is missing)',
    )
    .option('--dry-run', 'only print the plan; write nothing anywhere')
    .option(
      '--out <file>',
      'where to save the plan for `isolate apply --plan` (default <root>/var/lib/isolate/plan.json)',
    )
    .option('--json', 'machine-readable output')
    .option('--verbose', 'list every change on its own line (alike IRQ and queue changes are grouped)')
    .option(
      '--detailed-exitcode',
      'exit 0 when there is nothing to change, 2 when there are changes, 1 on error',
    )
    .option(
      '--timeout <seconds>',
      "hard timeout for one vendor-tool call while reading the RAID controllers; without it, the policy's raid.timeoutSeconds (60)",
    )
    .option(
      '--tool-path <tool=path>',
      'RAID tool path (repeatable; also ISOLATE_RAID_TOOL_PATH)',
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .action(
      async (
        opts: CommonOpts & {
          dryRun?: boolean;
          out?: string;
          detailedExitcode?: boolean;
          verbose?: boolean;
          timeout?: string;
          toolPath: string[];
        },
        cmd: Command,
      ) => {
        const root = hostRoot(cmd);
        if (opts.dryRun && opts.out !== undefined) {
          throw new UserError(
            `--out ${opts.out}: --dry-run writes nothing anywhere; drop --dry-run to save the plan, or drop --out`,
          );
        }
        const { plan } = await import('../ops/plan.js');
        const { raidCallOptions, toolPaths } = await import('../ops/raid.js');
        const { formatPlan } = await import('../planner/format.js');
        const raidRead =
          opts.timeout === undefined
            ? undefined
            : (await raidCallOptions(root, opts.timeout, [], undefined)).timeoutMs;
        const out = await plan({
          root,
          notice,
          progress: progressOnTerminal(),
          raidReadTimeoutMs: raidRead,
          allowBundledPolicy: !!opts.dryRun,
          warnUntrustedPolicy: !!opts.dryRun,
          policyPath: opts.policy,
          raidToolPaths: await toolPaths(opts.toolPath, process.env.ISOLATE_RAID_TOOL_PATH),
          jvms: true,
          disks: true,
          ...(opts.dryRun
            ? {}
            : opts.out !== undefined
              ? { saveTo: opts.out }
              : { saveTo: `${root.replace(/\/$/, '')}/var/lib/isolate/plan.json`, saveToStateDir: true }),
        });
        if (opts.json) printJson(out.json);
        else printText(formatPlan(out.built.plan, out.built.source.path, { verbose: !!opts.verbose }));
        if (out.savedTo && !opts.json) {
          // The hint is pasted as it is: it names the root the plan was made for, unless that is this host.
          const rooted = root === '/' ? '' : ` --root ${root}`;
          writeOut(
            `Plan saved to ${out.savedTo}; apply it with: isolate apply${rooted} --plan ${out.savedTo}\n`,
          );
        }
        if (opts.detailedExitcode) process.exitCode = out.built.plan.changes.length > 0 ? 2 : 0;
      },
    );
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
