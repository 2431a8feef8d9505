// The agent's IRQ observation across rounds over the quiet-cores fixture host, changed between rounds
// as a real host changes: a managed IRQ moved by someone (seen by the cheap re-read), a driver reload
// that gives eth0 new IRQ numbers, a NIC re-registered (new ifindex), new handlers on an IRQ, and age
// (each forces a full scan). Then the agent itself: a driver reload between rounds is placed at once.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type RoundResult, runAgent } from '../../src/agent/agent.js';
import { IRQ_RESCAN_MS, IrqMemo } from '../../src/irq/memo.js';
import { TEST_AGENT_TIMING } from '../support/agent.js';
import { irqHost, quietCoresHost, quietCoresPolicy } from '../support/irq-host.js';

const ETH0_PCI = 'sys/devices/pci0000:04/0000:04:00.0/0000:05:04.0';
const irqFile = (root: string, n: number, f = 'smp_affinity_list') =>
  path.join(root, 'proc/irq', String(n), f);

/** eth0's driver reloaded: its five vectors 33-37 come back as `to`..`to+4`, affinity the default. */
function reloadEth0(root: string, to: number): void {
  for (let k = 0; k < 5; k++) {
    const from = 33 + k;
    rmSync(path.join(root, 'proc/irq', String(from)), { recursive: true });
    const dir = path.join(root, 'proc/irq', String(to + k));
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'smp_affinity_list'), '0-7\n');
    writeFileSync(path.join(dir, 'effective_affinity_list'), '\n');
    writeFileSync(path.join(dir, 'node'), '1\n');
    renameSync(
      path.join(root, ETH0_PCI, 'msi_irqs', String(from)),
      path.join(root, ETH0_PCI, 'msi_irqs', String(to + k)),
    );
  }
  const file = path.join(root, 'proc/interrupts');
  const text = readFileSync(file, 'utf8').replace(/^ {2}3([3-7]):/gm, (_m, d) => ` ${to + Number(d) - 3}:`);
  writeFileSync(file, text);
}

describe('IRQ observation across agent rounds', () => {
  it('re-reads only the managed IRQs while nothing appears or disappears', () => {
    const root = irqHost();
    const memo = new IrqMemo();
    const first = memo.observe(root)!;
    expect(memo.takeRescan()).toBe('first round');
    expect(first.irqs.find((i) => i.irq === 36)!.actions).toEqual(['virtio2-input.1']);
    // Someone moves a managed IRQ, and one with no handler; /proc/interrupts becomes unreadable.
    writeFileSync(irqFile(root, 36), '6-7\n');
    writeFileSync(irqFile(root, 10), '6\n');
    rmSync(path.join(root, 'proc/interrupts'));
    const second = memo.observe(root)!;
    expect(memo.takeRescan()).toBeNull();
    expect(memo.stats).toEqual({ rescans: 1, rechecks: 1 });
    expect(second.irqs.find((i) => i.irq === 36)!.affinity!.toString()).toBe('6-7');
    // Not managed (no handler): not read again; the names come from the last full scan.
    expect(second.irqs.find((i) => i.irq === 10)!.affinity!.toString()).not.toBe('6');
    expect(second.irqs.find((i) => i.irq === 36)!.actions).toEqual(['virtio2-input.1']);
    expect(second.unknown).toEqual([]);
    // A round's changes to what it got (ops/plan.ts marks refused IRQs) do not reach the memo.
    second.irqs.find((i) => i.irq === 36)!.managed = 'refused';
    expect(memo.observe(root)!.irqs.find((i) => i.irq === 36)!.managed).toBeNull();
  });

  it('a driver reload (new IRQ numbers) forces a full scan that finds the NIC on its new IRQs', () => {
    const root = irqHost();
    const memo = new IrqMemo();
    memo.observe(root);
    memo.takeRescan();
    reloadEth0(root, 50);
    const o = memo.observe(root)!;
    expect(memo.takeRescan()).toBe('IRQs 50, 51, 52, 53, 54 appeared; IRQs 33, 34, 35, 36, 37 disappeared');
    expect(o.irqs.filter((i) => i.nic === 'eth0').map((i) => i.irq)).toEqual([50, 51, 52, 53, 54]);
    expect(o.irqs.find((i) => i.irq === 53)!.actions).toEqual(['virtio2-input.1']);
  });

  it('a NIC re-registered (its ifindex), new handlers on a managed IRQ, or age force a full scan', () => {
    const root = irqHost();
    let now = 1_000;
    const memo = new IrqMemo(() => now);
    writeFileSync(path.join(root, 'sys/class/net/eth1/ifindex'), '3\n');
    memo.observe(root);
    memo.takeRescan();
    writeFileSync(path.join(root, 'sys/class/net/eth1/ifindex'), '7\n');
    memo.observe(root);
    expect(memo.takeRescan()).toBe('NICs changed (eth1)');
    // The kernel makes a directory per handler under /proc/irq/N.
    mkdirSync(path.join(root, 'proc/irq/36/virtio2-input.1'));
    memo.observe(root);
    expect(memo.takeRescan()).toBe("IRQ 36's handlers changed");
    memo.observe(root);
    expect(memo.takeRescan()).toBeNull();
    now += IRQ_RESCAN_MS;
    memo.observe(root);
    expect(memo.takeRescan()).toBe('age');
    expect(memo.stats).toEqual({ rescans: 4, rechecks: 1 });
  });
});

describe('the agent keeps quiet cores across a driver reload', () => {
  it('places the NIC on its new IRQ numbers in the round after the reload, and logs the rescan', async () => {
    const root = quietCoresHost();
    const policyPath = quietCoresPolicy('{ irqs: true }');
    const logs: { msg: string; fields?: Record<string, unknown> }[] = [];
    const stop = new AbortController();
    const cap = setTimeout(() => stop.abort('cap'), 60_000);
    const rounds: RoundResult[] = [];
    await runAgent({
      root,
      policyPath,
      ...TEST_AGENT_TIMING,
      stop: stop.signal,
      log: (_l, msg, fields) => logs.push({ msg, ...(fields ? { fields } : {}) }),
      afterRound: (r) => {
        rounds.push(r);
        if (rounds.length === 2) {
          // Converged: eth0 on node 1's housekeeping CPUs. Then its driver reloads.
          expect(readFileSync(irqFile(root, 36), 'utf8').trim()).toBe('4-5');
          reloadEth0(root, 50);
        }
        if (rounds.length === 3) stop.abort('test');
      },
    });
    clearTimeout(cap);
    expect(rounds.map((r) => r.ok)).toEqual([true, true, true]);
    expect(rounds[1]!.changed).toBe(0);
    for (let n = 50; n <= 54; n++) expect(readFileSync(irqFile(root, n), 'utf8').trim()).toBe('4-5');
    expect(logs.find((l) => l.msg === 'IRQs or NICs changed; rescanned')?.fields).toEqual({
      reason: 'IRQs 50, 51, 52, 53, 54 appeared; IRQs 33, 34, 35, 36, 37 disappeared',
    });
  });
});
