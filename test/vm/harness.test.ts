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

// PID 1 powers the guest off right after the scenario's last line. Output still in the guest's UART
// buffer then is lost, and the exit marker with it: a CI run lost the end of a guest's console that way
// (the agent guest, "guest did not finish") while its vitest fork read qemu's output late. Here the host
// stops reading for 8 s once the scenario starts; the scenario prints until its serial port stops
// sending (the host's socket is full: the tx count in /proc/tty/driver/serial stands still), then one
// line more, which waits in the guest's UART buffer (4 KiB) while the guest, not blocked, powers off.
describe('the console is whole when the host reads it late', () => {
  let r: VmResult;

  beforeAll(async () => {
    ensureVmPrereqs();
    r = await runInVm({
      layout: LAYOUTS.twoSocketSmt2,
      script: `
tx() { sed -n 's/^0:.* tx:\\([0-9]*\\).*/\\1/p' /proc/tty/driver/serial; }
echo STALL-HERE
sleep 1
x=$(printf '%0999d' 0 | tr 0 x)
# A line is 1,001 bytes on the wire (onlcr adds a carriage return). Stop when some of them stay unsent.
t0=$(tx)
n=0
while [ $n -lt 5000 ]; do
  echo "$x"; n=$((n + 1))
  sleep 0.05
  [ "$(tx)" -lt $((t0 + n * 1001)) ] && break
done
echo "$x"; n=$((n + 1))
echo "PRINTED $n"
exit 3
`,
      stallConsole: { after: 'STALL-HERE', ms: 8_000 },
    });
  });

  it('keeps every line printed before poweroff, and the exit status', () => {
    expect(r.exitStatus, r.console.slice(-1500)).toBe(3);
    const printed = Number(/PRINTED (\d+)/.exec(r.console)?.[1]);
    expect(r.console.split('\n').filter((l) => /^x{999}$/.test(l)).length).toBe(printed);
  });
});
