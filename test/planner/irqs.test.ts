// Quiet cores planned from a real machine's shapes (test/fixtures/irq over qemu-2s-smt2: node 0 =
// CPUs 0-3, node 1 = 4-7, SMT siblings adjacent; reserved 1 core per package = 0-1 and 4-5): the
// NIC Kafka is near goes to its node's housekeeping CPUs (or its own cores), every other movable
// IRQ leaves the exclusive CPUs, managed IRQs are reported, RPS/XPS and the workqueue mask follow.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { observeIrqs } from '../../src/irq/observe.js';
import type { Change } from '../../src/model/plan.js';
import { planHost } from '../../src/planner/plan.js';
import { parsePolicy } from '../../src/policy/load.js';
import { readTopology } from '../../src/topology/read.js';
import { irqHost } from '../support/irq-host.js';
import { freshHost } from '../support/observed.js';

function policy(kafka: string, top = 'strict: true\nquiet: { irqs: true, workqueues: true }') {
  return parsePolicy(
    `apiVersion: isolate/v1
kind: HostPolicy
${top}
workloads:
  - name: kafka
    class: exclusive
    cores: 1
${kafka}
    match: { cgroup: /kafka }
  - name: yarn
    class: batch
    match: { cgroup: /hadoop-yarn }
`,
    'test.yaml',
  );
}

function planOn(root: string, kafka = '    near: [nic:eth0]', top?: string) {
  const observed = freshHost();
  observed.irqs = observeIrqs(root);
  return planHost(readTopology(root), policy(kafka, top), observed);
}

const irqOnly = (cs: Change[]) => cs.filter((c) => c.backend === 'irq');
const brief = (c: Change) => `${c.target} ${c.setting}: ${c.from} → ${c.to}`;

describe('quiet cores plan', () => {
  it("moves Kafka's NIC to its node's housekeeping CPUs, every other IRQ off Kafka's CPUs, and says why", () => {
    const p = planOn(irqHost());
    const kafka = p.allocation.workloads[0]!;
    expect(kafka.cpus.toString()).toBe('6-7');
    expect(p.allocation.reserved.toString()).toBe('0-1,4-5');
    const changes = irqOnly(p.changes);
    expect(changes.map(brief)).toEqual([
      '/proc/irq/1 smp_affinity_list: 0-7 → 0-5',
      '/proc/irq/4 smp_affinity_list: 0-7 → 0-5',
      '/proc/irq/8 smp_affinity_list: 0-7 → 0-5',
      '/proc/irq/9 smp_affinity_list: 0-7 → 0-5',
      '/proc/irq/12 smp_affinity_list: 0-7 → 0-5',
      '/proc/irq/24 smp_affinity_list: 0-7 → 0-5',
      '/proc/irq/29 smp_affinity_list: 0-7 → 0-5',
      '/proc/irq/30 smp_affinity_list: 0-7 → 0-5',
      '/proc/irq/31 smp_affinity_list: 0-7 → 0-5',
      // eth0 (node 1) → node 1's housekeeping CPUs.
      '/proc/irq/33 smp_affinity_list: 0-7 → 4-5',
      '/proc/irq/34 smp_affinity_list: 0-3 → 4-5',
      '/proc/irq/35 smp_affinity_list: 0-3 → 4-5',
      '/proc/irq/36 smp_affinity_list: 4-7 → 4-5',
      '/proc/irq/37 smp_affinity_list: 4-7 → 4-5',
      '/proc/irq/38 smp_affinity_list: 0-7 → 0-5',
      '/proc/irq/43 smp_affinity_list: 0-7 → 0-5',
      '/proc/irq/44 smp_affinity_list: 0-7 → 0-5',
      '/proc/irq/45 smp_affinity_list: 0-7 → 0-5',
      // RPS follows; XPS deals node 1's housekeeping CPUs out over the two tx queues.
      '/sys/class/net/eth0/queues/rx-0 rps_cpus: 00 → 30',
      '/sys/class/net/eth0/queues/rx-1 rps_cpus: 00 → 30',
      '/sys/class/net/eth0/queues/tx-0 xps_cpus: 0f → 10',
      '/sys/class/net/eth0/queues/tx-1 xps_cpus: f0 → 20',
      // Another NIC's RPS mask leaves the exclusive CPUs; lo's empty mask needs nothing.
      '/sys/class/net/eth1/queues/rx-0 rps_cpus: f0 → 30',
      // IRQs requested later (a driver reload) start off Kafka's CPUs.
      '/proc/irq default_smp_affinity: ff → 3f',
      '/sys/devices/virtual/workqueue cpumask: ff → 3f',
    ]);
    const eth0 = changes.find((c) => c.target === '/proc/irq/36')!;
    expect(eth0.workload).toBe('kafka');
    expect(eth0.note).toBe(
      "IRQ 36 (virtio2-input.1): eth0 serves kafka (near: nic:eth0): its queues go to node 1's housekeeping CPUs 4-5",
    );
    expect(changes.find((c) => c.target === '/proc/irq/9')!.note).toBe(
      'IRQ 9 (acpi): off the exclusive CPUs 6-7',
    );
    // Managed IRQs on Kafka's CPUs: reported with the one boot parameter that moves them, never planned.
    const managed = p.warnings.find((w) => w.includes('kernel-managed'))!;
    expect(managed).toContain(
      'IRQs 28 (virtio0-req.3), 32 (virtio1-request), 42 (nvme0q4) are kernel-managed',
    );
    expect(managed).toContain('isolcpus=managed_irq,6-7');
    expect(changes.some((c) => ['/proc/irq/28', '/proc/irq/42', '/proc/irq/25'].includes(c.target))).toBe(
      false,
    );
    expect(changes.find((c) => c.setting === 'default_smp_affinity')!.note).toBe(
      "IRQs requested from now on (a driver reload, hot-plug) start off the exclusive CPUs 6-7, until the agent's next round places them",
    );
    // IRQ 10 has no handler: left, and said.
    expect(p.notes).toContain('1 IRQ without a handler (no /proc/interrupts row) left as they are');
  });

  it("irqs.on: own spreads the NIC over the workload's own CPUs, one per IRQ, and RPS/XPS with it", () => {
    const p = planOn(irqHost(), '    near: [nic:eth0]\n    irqs: { on: own }');
    const changes = irqOnly(p.changes).filter((c) => c.workload === 'kafka');
    expect(changes.map(brief)).toEqual([
      '/proc/irq/33 smp_affinity_list: 0-7 → 6',
      '/proc/irq/34 smp_affinity_list: 0-3 → 7',
      '/proc/irq/35 smp_affinity_list: 0-3 → 6',
      '/proc/irq/36 smp_affinity_list: 4-7 → 7',
      '/proc/irq/37 smp_affinity_list: 4-7 → 6',
      '/sys/class/net/eth0/queues/rx-0 rps_cpus: 00 → c0',
      '/sys/class/net/eth0/queues/rx-1 rps_cpus: 00 → c0',
      '/sys/class/net/eth0/queues/tx-0 xps_cpus: 0f → 40',
      '/sys/class/net/eth0/queues/tx-1 xps_cpus: f0 → 80',
    ]);
    expect(changes[0]!.note).toContain(
      "eth0 serves kafka (near: nic:eth0); irqs.on: own spreads its queues over kafka's own CPUs 6-7",
    );
    // irqs.nics names the NIC without placing the workload near it: kafka lands on node 0 here.
    const named = irqOnly(planOn(irqHost(), '    irqs: { nics: [eth0], on: own }').changes);
    expect(named.find((c) => c.target === '/proc/irq/36')).toMatchObject({ to: '3', workload: 'kafka' });
  });

  it('a NIC on node -1 still goes to the node of the workload it serves, and the plan says its node is unknown', () => {
    const p = planOn(irqHost(), '    near: [nic:eth1]');
    // eth1 has no node: kafka is placed by most free cores (node 0 here), and eth1 follows it.
    const kafka = p.allocation.workloads[0]!;
    const c = irqOnly(p.changes).find((x) => x.target === '/proc/irq/43')!;
    const hk = kafka.nodes[0] === 0 ? '0-1' : '4-5';
    expect(c.to).toBe(hk);
    expect(c.note).toContain("(eth1's own node is unknown: numa_node -1)");
    // eth0 now serves nobody: its IRQs only leave Kafka's CPUs.
    const eth0 = irqOnly(p.changes).find((x) => x.target === '/proc/irq/36');
    expect(eth0?.workload).toBeUndefined();
  });

  it("an IRQ whose mask holds only exclusive or offline CPUs goes to its node's housekeeping CPUs", () => {
    const root = irqHost();
    writeFileSync(path.join(root, 'proc/irq/44/smp_affinity_list'), '6-7\n');
    writeFileSync(path.join(root, 'proc/irq/38/smp_affinity_list'), '7\n');
    writeFileSync(path.join(root, 'proc/irq/38/node'), '1\n');
    const p = planOn(root);
    const byTarget = new Map(irqOnly(p.changes).map((c) => [c.target, c]));
    // node -1 (eth1): every CPU outside the exclusive ones.
    expect(byTarget.get('/proc/irq/44')!.to).toBe('0-5');
    expect(byTarget.get('/proc/irq/38')!.to).toBe('4-5');
    expect(byTarget.get('/proc/irq/38')!.note).toContain(
      "node 1's housekeeping CPUs 4-5 (its mask held no other online CPU)",
    );
  });

  it('an offline CPU is never the only CPU left in a mask (the kernel refuses a mask with no online CPU)', () => {
    const root = irqHost();
    const cpu = path.join(root, 'sys/devices/system/cpu');
    writeFileSync(path.join(cpu, 'online'), '0-4,6-7\n');
    writeFileSync(path.join(cpu, 'offline'), '5\n');
    writeFileSync(path.join(cpu, 'cpu5/online'), '0\n');
    rmSync(path.join(cpu, 'cpu5/topology'), { recursive: true });
    // As the kernel shows cpu4 with its sibling gone.
    for (const f of ['core_cpus_list', 'thread_siblings_list'])
      writeFileSync(path.join(cpu, 'cpu4/topology', f), '4\n');
    for (const f of ['core_cpus', 'thread_siblings'])
      writeFileSync(path.join(cpu, 'cpu4/topology', f), '10\n');
    // IRQ 38 may go to 5 (offline) and 7 (Kafka's): nothing online would be left of it.
    writeFileSync(path.join(root, 'proc/irq/38/smp_affinity_list'), '5,7\n');
    const p = planOn(root);
    expect(p.allocation.workloads[0]!.cpus.toString()).toBe('6-7');
    const byTarget = new Map(irqOnly(p.changes).map((c) => [c.target, c]));
    expect(byTarget.get('/proc/irq/38')!.to).toBe('4');
    // Offline CPUs stay in a mask that keeps an online one: they count once they come back.
    expect(byTarget.get('/proc/irq/1')!.to).toBe('0-5');
  });

  it('quiet is on by default: IRQs and steering always, workqueues with strict: true (opt-in otherwise); quiet.irqs: false leaves every IRQ', () => {
    const strict = irqOnly(planOn(irqHost(), '    near: [nic:eth0]', 'strict: true').changes);
    expect(strict.some((c) => c.target === '/proc/irq/36')).toBe(true);
    expect(strict.filter((c) => c.setting === 'cpumask').map(brief)).toEqual([
      '/sys/devices/virtual/workqueue cpumask: ff → 3f',
    ]);
    // The whole default plan is the one quiet: { irqs: true, workqueues: true } spells out.
    expect(strict).toEqual(irqOnly(planOn(irqHost()).changes));
    const loose = irqOnly(planOn(irqHost(), '    near: [nic:eth0]', 'strict: false').changes);
    expect(loose.some((c) => c.setting === 'cpumask')).toBe(false);
    expect(loose.length).toBeGreaterThan(0);
    const optIn = irqOnly(planOn(irqHost(), '    near: [nic:eth0]', 'quiet: { workqueues: true }').changes);
    expect(optIn.filter((c) => c.setting === 'cpumask').map(brief)).toEqual([
      '/sys/devices/virtual/workqueue cpumask: ff → 3f',
    ]);
    const strictNoWq = irqOnly(
      planOn(irqHost(), '    near: [nic:eth0]', 'strict: true\nquiet: { workqueues: false }').changes,
    );
    expect(strictNoWq.some((c) => c.setting === 'cpumask')).toBe(false);
    const off = irqOnly(
      planOn(irqHost(), '    near: [nic:eth0]', 'strict: true\nquiet: { irqs: false, workqueues: true }')
        .changes,
    );
    expect(off.map((c) => c.setting)).toEqual(['cpumask']);
  });

  it('after the changes are made, a new plan has nothing left to do (idempotent)', () => {
    const root = irqHost();
    for (const c of irqOnly(planOn(root).changes)) {
      writeFileSync(path.join(root, c.target.slice(1), c.setting), `${c.to}\n`);
    }
    expect(irqOnly(planOn(root).changes)).toEqual([]);
  });

  it('unknown values are never planned over, and are said', () => {
    const root = irqHost();
    writeFileSync(path.join(root, 'proc/irq/36/smp_affinity_list'), 'x\n');
    rmSync(
      path.join(
        root,
        'sys/devices/pci0000:04/0000:04:00.0/0000:05:04.0/virtio2/net/eth0/queues/rx-1/rps_cpus',
      ),
    );
    writeFileSync(
      path.join(root, 'sys/devices/pci0000:00/0000:00:05.0/net/eth1/queues/rx-0/rps_cpus'),
      'f0,zz\n',
    );
    const p = planOn(root);
    const targets = irqOnly(p.changes).map((c) => c.target);
    expect(targets).not.toContain('/proc/irq/36');
    expect(targets).not.toContain('/sys/class/net/eth0/queues/rx-1');
    expect(targets).not.toContain('/sys/class/net/eth1/queues/rx-0');
    expect(p.warnings).toContain('IRQs 36 (virtio2-input.1): affinity unknown (unreadable); not moved');
    expect(p.warnings.find((w) => w.startsWith('irq: 2 items could not be read'))).toContain(
      'eth1/queues/rx-0/rps_cpus: "f0,zz" is not a CPU mask',
    );
  });

  it('a running irqbalance is named with the setting that stops it undoing the plan; a stale socket is not', () => {
    const root = irqHost();
    mkdirSync(path.join(root, 'run/irqbalance'), { recursive: true });
    writeFileSync(path.join(root, 'run/irqbalance/irqbalance812.sock'), '');
    expect(planOn(root).warnings.some((w) => w.includes('irqbalance'))).toBe(false);
    mkdirSync(path.join(root, 'proc/812'), { recursive: true });
    writeFileSync(path.join(root, 'proc/812/comm'), 'irqbalance\n');
    const w = planOn(root).warnings.find((x) => x.startsWith('irqbalance'));
    expect(w).toMatch(/^irqbalance \(pid 812\) is running: .*IRQBALANCE_BANNED_CPULIST=6-7/);
  });

  it('warns when a NIC steers many more IRQs to the housekeeping CPUs than there are CPUs, naming both ways out', () => {
    const root = irqHost();
    const crowdWarning = (w: string) => w.includes('IRQs, RPS and XPS all go to');
    // The fixture's eth0: a few queues on node 1's 2 housekeeping CPUs, nothing to warn about.
    expect(planOn(root).warnings.filter(crowdWarning)).toEqual([]);
    // A 48-queue NIC's vectors (its IRQ rows repeated under new numbers) on the same 2 CPUs.
    const observed = freshHost();
    const irqs = observeIrqs(root);
    if (!irqs) throw new Error(`${root}: no /proc/irq in the fixture`);
    observed.irqs = irqs;
    const eth0 = irqs.irqs.filter((i) => i.nic === 'eth0' && !i.managed);
    expect(eth0.length).toBeGreaterThan(0);
    for (let n = 0; irqs.irqs.filter((i) => i.nic === 'eth0').length < 49; n++)
      irqs.irqs.push({ ...eth0[n % eth0.length]!, irq: 1000 + n });
    const p = planHost(readTopology(root), policy('    near: [nic:eth0]'), observed);
    expect(p.warnings.filter(crowdWarning)).toEqual([
      "kafka: NIC eth0: its 49 IRQs, RPS and XPS all go to 2 CPUs 4-5 (node 1's housekeeping CPUs 4-5): under load those CPUs serve every queue; give node 1 more housekeeping CPUs (reserved: { cores: N, per: node }) or spread the queues over kafka's own CPUs (irqs: { on: own })",
    ]);
  });

  it('a NIC the policy names but the host lacks is a warning, not an error', () => {
    const p = planOn(irqHost(), '    irqs: { nics: [eth9] }');
    expect(p.warnings).toContain(
      'kafka: NIC eth9 is not on this host (/sys/class/net); its interrupts are not placed',
    );
  });
});
