// The host the agent's memo tests plan on (plan-memo, systemd-memo): Kafka in its slice, Flink in
// /hadoop-yarn, the policy written where the agent reads it; not applied yet.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fakeCgroupHost } from '../support/cgroup-tree.js';

export const POLICY = (flinkMemory = '') => `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
workloads:
  - { name: kafka, class: exclusive, cores: 1, match: { cgroup: /kafka.slice } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn }${flinkMemory} }
`;

export function convergedHost(): { root: string; cg: string; policyPath: string } {
  const { root, cg } = fakeCgroupHost(['kafka.slice', 'hadoop-yarn']);
  mkdirSync(join(root, 'etc/isolate'), { recursive: true });
  const policyPath = join(root, 'etc/isolate/policy.yaml');
  writeFileSync(policyPath, POLICY());
  return { root, cg, policyPath };
}
