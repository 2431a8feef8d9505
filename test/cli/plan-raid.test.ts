// RAID cache changes in `isolate plan`: a simulated storcli host (replaying a real capture of an IBM
// M5015 with a healthy iBBU08) whose drive is in write-through; the policy asks for write-back.
import { cpSync, mkdirSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HAVE_FIXTURES } from '../raid/fixtures.js';
import { IBBU08_DETAIL, M5015_BBU, makeHost, type SimHost } from '../raid/host.js';
import { isolate } from './run.js';

let host: SimHost | null = null;
afterEach(() => {
  host?.cleanup();
  host = null;
});

/** A simulated storcli host with qemu-nosmt's CPUs, and a policy that asks for write-back. */
function raidHost(storcli: Record<string, unknown>): { host: SimHost; policy: string } {
  const sim = makeHost({ drivers: ['megaraid_sas'], tools: { storcli } });
  cpSync(
    join(import.meta.dirname, '../fixtures/sysfs/qemu-nosmt/sys/devices'),
    join(sim.root, 'sys/devices'),
    {
      recursive: true,
    },
  );
  const policy = join(mkdtempSync(join(tmpdir(), 'isolate-raidplan-')), 'policy.yaml');
  writeFileSync(
    policy,
    `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
workloads:
  - { name: kafka, class: exclusive, cores: 1, match: { cgroup: /kafka.slice } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
raid: { writeCache: write-back }
`,
  );
  return { host: sim, policy };
}

describe.skipIf(!HAVE_FIXTURES)('isolate plan with a raid: section', () => {
  it('lists the safe write-back change and runs only read commands', () => {
    const made = raidHost({
      controllers: [{ showAll: M5015_BBU, bbu: IBBU08_DETAIL, cache: { 0: 'RWTD' } }],
    });
    host = made.host;
    const policy = made.policy;
    const env = { RAID_SIM_DIR: host.dir, ISOLATE_RAID_LOCK: join(host.dir, 'isolate-raid.lock') };
    const r = isolate(['plan', '--dry-run', '--json', '--root', host.root, '--policy', policy], { env });
    expect(r.code, r.stderr).toBe(0);
    const plan = JSON.parse(r.stdout);
    expect(plan.changes.filter((c: { backend: string }) => c.backend === 'raid')).toEqual([
      expect.objectContaining({
        target: 'storcli:/c0/v0',
        setting: 'writeCache',
        from: 'write-through',
        to: 'write-back',
      }),
    ]);
    // A dry run reads the controller and sets nothing.
    const commands = host.log();
    expect(commands.length).toBeGreaterThan(0);
    expect(commands.filter((c) => / set /.test(c))).toEqual([]);
  });

  it('--tool-path and ISOLATE_RAID_TOOL_PATH reach plan as they reach raid show (issue 8)', () => {
    host = makeHost({
      drivers: ['megaraid_sas'],
      tools: { storcli: { controllers: [{ showAll: M5015_BBU, bbu: IBBU08_DETAIL, cache: { 0: 'RWTD' } }] } },
    });
    cpSync(
      join(import.meta.dirname, '../fixtures/sysfs/qemu-nosmt/sys/devices'),
      join(host.root, 'sys/devices'),
      {
        recursive: true,
      },
    );
    // The tool is not at its vendor's path: only an explicit path finds it.
    const elsewhere = join(host.dir, 'elsewhere');
    mkdirSync(elsewhere);
    const tool = join(elsewhere, 'storcli64');
    renameSync(join(host.root, 'opt/MegaRAID/storcli/storcli64'), tool);
    const policy = join(mkdtempSync(join(tmpdir(), 'isolate-raidplan-')), 'policy.yaml');
    writeFileSync(
      policy,
      `apiVersion: isolate/v1
kind: HostPolicy
workloads:
  - { name: kafka, class: exclusive, cores: 1, match: { cgroup: /kafka.slice } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
raid: { writeCache: write-back }
`,
    );
    const env = { RAID_SIM_DIR: host.dir, ISOLATE_RAID_LOCK: join(host.dir, 'isolate-raid.lock') };
    const raidChanges = (args: string[], extraEnv: Record<string, string> = {}) => {
      const r = isolate(['plan', '--dry-run', '--json', '--root', host!.root, '--policy', policy, ...args], {
        env: { ...env, ...extraEnv },
      });
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout).changes.filter((c: { backend: string }) => c.backend === 'raid');
    };
    expect(raidChanges([])).toEqual([]);
    const viaFlag = raidChanges(['--tool-path', `storcli=${tool}`]);
    expect(viaFlag).toEqual([expect.objectContaining({ target: 'storcli:/c0/v0', to: 'write-back' })]);
    expect(raidChanges([], { ISOLATE_RAID_TOOL_PATH: `storcli=${tool}` })).toEqual(viaFlag);
  });

  it('plan --timeout bounds each vendor-tool read, and a terminal is told what the plan waits for', async () => {
    // storcli hangs on `show`.
    const made = raidHost({ hang: 'show', controllers: [{ showAll: M5015_BBU }] });
    host = made.host;
    const policy = made.policy;
    const env = { RAID_SIM_DIR: host.dir, ISOLATE_RAID_LOCK: join(host.dir, 'isolate-raid.lock') };
    // The policy's timeout (60 s) would hold the plan for a minute; --timeout 1 gives up after one.
    const r = isolate(['plan', '--dry-run', '--root', host.root, '--policy', policy, '--timeout', '1'], {
      env,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/storcli64 \/call show all J nolog timed out after 1s/);
    const bad = isolate(['plan', '--dry-run', '--root', host.root, '--policy', policy, '--timeout', '0'], {
      env,
    });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('isolate: --timeout 0: expected seconds from 1 to 3600\n');
    // What a terminal is told before the tools run (the CLI passes `progress` only to a terminal).
    const said: string[] = [];
    const { buildPlan } = await import('../../src/ops/plan.js');
    await buildPlan({
      root: host.root,
      policyPath: policy,
      raidReadTimeoutMs: 1000,
      progress: (m) => said.push(m),
    });
    expect(said).toEqual([
      'reading the RAID controllers with their vendor tools (each call up to 1 s; plan --timeout sets it)',
    ]);
  });
});
