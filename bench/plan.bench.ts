// In-process planning cost on a large host: 1,024 CPUs, 16 NUMA nodes, SMT2 (target ≤ 10 ms).
// Run: npm run bench
import { bench, describe } from 'vitest';
import { parsePolicy } from '../src/policy/load.js';
import { planHost } from '../src/planner/plan.js';
import { readTopology } from '../src/topology/read.js';
import { afterChanges, freshHost } from '../test/support/observed.js';
import { synthTopology } from '../test/support/synthetic.js';
import { writeSysfs } from '../test/support/sysfs.js';

const topology = synthTopology({
  packages: 2,
  nodesPerPackage: 8,
  coresPerNode: 32,
  threads: [2],
  siblings: 'split',
  l3PerNode: 4,
});
if (topology.online.size !== 1024 || topology.nodes.length !== 16)
  throw new Error('bench topology is not 1024 CPUs / 16 nodes');

const policy = parsePolicy(
  `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
strict: true
workloads:
  - { name: kafka-a, class: exclusive, cores: 24, near: [nic:eth0], match: { cgroup: /kafka-a.slice }, memory: { low: 32G } }
  - { name: kafka-b, class: exclusive, cores: "50%", match: { cgroup: /kafka-b.slice }, memory: { low: 32G } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn }, memory: { high: 256G, max: 300G }, cpu: { idle: true } }
`,
  'bench.yaml',
);
const fresh = freshHost(['init.scope', 'system.slice', 'user.slice', 'machine.slice']);
const converged = afterChanges(fresh, planHost(topology, policy, fresh).changes);
const tree = writeSysfs(topology);

describe('planner, 1,024 CPUs / 16 nodes / SMT2', () => {
  bench('plan a fresh host', () => {
    planHost(topology, policy, fresh);
  });
  bench('re-plan a converged host (no changes)', () => {
    planHost(topology, policy, converged);
  });
  bench('read the sysfs tree (1,024 CPUs)', () => {
    readTopology(tree);
  });
});
