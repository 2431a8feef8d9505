// The agent's plan memory (ops/plan.ts PlanMemo): a round that observes exactly what the last
// converged round observed reuses its plan; any difference in what was read plans anew.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apply } from '../../src/ops/apply.js';
import { buildPlan, PlanMemo } from '../../src/ops/plan.js';
import { convergedHost, POLICY } from './memo-host.js';

describe('PlanMemo', () => {
  it('reuses the converged plan while the host reads the same, and plans anew after one value changed', async () => {
    const { root, cg, policyPath } = convergedHost();
    expect((await apply({ root, policyPath })).changed).toBeGreaterThan(0);
    const memo = new PlanMemo();
    const first = await buildPlan({ root, policyPath, planMemo: memo });
    expect(first.plan.changes).toEqual([]);
    // The agent plans with the topology its rounds keep (read again only when it may have changed).
    const topology = first.topology;
    const second = await buildPlan({ root, policyPath, planMemo: memo, topology });
    expect(memo.stats).toEqual({ planned: 1, reused: 1 });
    expect(second.plan).toBe(first.plan);
    // Shared between rounds, so nothing downstream may change it.
    expect(Object.isFrozen(second.plan.allocation.workloads[0])).toBe(true);

    // Someone else widens the batch jobs' CPUs: observed anew, planned anew, corrected.
    writeFileSync(join(cg, 'hadoop-yarn/cpuset.cpus'), '0-7\n');
    const drifted = await buildPlan({ root, policyPath, planMemo: memo, topology });
    expect(memo.stats).toEqual({ planned: 2, reused: 1 });
    expect(drifted.plan.changes.map((c) => `${c.target} ${c.setting} ${c.from}`)).toEqual([
      '/hadoop-yarn cpuset.cpus 0-7',
    ]);
    // A plan with changes is not kept: the next round plans against what applying it left.
    await buildPlan({ root, policyPath, planMemo: memo, topology });
    expect(memo.stats).toEqual({ planned: 3, reused: 1 });
  });

  it('plans anew for another policy or another topology, even when the host reads the same', async () => {
    const { root, policyPath } = convergedHost();
    await apply({ root, policyPath });
    const memo = new PlanMemo();
    const { topology } = await buildPlan({ root, policyPath, planMemo: memo });
    writeFileSync(policyPath, POLICY(', memory: { high: 1G }'));
    const b = await buildPlan({ root, policyPath, planMemo: memo, topology });
    expect(memo.stats).toEqual({ planned: 2, reused: 0 });
    expect(b.plan.changes.map((c) => `${c.target} ${c.setting} ${c.to}`)).toEqual([
      '/hadoop-yarn memory.high 1073741824',
    ]);
    writeFileSync(policyPath, POLICY());
    await buildPlan({ root, policyPath, planMemo: memo, topology });
    await buildPlan({ root, policyPath, planMemo: memo, topology });
    expect(memo.stats).toEqual({ planned: 3, reused: 1 });
    // A topology read again (another object, as after a CPU went offline) plans anew.
    await buildPlan({ root, policyPath, planMemo: memo, topology: { ...topology } });
    expect(memo.stats).toEqual({ planned: 4, reused: 1 });
  });
});
