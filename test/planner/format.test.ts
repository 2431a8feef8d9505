// The human view of a plan (planner/format.ts, format-changes.ts): what a person reads first, runs of
// alike changes, hex masks with their CPUs.
import { describe, expect, it } from 'vitest';
import { CpuSet } from '../../src/model/cpuset.js';
import type { Change, Plan } from '../../src/model/plan.js';
import { formatPlan } from '../../src/planner/format.js';

const SIBLINGS =
  "io kafka: io.latency holds back only /system.slice/kafka.service's siblings, and yarn (/hadoop-yarn) is none (they meet at /): its target does not throttle yarn, only the weights and caps do; run kafka in a top-level slice of its own (strict: true) next to /hadoop-yarn";

function planOf(changes: Change[], warnings: string[] = [], notes: string[] = []): Plan {
  return {
    allocation: { workloads: [], reserved: CpuSet.parse('0-1') },
    changes,
    warnings,
    notes,
  };
}

const irq = (n: number, from: string, to: string, why: string): Change => ({
  backend: 'irq',
  target: `/proc/irq/${n}`,
  setting: 'smp_affinity_list',
  from,
  to,
  note: `IRQ ${n} (eth0-TxRx-${n}): ${why}`,
});

describe('plan, as printed', () => {
  it('says before the change list that an io.latency target planned there throttles no batch workload', () => {
    const latency: Change = {
      backend: 'systemd',
      target: 'kafka.service',
      setting: 'IODeviceLatencyTargetSec',
      from: '',
      to: '/dev/block/259:0 10ms',
    };
    const text = formatPlan(planOf([latency], [SIBLINGS]), 'p.yaml');
    expect(text.indexOf(SIBLINGS)).toBeGreaterThan(0);
    expect(text.indexOf(SIBLINGS)).toBeLessThan(text.indexOf('IODeviceLatencyTargetSec'));
    expect(text.split('\n')[1]).toBe('Summary: 1 change (1 systemd); 1 warning');
  });

  it('groups a run of alike IRQ changes, lists a short one, and --verbose lists every change', () => {
    const changes = [
      ...[30, 31, 32, 33].map((n) => irq(n, String(n - 30), '0-1', 'eth0 serves kafka')),
      irq(40, '0-7', '0-5', 'off the exclusive CPUs 6-7'),
      irq(41, '0-7', '0-5', 'off the exclusive CPUs 6-7'),
    ];
    const text = formatPlan(planOf(changes), 'p.yaml');
    expect(text).toContain(
      '  1-4. 4 × /proc/irq/{30-33} smp_affinity_list: 0, … (4 different) → 0-1  [eth0 serves kafka]\n',
    );
    expect(text).toContain(
      '    5. /proc/irq/40 smp_affinity_list: 0-7 → 0-5  [IRQ 40 (eth0-TxRx-40): off the',
    );
    expect(text).toContain('    6. /proc/irq/41 ');
    expect(text).toContain(
      'Changes (6, in the order apply makes them; alike ones grouped, --verbose lists each):',
    );
    const verbose = formatPlan(planOf(changes), 'p.yaml', { verbose: true });
    expect(verbose.match(/^ +\d+\. \/proc\/irq\/\d+ /gm)).toHaveLength(6);
    expect(verbose).toContain('Changes (6, in the order apply makes them):');
  });

  it('never groups IRQs given different CPUs: the line would not say which gets which', () => {
    const why = 'off the exclusive CPUs 2-3';
    const changes = [
      ...[1, 4, 8].map((n) => irq(n, '0-7', '0-1,4-7', why)),
      ...[34, 35, 36].map((n) => irq(n, '0-3', '0-1', why)),
    ];
    const text = formatPlan(planOf(changes), 'p.yaml');
    expect(text).toContain(
      '  1-3. 3 × /proc/irq/{1,4,8} smp_affinity_list: 0-7 → 0-1,4-7  [off the exclusive CPUs 2-3]\n',
    );
    expect(text).toContain(
      '  4-6. 3 × /proc/irq/{34-36} smp_affinity_list: 0-3 → 0-1  [off the exclusive CPUs 2-3]\n',
    );
  });

  it('prints the CPUs a hex mask names next to it', () => {
    const mask: Change = {
      backend: 'irq',
      target: '/proc/irq',
      setting: 'default_smp_affinity',
      from: '3',
      to: '1',
    };
    const text = formatPlan(planOf([mask]), 'p.yaml');
    expect(text).toContain('/proc/irq default_smp_affinity: 3 (CPUs 0-1) → 1 (CPU 0)');
    expect(text).toContain('Summary: 1 change (1 IRQ default); no warnings');
  });
});
