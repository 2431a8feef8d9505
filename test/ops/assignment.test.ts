// isolate's own decision is the truth: the cores it assigned an exclusive workload are kept (a
// checkpoint with a checksum, ops/assignment.ts), and a hand-made write into the workload's own
// cpuset is drift to revert, not a choice to adopt. The assignment changes only when the policy or
// the topology does, and the plan says why.
import { chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assignmentPath } from '../../src/ops/assignment.js';
import { apply, rollback } from '../../src/ops/apply.js';
import { buildPlan } from '../../src/ops/plan.js';
import { fakeCgroupHost } from '../support/cgroup-tree.js';

const POLICY = (flink = '') => `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
workloads:
  - { name: kafka, class: exclusive, cores: 1, match: { cgroup: /kafka.slice } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn }${flink} }
`;

function converged() {
  const { root, cg } = fakeCgroupHost(['kafka.slice', 'hadoop-yarn']);
  mkdirSync(join(root, 'etc/isolate'), { recursive: true });
  const policyPath = join(root, 'etc/isolate/policy.yaml');
  writeFileSync(policyPath, POLICY());
  return { root, cg, policyPath };
}
const read = (f: string) => readFileSync(f, 'utf8').trim();

describe("the agent plans from the cores it assigned, not from the workload's live cpuset", () => {
  it('a hand-made write into Kafka’s own cpuset.cpus is reverted; its memory node stays', async () => {
    const { root, cg, policyPath } = converged();
    const first = await apply({ root, policyPath });
    expect(first.changed).toBeGreaterThan(0);
    const kafka = first.allocation!.workloads.find((w) => w.name === 'kafka')!;
    const cpus = kafka.cpus.toString();
    const mems = read(join(cg, 'kafka.slice/cpuset.mems'));
    expect(existsSync(assignmentPath(root))).toBe(true);
    // Someone moves Kafka to the other node's core by hand.
    const other = kafka.nodes[0] === 0 ? '6-7' : '2-3';
    writeFileSync(join(cg, 'kafka.slice/cpuset.cpus'), `${other}\n`);
    const { plan } = await buildPlan({ root, policyPath });
    const now = plan.allocation.workloads.find((w) => w.name === 'kafka')!;
    expect(now.cpus.toString()).toBe(cpus);
    expect(now.reason).toMatch(/the cores isolate assigned it are still valid/);
    expect(plan.changes).toContainEqual(
      expect.objectContaining({ target: '/kafka.slice', setting: 'cpuset.cpus', from: other, to: cpus }),
    );
    expect(plan.changes.some((c) => c.setting === 'cpuset.mems')).toBe(false);
    await apply({ root, policyPath });
    expect(read(join(cg, 'kafka.slice/cpuset.cpus'))).toBe(cpus);
    expect(read(join(cg, 'kafka.slice/cpuset.mems'))).toBe(mems);
  });

  it('a new policy chooses again and says so; a file that fails its checksum is not believed', async () => {
    const { root, policyPath } = converged();
    await apply({ root, policyPath });
    writeFileSync(policyPath, POLICY(', memory: { high: 1G }'));
    const changed = await buildPlan({ root, policyPath });
    expect(changed.plan.notes).toContain(
      'the policy changed since isolate last assigned cores: they are chosen again',
    );
    writeFileSync(policyPath, POLICY());
    const file = assignmentPath(root);
    writeFileSync(file, readFileSync(file, 'utf8').replace(/"kafka": "[^"]+"/, '"kafka": "0-7"'));
    const forged = await buildPlan({ root, policyPath });
    expect(forged.plan.warnings.join('\n')).toMatch(
      /assignment\.json is not believed \(its checksum does not match its content\)/,
    );
  });

  it.skipIf(process.getuid?.() !== 0)(
    'a checkpoint another user could have written is not believed: the cores are chosen afresh, with the reason',
    async () => {
      const { root, policyPath } = converged();
      await apply({ root, policyPath });
      const file = assignmentPath(root);
      chownSync(file, 1234, 1234);
      const { plan } = await buildPlan({ root, policyPath });
      expect(plan.warnings.join('\n')).toContain(
        `${file} cannot be read (refused, ${file} is owned by uid 1234, not root (owner uid 1234, mode`,
      );
    },
  );

  it('rollback forgets the assignment with the rest', async () => {
    const { root, policyPath } = converged();
    await apply({ root, policyPath });
    expect(existsSync(assignmentPath(root))).toBe(true);
    await rollback({ root });
    expect(existsSync(assignmentPath(root))).toBe(false);
  });
});
