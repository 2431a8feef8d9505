// Policies and policy checks many tests share: the smallest whole policy (Kafka alone on one core in
// /kafka.slice, YARN's containers in /hadoop-yarn as the batch workload, one reserved core), and the
// one-line refusal of a bad one.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { UserError } from '../../src/model/errors.js';
import { parsePolicy } from '../../src/policy/load.js';

export const KAFKA_YARN_POLICY = `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
workloads:
  - { name: kafka, class: exclusive, cores: 1, match: { cgroup: /kafka.slice } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
`;

/** Kafka on two cores with its logs on /data2 (LVM over md over the r630-kafka disks' sdb1, sdc1), YARN as batch. */
export const KAFKA_DATA2_POLICY = `apiVersion: isolate/v1
kind: HostPolicy
workloads:
  - { name: kafka, class: exclusive, cores: 2, match: { cgroup: /kafka.slice }, disks: { paths: [/data2/kafka-logs] } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
`;

/** `text` as policy.yaml in a fresh temporary directory, for commands that take --policy. */
export function writePolicy(text: string, prefix = 'isolate-policy-'): string {
  const file = join(mkdtempSync(join(tmpdir(), prefix)), 'policy.yaml');
  writeFileSync(file, text);
  return file;
}

/** The one-line message a policy is refused with; fails the test when it is accepted or the error is not a UserError. */
export function policyRefusal(text: string): string {
  try {
    parsePolicy(text, 'p.yaml');
  } catch (err) {
    expect(err).toBeInstanceOf(UserError);
    const msg = (err as Error).message;
    expect(msg).not.toContain('\n');
    return msg;
  }
  throw new Error('expected the policy to be refused');
}
