// The agent's memory of systemd's answer (ops/systemd-memo.ts): reused while the cgroup tree reads the
// same, for the same units, for at most SYSTEMD_MAX_AGE_MS and until a drop-in changes; never the
// source of a change.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ObservedSystemd } from '../../src/model/observed.js';
import { apply } from '../../src/ops/apply.js';
import { buildPlan } from '../../src/ops/plan.js';
import { SYSTEMD_MAX_AGE_MS, SystemdMemo } from '../../src/ops/systemd-memo.js';
import { convergedHost, POLICY } from './memo-host.js';

/** A memo on a clock the test moves, and an `ask` that counts and answers anew each time. */
function memoOnClock() {
  let now = 1_000;
  const memo = new SystemdMemo(SYSTEMD_MAX_AGE_MS, () => now);
  let asks = 0;
  const ask = async (): Promise<ObservedSystemd> => {
    asks++;
    return { version: 252, units: { 'kafka.service': { Id: 'kafka.service', AllowedCPUs: `${asks}` } } };
  };
  return {
    memo,
    ask,
    asks: () => asks,
    at: (ms: number) => {
      now = 1_000 + ms;
    },
  };
}

describe('SystemdMemo', () => {
  it('reuses an answer that planned no change while the key is the same, for at most SYSTEMD_MAX_AGE_MS from asking', async () => {
    const m = memoOnClock();
    const first = await m.memo.answer('k', m.ask);
    expect(m.memo.reused).toBe(false);
    m.memo.planned(0);
    m.at(30_000);
    const again = await m.memo.answer('k', m.ask);
    expect(again).toBe(first);
    expect(m.memo.reused).toBe(true);
    // Shared between rounds, so nothing downstream may change it.
    expect(Object.isFrozen(again?.units['kafka.service'])).toBe(true);
    m.memo.planned(0);
    // Its age counts from when systemd was asked, not from the last reuse.
    m.at(SYSTEMD_MAX_AGE_MS - 1);
    expect(await m.memo.answer('k', m.ask)).toBe(first);
    m.memo.planned(0);
    m.at(SYSTEMD_MAX_AGE_MS);
    const old = await m.memo.answer('k', m.ask);
    expect(old).not.toBe(first);
    expect(m.asks()).toBe(2);
    expect(m.memo.stats).toEqual({ asked: 2, reused: 2 });
  });

  it('asks again for another key, and after a plan with changes', async () => {
    const m = memoOnClock();
    await m.memo.answer('k', m.ask);
    m.memo.planned(0);
    await m.memo.answer('other', m.ask);
    expect(m.memo.reused).toBe(false);
    expect(m.asks()).toBe(2);
    // The cgroup tree went back to what it read before: the first answer was dropped all the same.
    m.memo.planned(0);
    await m.memo.answer('k', m.ask);
    expect(m.asks()).toBe(3);
    // A plan with changes: the next round asks, though nothing else changed.
    m.memo.planned(2);
    await m.memo.answer('k', m.ask);
    expect(m.asks()).toBe(4);
    // A reused answer whose plan has changes is forgotten as well.
    m.memo.planned(0);
    await m.memo.answer('k', m.ask);
    expect(m.memo.reused).toBe(true);
    m.memo.planned(1);
    await m.memo.answer('k', m.ask);
    expect(m.memo.reused).toBe(false);
    expect(m.asks()).toBe(5);
  });

  it('asks again after forget(), and does not keep an answer that was in flight when it came', async () => {
    const m = memoOnClock();
    await m.memo.answer('k', m.ask);
    m.memo.planned(0);
    expect(await m.memo.answer('k', m.ask)).toBeDefined();
    expect(m.memo.reused).toBe(true);
    m.memo.planned(0);
    // A set-property drop-in changed (agent/dropins.ts): the same key, but systemd is asked.
    m.memo.forget();
    await m.memo.answer('k', m.ask);
    expect(m.memo.reused).toBe(false);
    expect(m.asks()).toBe(2);
    m.memo.planned(0);
    // The change lands while systemctl runs: that answer serves its round, and the next one asks.
    const answered = await m.memo.answer('other', async () => {
      m.memo.forget();
      return m.ask();
    });
    expect(answered?.units['kafka.service']?.AllowedCPUs).toBe('3');
    m.memo.planned(0);
    await m.memo.answer('other', m.ask);
    expect(m.memo.reused).toBe(false);
    expect(m.asks()).toBe(4);
    // And systemdRuns says whether systemd answered at all (the agent watches the drop-ins then).
    expect(m.memo.systemdRuns).toBe(true);
    await m.memo.answer('none', async () => undefined);
    expect(m.memo.systemdRuns).toBe(false);
    // isolate_systemd_queries_total counts what systemd answered: no systemd, no query.
    expect(m.memo.answeredBySystemd).toBe(4);
  });
});

describe('buildPlan with the agent memory of systemd', () => {
  it('asks again when the cgroup tree reads differently, not when only memory.current moved', async () => {
    const { root, cg, policyPath } = convergedHost();
    await apply({ root, policyPath });
    const systemdMemo = new SystemdMemo();
    const cache = { systemd: systemdMemo };
    const { topology } = await buildPlan({ root, policyPath, cache });
    expect(systemdMemo.stats).toEqual({ asked: 1, reused: 0 });
    // A running workload's memory use moves every round; systemd is not asked again.
    writeFileSync(join(cg, 'hadoop-yarn/memory.current'), '123456789\n');
    await buildPlan({ root, policyPath, cache, topology });
    expect(systemdMemo.stats).toEqual({ asked: 1, reused: 1 });
    // A hand-made write into the tree: systemd is asked again with the new observation.
    writeFileSync(join(cg, 'hadoop-yarn/cpuset.cpus'), '0-7\n');
    const drifted = await buildPlan({ root, policyPath, cache, topology });
    expect(drifted.plan.changes.length).toBeGreaterThan(0);
    expect(systemdMemo.stats).toEqual({ asked: 2, reused: 1 });
  });

  it('never plans a change from a remembered answer: it observes again and asks', async () => {
    const { root, policyPath } = convergedHost();
    await apply({ root, policyPath });
    const systemdMemo = new SystemdMemo();
    const { topology } = await buildPlan({ root, policyPath, cache: { systemd: systemdMemo } });
    // A new policy with the same units and the same tree: the remembered answer fits the key, but
    // the plan has changes, so the plan returned is the one made after asking again.
    writeFileSync(policyPath, POLICY(', memory: { high: 1G }'));
    const b = await buildPlan({ root, policyPath, cache: { systemd: systemdMemo }, topology });
    expect(b.plan.changes.map((c) => `${c.target} ${c.setting}`)).toContain('/hadoop-yarn memory.high');
    expect(systemdMemo.stats).toEqual({ asked: 2, reused: 1 });
    expect(systemdMemo.reused).toBe(false);
  });
});
