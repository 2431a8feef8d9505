// Interrupts on the exclusive CPUs over a window, from two reads of /proc/interrupts and
// /proc/softirqs: per source, device IRQs and NET_RX only, and `isolate check` judging them.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatCheck } from '../../src/audit/format.js';
import { deliveredOn, readInterruptCounts } from '../../src/irq/delivered.js';
import { CpuSet } from '../../src/model/cpuset.js';
import { check } from '../../src/ops/check.js';
import { irqHost } from '../support/irq-host.js';

/** Add `n` to the count of row `id` on `cpu` (a column of the header), keeping the kernel's layout. */
function bump(root: string, file: 'interrupts' | 'softirqs', id: string, cpu: number, n: number): void {
  const p = path.join(root, 'proc', file);
  const lines = readFileSync(p, 'utf8').split('\n');
  const col = lines[0]!.trim().split(/\s+/).indexOf(`CPU${cpu}`);
  const i = lines.findIndex((l) => l.trimStart().startsWith(`${id}:`));
  const m = /^(\s*\S+:)(.*)$/.exec(lines[i]!)!;
  let k = -1;
  lines[i] =
    m[1] + m[2]!.replace(/ +\d+/g, (s) => (++k === col ? (Number(s) + n).toString().padStart(s.length) : s));
  writeFileSync(p, lines.join('\n'));
}

describe('deliveredOn', () => {
  it('counts each device IRQ and NET_RX on the given CPUs only; per-CPU IPIs are not device interrupts', () => {
    const root = irqHost();
    const before = readInterruptCounts(root)!;
    bump(root, 'interrupts', '36', 7, 120); // eth0 input.1 on cpu7
    bump(root, 'interrupts', '42', 6, 5); // nvme0q4, managed, on cpu6
    bump(root, 'interrupts', '0', 0, 50); // the timer on cpu0: not an exclusive CPU
    bump(root, 'interrupts', 'LOC', 6, 1000); // local timer: per-CPU, never a device's
    bump(root, 'interrupts', 'RES', 7, 10);
    bump(root, 'softirqs', 'NET_RX', 7, 300);
    bump(root, 'softirqs', 'TIMER', 7, 300);
    const after = readInterruptCounts(root)!;
    const r = deliveredOn(before, after, CpuSet.parse('6-7'));
    expect(r.cpus).toBe('6-7');
    expect(r.unknown).toEqual([]);
    expect(r.sources).toEqual([
      { kind: 'softirq', id: 'NET_RX', name: 'NET_RX', perCpu: { 7: 300 }, total: 300 },
      { kind: 'irq', id: '36', name: 'virtio2-input.1', perCpu: { 7: 120 }, total: 120 },
      { kind: 'irq', id: '42', name: 'nvme0q4', perCpu: { 6: 5 }, total: 5 },
    ]);
  });

  it('a counter that wrapped counts what it delivered; an IRQ reused by another driver is not counted', () => {
    const root = irqHost();
    const p = path.join(root, 'proc/interrupts');
    writeFileSync(
      p,
      readFileSync(p, 'utf8').replace(/^(\s*43:(?: +\d+){7}) +640/m, (_s, head) => `${head} 4294967290`),
    );
    const before = readInterruptCounts(root)!;
    writeFileSync(
      p,
      readFileSync(p, 'utf8')
        .replace(/4294967290/, '         4')
        .replace('eth1-tx-0', 'mlx5_comp0'),
    );
    const r = deliveredOn(before, readInterruptCounts(root)!, CpuSet.parse('6-7'));
    expect(r.sources).toEqual([{ kind: 'irq', id: '43', name: 'eth1-rx-0', perCpu: { 7: 10 }, total: 10 }]);
    expect(r.unknown).toEqual([
      'IRQ 44: its handlers changed during the window (a driver reloaded); not counted',
    ]);
  });

  it('no counter files under the root: nothing to measure', () => {
    expect(readInterruptCounts(path.join(irqHost(), 'sys'))).toBeNull();
  });
});

describe('isolate check: interrupts on the exclusive CPUs', () => {
  const policy = (root: string, kafka: string) => {
    const file = path.join(root, 'policy.yaml');
    writeFileSync(
      file,
      `apiVersion: isolate/v1
kind: HostPolicy
quiet: { irqs: true }
workloads:
  - { name: kafka, class: exclusive, cores: 1, near: [nic:eth0], ${kafka}match: { cgroup: /kafka } }
  - { name: yarn, class: batch, match: { cgroup: /hadoop-yarn } }
`,
      { mode: 0o600 },
    );
    return file;
  };

  it('warns per device source, reports managed IRQs and NET_RX as info, and says the window', async () => {
    const root = irqHost();
    const since = readInterruptCounts(root)!;
    bump(root, 'interrupts', '36', 7, 120);
    bump(root, 'interrupts', '9', 6, 3);
    bump(root, 'interrupts', '42', 6, 5);
    bump(root, 'softirqs', 'NET_RX', 7, 300);
    const report = await check({
      root,
      policyPath: policy(root, ''),
      observeRaid: false,
      interrupts: { since },
    });
    expect(report.exclusiveCpus).toBe('6-7');
    expect(report.interrupts!.sources.map((s) => `${s.id} ${s.total}`)).toEqual([
      'NET_RX 300',
      '36 120',
      '42 5',
      '9 3',
    ]);
    const warn = report.findings.filter(
      (f) => f.severity === 'warning' && f.message.startsWith('device interrupts'),
    );
    expect(warn.length).toBe(1);
    expect(warn[0]!.message).toMatch(
      /^device interrupts on the exclusive CPUs 6-7 in \d+\.\d s: IRQ 36 \(virtio2-input\.1\): 120 on CPU 7; IRQ 9 \(acpi\): 3 on CPU 6;/,
    );
    const info = report.findings.filter((f) => f.severity === 'info').map((f) => f.message);
    expect(info.find((m) => m.includes('IRQ 42 (nvme0q4): 5 on CPU 6 (kernel-managed'))).toBeDefined();
    expect(
      info.find(
        (m) => m.startsWith('receive processing on the exclusive CPUs') && m.includes('NET_RX: 300 on CPU 7'),
      ),
    ).toBeDefined();
    expect(report.status).not.toBe('OK');
    expect(formatCheck(report)).toContain('interrupts on exclusive CPUs 6-7 in ');
    expect(formatCheck(report)).toMatch(
      /s: NET_RX 300, IRQ 36 \(virtio2-input\.1\) 120, IRQ 42 \(nvme0q4\) 5, IRQ 9 \(acpi\) 3\n/,
    );
  });

  it("irqs.on: own — the workload's NIC on its own cores is by design (info), not a warning", async () => {
    const root = irqHost();
    const since = readInterruptCounts(root)!;
    bump(root, 'interrupts', '36', 7, 120);
    const report = await check({
      root,
      policyPath: policy(root, 'irqs: { on: own }, '),
      observeRaid: false,
      interrupts: { since },
    });
    expect(report.findings.some((f) => f.message.startsWith('device interrupts'))).toBe(false);
    expect(
      report.findings.find((f) => f.message.includes('IRQ 36 (virtio2-input.1): 120 on CPU 7')),
    ).toMatchObject({
      severity: 'info',
    });
  });

  it('measures over its own window by default, and hands the closing read on', async () => {
    const root = irqHost();
    let closing: unknown = null;
    const report = await check({
      root,
      policyPath: policy(root, ''),
      observeRaid: false,
      interrupts: { windowMs: 300, read: (c) => (closing = c) },
    });
    expect(report.interrupts!.windowMs).toBeGreaterThanOrEqual(300);
    expect(report.interrupts!.sources).toEqual([]);
    expect(report.findings.some((f) => f.message.startsWith('device interrupts'))).toBe(false);
    expect(closing).toMatchObject({ problems: [] });
  });
});
