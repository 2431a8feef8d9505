// Kafka's disks on a cgroup v1 host (legacy layout, blkio mounted; the r630-kafka block devices):
// blkio offers BFQ weights and throttles per device, nothing else. An explicit latency target is
// refused naming the field and the fix, `latency: auto` is said; apply writes each device's line in
// blkio:/hadoop-yarn and rollback writes the cleared line back.
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyChanges, rollbackLast } from '../../src/apply/engine.js';
import { CgroupV1Executor } from '../../src/cgroupv1/executor.js';
import { UserError } from '../../src/model/errors.js';
import type { Change } from '../../src/model/plan.js';
import { buildPlan } from '../../src/ops/plan.js';
import { changeLines } from '../support/changes.js';
import { makeFakeV1Host, mountinfoFor } from '../support/fake-v1-host.js';

const DISKS = join(import.meta.dirname, '../fixtures/disks/r630-kafka');

function host(): string {
  const root = makeFakeV1Host('qemu-2s-smt2', {
    layout: 'legacy',
    cpus: '0-7',
    mems: '0-1',
    cpuGroups: ['hadoop-yarn'],
    memoryGroups: ['hadoop-yarn'],
  });
  const disksMounts = readFileSync(join(DISKS, 'proc/self/mountinfo'), 'utf8');
  cpSync(DISKS, root, { recursive: true, verbatimSymlinks: true });
  writeFileSync(
    join(root, 'proc/self/mountinfo'),
    `${disksMounts
      .split('\n')
      .filter((l) => !l.includes(' /sys '))
      .join(
        '\n',
      )}${mountinfoFor('legacy')}33 25 0:32 / /sys/fs/cgroup/blkio rw,nosuid,nodev,noexec,relatime shared:17 - cgroup cgroup rw,blkio\n`,
  );
  const blkio = join(root, 'sys/fs/cgroup/blkio');
  for (const dir of [blkio, join(blkio, 'hadoop-yarn')]) {
    mkdirSync(dir, { recursive: true });
    for (const f of ['cgroup.procs', 'tasks', 'blkio.bfq.weight_device', 'blkio.throttle.write_bps_device'])
      writeFileSync(join(dir, f), '');
  }
  return root;
}

const policy = (root: string, kafkaIo: string) => {
  const f = join(root, 'policy.yaml');
  writeFileSync(
    f,
    `apiVersion: isolate/v1
kind: HostPolicy
workloads:
  - { name: kafka, class: exclusive, cores: 1, match: { process: { cmdline: 'kafka\\.Kafka' } }, disks: { kafkaConfig: /etc/kafka/server.properties }${kafkaIo} }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn }, io: { weight: 20, max: { wbps: 10M/s } } }
`,
  );
  return f;
};

const blkio = (changes: Change[]) => changeLines(changes, 'blkio.');

describe('io on cgroup v1: blkio weights and throttles only', () => {
  it('refuses an explicit latency target, naming the field and the fix', async () => {
    const root = host();
    const err = await buildPlan({ root, policyPath: policy(root, ', io: { latency: 10ms }') }).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(UserError);
    expect(err.message).toMatch(
      /workloads\[0\]\.io\.latency: io\.latency does not exist in cgroup v1 \(blkio has BFQ weights and throttles only\) on this legacy cgroup v1 layout; what v1 offers is a weight on BFQ disks and the batch workloads' caps .*; remove workloads\[0\]\.io\.latency from the policy, or boot a kernel of 5\.0 or later/,
    );
  });

  it('plans BFQ weights on BFQ disks and caps on every Kafka disk; apply and rollback each device line', async () => {
    const root = host();
    const policyPath = policy(root, '');
    const { plan } = await buildPlan({ root, policyPath });
    expect(plan.warnings).toContainEqual(
      expect.stringMatching(/^io kafka: no latency target on this cgroup v1 host/),
    );
    expect(blkio(plan.changes)).toEqual([
      '/hadoop-yarn blkio.bfq.weight_device 8:16 default -> 8:16 20',
      '/hadoop-yarn blkio.bfq.weight_device 8:32 default -> 8:32 20',
      '/hadoop-yarn blkio.throttle.write_bps_device 259:0 0 -> 259:0 10485760',
      '/hadoop-yarn blkio.throttle.write_bps_device 8:0 0 -> 8:0 10485760',
      '/hadoop-yarn blkio.throttle.write_bps_device 8:16 0 -> 8:16 10485760',
      '/hadoop-yarn blkio.throttle.write_bps_device 8:32 0 -> 8:32 10485760',
    ]);
    const exec = new CgroupV1Executor(root);
    const one = plan.changes.filter((c) => c.setting === 'blkio.throttle.write_bps_device').slice(0, 1);
    await applyChanges({ root, changes: one, executors: { cgroupfs: exec } });
    const file = join(root, 'sys/fs/cgroup/blkio/hadoop-yarn/blkio.throttle.write_bps_device');
    expect(readFileSync(file, 'utf8')).toBe('259:0 10485760');
    await rollbackLast({ root, executors: { cgroupfs: exec } });
    expect(readFileSync(file, 'utf8')).toBe('259:0 0');
  });
});
