// Kafka's disks end to end on a fixture host (a Dell R630's block devices, r630-kafka, under a cgroup2
// tree of plain files): plan → apply → an empty second plan → rollback to the exact bytes. A plain file
// cannot merge per-device lines the way the kernel's io files do, so the executor's single write goes
// through a stand-in that applies the kernel's rules for io.latency, io.weight/io.bfq.weight and io.max
// (block/blk-iolatency.c, blk-iocost.c, bfq-cgroup.c, blk-throttle.c in 6.1); every other file is a
// plain write. The real kernel's files are read back in the guest (test/vm, branch h-iovm).
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyChanges, rollbackLast } from '../../src/apply/engine.js';
import type { Change } from '../../src/model/plan.js';
import { buildPlan } from '../../src/ops/plan.js';
import { changeLines } from '../support/changes.js';
import { r630IoHost } from '../support/io-host.js';
import { KernelIo } from '../support/kernel-io.js';

function host(opts: { ioEnabled?: boolean; sdaLatency?: string } = {}): string {
  const root = r630IoHost('isolate-io-', opts);
  // Someone's earlier target on sda: rollback must give it back, not clear it.
  if (opts.sdaLatency)
    writeFileSync(join(root, 'sys/fs/cgroup/kafka.slice/io.latency'), `${opts.sdaLatency}\n`);
  return root;
}

function policy(root: string, kafkaIo = '', yarnIo = ''): string {
  const file = join(root, 'etc/isolate/policy.yaml');
  writeFileSync(
    file,
    `apiVersion: isolate/v1
kind: HostPolicy
workloads:
  - { name: kafka, class: exclusive, cores: 2, match: { cgroup: /kafka.slice }, disks: { kafkaConfig: /etc/kafka/server.properties }${kafkaIo} }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn }${yarnIo} }
`,
  );
  return file;
}

/**
 * Every file of the cgroup tree and its content, trimmed: the executor writes an empty value as "\n"
 * (the kernel strips it) and a plain file keeps the newline the kernel would not; the lines are exact.
 */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const e of readdirSync(dir)) {
      const p = join(dir, e);
      if (statSync(p).isDirectory()) walk(p);
      else out[p.slice(root.length)] = readFileSync(p, 'utf8').trim();
    }
  };
  walk(join(root, 'sys/fs/cgroup'));
  return out;
}

const io = (changes: Change[]) => changeLines(changes, 'io.');

describe("io settings on Kafka's disks through cgroupfs", () => {
  it('plans a latency target on every Kafka disk, weights only where BFQ acts, caps on the batch side', async () => {
    const root = host();
    const policyPath = policy(root, '', ', io: { max: { wbps: 80MiB/s, wiops: 300 } }');
    const { plan } = await buildPlan({ root, policyPath });
    expect(io(plan.changes)).toEqual([
      '/kafka.slice io.latency 259:0 target=max -> 259:0 target=2000',
      '/kafka.slice io.latency 8:0 target=max -> 8:0 target=25000',
      '/kafka.slice io.latency 8:16 target=max -> 8:16 target=25000',
      '/kafka.slice io.bfq.weight 8:16 default -> 8:16 1000',
      '/kafka.slice io.latency 8:32 target=max -> 8:32 target=25000',
      '/kafka.slice io.bfq.weight 8:32 default -> 8:32 1000',
      '/hadoop-yarn io.max 259:0 rbps=max wbps=max riops=max wiops=max -> 259:0 wbps=83886080 wiops=300',
      '/hadoop-yarn io.max 8:0 rbps=max wbps=max riops=max wiops=max -> 8:0 wbps=83886080 wiops=300',
      '/hadoop-yarn io.bfq.weight 8:16 default -> 8:16 25',
      '/hadoop-yarn io.max 8:16 rbps=max wbps=max riops=max wiops=max -> 8:16 wbps=83886080 wiops=300',
      '/hadoop-yarn io.bfq.weight 8:32 default -> 8:32 25',
      '/hadoop-yarn io.max 8:32 rbps=max wbps=max riops=max wiops=max -> 8:32 wbps=83886080 wiops=300',
    ]);
    // sda (mq-deadline, no iocost) and nvme0n1 (none) get no weight, and the plan says why.
    expect(plan.notes).toContainEqual(
      expect.stringMatching(/^io kafka: sda \(8:0\): io\.latency only .*io\.weight would do nothing/),
    );
    expect(plan.warnings.filter((w) => w.startsWith('io '))).toEqual([]);
  });

  it('apply writes and reads back each device, a second plan is empty, rollback restores every byte', async () => {
    const root = host({ sdaLatency: '8:0 target=50000' });
    const policyPath = policy(
      root,
      ', io: { latency: 10ms, weight: 800 }',
      ', io: { weight: 10, max: { rbps: 100M/s } }',
    );
    const before = snapshot(root);
    const exec = new KernelIo(root);
    const first = await buildPlan({ root, policyPath });
    expect(io(first.plan.changes)).toContain('/kafka.slice io.latency 8:0 target=50000 -> 8:0 target=10000');
    const r = await applyChanges({ root, changes: first.plan.changes, executors: { cgroupfs: exec } });
    expect(r.changed).toBe(first.plan.changes.length);
    const cg = join(root, 'sys/fs/cgroup');
    expect(readFileSync(join(cg, 'kafka.slice/io.latency'), 'utf8')).toBe(
      '259:0 target=10000\n8:0 target=10000\n8:16 target=10000\n8:32 target=10000\n',
    );
    expect(readFileSync(join(cg, 'kafka.slice/io.bfq.weight'), 'utf8')).toBe(
      'default 100\n8:16 800\n8:32 800\n',
    );
    expect(readFileSync(join(cg, 'hadoop-yarn/io.bfq.weight'), 'utf8')).toBe(
      'default 100\n8:16 10\n8:32 10\n',
    );
    expect(readFileSync(join(cg, 'hadoop-yarn/io.max'), 'utf8')).toContain(
      '8:16 rbps=104857600 wbps=max riops=max wiops=max\n',
    );
    const second = await buildPlan({ root, policyPath });
    expect(second.plan.changes).toEqual([]);
    await rollbackLast({ root, executors: { cgroupfs: exec } });
    expect(snapshot(root)).toEqual(before);
  });

  it('drift: a target someone removed is planned again, and only that one', async () => {
    const root = host();
    const policyPath = policy(root);
    const exec = new KernelIo(root);
    await applyChanges({
      root,
      changes: (await buildPlan({ root, policyPath })).plan.changes,
      executors: { cgroupfs: exec },
    });
    await exec.write(
      join(root, 'sys/fs/cgroup/kafka.slice/io.latency'),
      '8:16 target=max',
      {} as Change,
      'test',
    );
    const again = await buildPlan({ root, policyPath });
    expect(io(again.plan.changes)).toEqual(['/kafka.slice io.latency 8:16 target=max -> 8:16 target=25000']);
  });

  it('enables io in the parent first when it is not, and names no weight or target without the controller', async () => {
    const root = host({ ioEnabled: false });
    const { plan } = await buildPlan({ root, policyPath: policy(root) });
    const first = plan.changes.findIndex((c) => c.setting.startsWith('io.'));
    const enable = plan.changes.findIndex((c) => c.target === '/' && c.setting === 'cgroup.subtree_control');
    expect(plan.changes[enable]?.to).toBe('cpu cpuset io memory');
    expect(enable).toBeLessThan(first);

    const none = host();
    writeFileSync(join(none, 'sys/fs/cgroup/cgroup.controllers'), 'cpuset cpu memory pids\n');
    const p = (await buildPlan({ root: none, policyPath: policy(none) })).plan;
    expect(io(p.changes)).toEqual([]);
    expect(p.notes).toContainEqual(expect.stringMatching(/^io kafka: the io controller is not in/));
  });
});
