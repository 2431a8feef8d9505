// Quiet cores through the built CLI on a fake host (a writable cgroup2 stand-in) with the IRQ
// overlay of the same machine: `plan` shows each IRQ/RPS/XPS/workqueue change with its reason, a
// saved plan carries them (its schema takes the irq backend), `apply --plan` makes them, `check`
// measures interrupts, `rollback` leaves every affinity and mask as it was.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolate } from '../cli/run.js';
import { quietCoresHost, quietCoresPolicy } from '../support/irq-host.js';

const env = { ISOLATE_LOG: 'off' };

function host(): { root: string; policy: string } {
  return { root: quietCoresHost(), policy: quietCoresPolicy('{ irqs: true, workqueues: true }') };
}

function masks(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of readdirSync(path.join(root, 'proc/irq')).filter((n) => /^\d+$/.test(n)))
    out[`irq ${n}`] = readFileSync(path.join(root, 'proc/irq', n, 'smp_affinity_list'), 'utf8').trim();
  const net = 'sys/devices/pci0000:04/0000:04:00.0/0000:05:04.0/virtio2/net/eth0/queues';
  for (const q of ['rx-0/rps_cpus', 'rx-1/rps_cpus', 'tx-0/xps_cpus', 'tx-1/xps_cpus'])
    out[q] = readFileSync(path.join(root, net, q), 'utf8').trim();
  out.wq = readFileSync(path.join(root, 'sys/devices/virtual/workqueue/cpumask'), 'utf8').trim();
  out.default = readFileSync(path.join(root, 'proc/irq/default_smp_affinity'), 'utf8').trim();
  return out;
}

describe('quiet cores through the CLI', () => {
  it('plan → apply --plan → check → rollback', () => {
    const { root, policy } = host();
    const before = masks(root);
    const planFile = path.join(path.dirname(policy), 'plan.json');
    let r = isolate(['plan', '--root', root, '--policy', policy, '--out', planFile, '--verbose'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      "/proc/irq/36 smp_affinity_list: 4-7 → 4-5  [IRQ 36 (virtio2-input.1): eth0 serves kafka (near: nic:eth0): its queues go to node 1's housekeeping CPUs 4-5]",
    );
    expect(r.stdout).toContain(
      '/sys/class/net/eth0/queues/tx-1 xps_cpus: f0 (CPUs 4-7) → 20 (CPU 5)  [XPS: eth0 serves kafka',
    );
    expect(r.stdout).toContain(
      '/sys/devices/virtual/workqueue cpumask: ff (CPUs 0-7) → 3f (CPUs 0-5)  [unbound kernel workqueues off the exclusive CPUs 6-7',
    );
    expect(r.stdout).toMatch(
      /IRQs 28 \(virtio0-req\.3\), 32 \(virtio1-request\), 42 \(nvme0q4\) are kernel-managed/,
    );
    const saved = JSON.parse(readFileSync(planFile, 'utf8'));
    expect(JSON.stringify(saved)).toContain('"irq"');

    r = isolate(['apply', '--plan', planFile, '--root', root, '--yes'], { env });
    expect(r.code, r.stderr).toBe(0);
    const applied = masks(root);
    expect(applied['irq 36']).toBe('4-5');
    expect(applied['irq 1']).toBe('0-5');
    expect(applied['irq 0']).toBe('0-7'); // x86's timer (IRQF_NOBALANCING): left
    expect(applied['irq 42']).toBe('6-7'); // managed: left
    expect(applied['tx-0/xps_cpus']).toBe('10');
    expect(applied.wq).toBe('3f');
    expect(applied.default).toBe('3f');

    // Nothing left to do: the next plan is empty for the irq backend.
    r = isolate(['plan', '--root', root, '--policy', policy, '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(r.stdout).changes)).not.toContain('"irq"');

    r = isolate(['check', '--root', root, '--policy', policy, '--json'], { env });
    const report = JSON.parse(r.stdout);
    expect(report.interrupts).toMatchObject({ cpus: '6-7', sources: [] });
    expect(report.interrupts.windowMs).toBeGreaterThanOrEqual(1000);

    r = isolate(['rollback', '--root', root], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(masks(root)).toEqual(before);
  });
});
