import { beforeAll, describe, expect, it } from 'vitest';
import { ensureVmPrereqs, LAYOUTS, runInVm, type VmResult } from './harness/index.js';

// One boot serves every assertion: each boot costs 15-30 s of CPU on the 2-core CI machine.
describe('qemu harness smoke test (twoSocketSmt2)', () => {
  let r: VmResult;

  beforeAll(async () => {
    ensureVmPrereqs();
    r = await runInVm({
      layout: LAYOUTS.twoSocketSmt2,
      includeProject: true,
      script: `
echo =====BEGIN nodes=====
for d in /sys/devices/system/node/node[0-9]*; do echo "$d"; done
echo =====END nodes=====
echo =====BEGIN cpu1-core-cpus=====
cat /sys/devices/system/cpu/cpu1/topology/core_cpus_list
echo =====END cpu1-core-cpus=====
echo =====BEGIN controllers=====
cat /sys/fs/cgroup/cgroup.controllers
echo =====END controllers=====
echo =====BEGIN node=====
node -e 'console.log(JSON.stringify({ v: process.version, n: require("os").cpus().length }))'
echo =====END node=====
echo =====BEGIN project=====
ls -1 /opt/isolate/dist /opt/isolate/node_modules
echo =====END project=====
exit 7
`,
    });
  });

  it('boots and reports the scenario exit status', () => {
    expect(r.exitStatus, r.console).toBe(7);
    console.log(`guest boot + scenario: ${r.durationMs} ms`);
  });

  it('sees two NUMA nodes', () => {
    expect(r.sections.nodes?.trim().split('\n')).toEqual([
      '/sys/devices/system/node/node0',
      '/sys/devices/system/node/node1',
    ]);
  });

  it('has real SMT siblings', () => {
    expect(r.sections['cpu1-core-cpus']).toBe('0-1\n');
  });

  it('has cgroup v2 with the cpuset controller', () => {
    expect(r.sections.controllers?.trim().split(' ')).toContain('cpuset');
  });

  it('runs node with the project installed', () => {
    const info = JSON.parse(r.sections.node ?? '{}') as { v: string; n: number };
    expect(info.v).toBe(process.version);
    expect(info.n).toBe(8);
    expect(r.sections.project).toContain('cli.js');
    expect(r.sections.project).toContain('commander');
    expect(r.sections.project).not.toContain('vitest');
  });
});
