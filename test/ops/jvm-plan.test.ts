// `plan` names the running JVMs whose CPUs its changes narrow (or widen): a warning for an exclusive
// workload's, a note for a batch one's; the agent's rounds (no `jvms`) read none of it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPlan } from '../../src/ops/plan.js';
import { fakeCgroupHost } from '../support/cgroup-tree.js';
import { fakeProcess, gcThreads, putFile } from '../support/jvm-proc.js';
import { KAFKA_YARN_POLICY } from '../support/policies.js';

const POLICY = KAFKA_YARN_POLICY;

function host() {
  const { root } = fakeCgroupHost(['kafka.slice', 'hadoop-yarn']);
  mkdirSync(join(root, 'etc/isolate'), { recursive: true });
  const policyPath = join(root, 'etc/isolate/policy.yaml');
  writeFileSync(policyPath, POLICY);
  putFile(root, 'proc/stat', 'btime 1700000000\n');
  return { root, policyPath };
}

describe('the plan and the JVMs whose CPUs it changes', () => {
  it("a broker's JVM on 8 CPUs, which the plan narrows: a warning naming its pid; a batch JVM: a note", async () => {
    const { root, policyPath } = host();
    fakeProcess(root, 4242, { exe: '/usr/bin/java', cpus: '0-7', threads: gcThreads(8) });
    fakeProcess(root, 5000, {
      exe: '/usr/bin/java',
      cpus: '0-1',
      threads: gcThreads(2),
      cgroup: 'hadoop-yarn',
    });
    const { plan } = await buildPlan({ root, policyPath, jvms: true });
    const kafka = plan.allocation.workloads.find((w) => w.name === 'kafka')!;
    const flink = plan.allocation.workloads.find((w) => w.name === 'flink')!;
    expect(kafka.cpus.size).toBeLessThan(8);
    expect(plan.warnings).toContain(
      `kafka's JVM (pid 4242) sized its GC/JIT pools for 8 CPUs; after this change it may use ${kafka.cpus.size}: restart it in your rolling-restart window`,
    );
    expect(plan.notes).toContain(
      `flink's JVM (pid 5000) sized its GC/JIT pools for 2 CPUs; after this change it may use ${flink.cpus.size}: restart it in your rolling-restart window`,
    );
    // The agent's rounds: no JVM is read.
    const quiet = await buildPlan({ root, policyPath });
    expect(quiet.plan.warnings.filter((w) => w.includes('JVM'))).toEqual([]);
  });

  it('a JVM pinned to the CPUs it will get, or not a JVM at all, is not named', async () => {
    const { root, policyPath } = host();
    const first = await buildPlan({ root, policyPath });
    const n = first.plan.allocation.workloads.find((w) => w.name === 'kafka')!.cpus.size;
    fakeProcess(root, 4242, {
      exe: '/usr/bin/java',
      cmdline: ['/usr/bin/java', `-XX:ActiveProcessorCount=${n}`, 'kafka.Kafka'],
      // As many GC workers as the flag gives: more would prove the flag was not honoured.
      threads: gcThreads(n),
    });
    fakeProcess(root, 4300, { exe: '/usr/bin/python3', threads: gcThreads(8) });
    const { plan } = await buildPlan({ root, policyPath, jvms: true });
    expect([...plan.warnings, ...plan.notes].filter((w) => w.includes('JVM'))).toEqual([]);
  });
});
