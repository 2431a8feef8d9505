// Policies and policy checks many tests share: the smallest whole policy (Kafka alone on one core in
// /kafka.slice, YARN's containers in /hadoop-yarn as the batch workload, one reserved core), and the
// one-line refusal of a bad one.
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
