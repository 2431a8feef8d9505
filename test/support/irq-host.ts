// A --root with a real machine's sysfs tree and the IRQ overlay of the same name laid over it
// (test/fixtures/irq/README.md), in a fresh temporary directory the test may change.
import { cpSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { makeFakeHost, overlayFixture } from './fake-host.js';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures');

export function irqHost(name = 'qemu-2s-smt2'): string {
  const root = mkdtempSync(path.join(tmpdir(), 'isolate-irq-'));
  cpSync(path.join(FIXTURES, 'sysfs', name), root, { recursive: true, verbatimSymlinks: true });
  return overlayFixture(root, `irq/${name}`);
}

/**
 * The quiet-cores host for commands that write: qemu-2s-smt2's cgroup2 stand-in (kafka.slice,
 * hadoop-yarn) with its IRQ overlay, each IRQ never started.
 */
export function quietCoresHost(): string {
  const root = overlayFixture(
    makeFakeHost('qemu-2s-smt2', ['init.scope', 'system.slice', 'user.slice', 'kafka.slice', 'hadoop-yarn']),
    'irq/qemu-2s-smt2',
  );
  // Never started: no effective affinity to lag behind the write (a real kernel updates it at once).
  for (const n of readdirSync(path.join(root, 'proc/irq')).filter((n) => /^\d+$/.test(n)))
    writeFileSync(path.join(root, 'proc/irq', n, 'effective_affinity_list'), '\n');
  return root;
}

/** A strict policy file for quietCoresHost: Kafka on one core near eth0, YARN batch; `quiet` as given. */
export function quietCoresPolicy(quiet: string): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'isolate-irq-policy-')), 'policy.yaml');
  writeFileSync(
    file,
    `apiVersion: isolate/v1
kind: HostPolicy
strict: true
quiet: ${quiet}
workloads:
  - { name: kafka, class: exclusive, cores: 1, near: [nic:eth0], match: { cgroup: /kafka.slice } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
`,
  );
  return file;
}

/**
 * The 96-CPU, two-node host of issue 63 (test/fixtures/sysfs/intel-2s-96cpu with its IRQ overlay:
 * a 48-queue ice NIC ens3f0 and an NVMe on node 1) with a cgroup2 stand-in for commands that write.
 */
export function largeHost(): string {
  return overlayFixture(
    makeFakeHost('intel-2s-96cpu', [
      'init.scope',
      'system.slice',
      'user.slice',
      'kafka.slice',
      'hadoop-yarn',
    ]),
    'irq/intel-2s-96cpu',
  );
}

/** Kafka on 16 cores near its NIC, YARN batch: the policy the plan of docs/commands.md's large host shows. */
export const LARGE_HOST_POLICY = `apiVersion: isolate/v1
kind: HostPolicy
workloads:
  - { name: kafka, class: exclusive, cores: 16, near: [nic:ens3f0], match: { cgroup: /kafka.slice } }
  - { name: yarn, class: batch, match: { cgroup: /hadoop-yarn } }
`;
