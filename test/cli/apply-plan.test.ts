// `apply --plan`: a saved plan is self-contained. It embeds its policy text (and hash) and how to carry
// it out, so deleting or editing the policy file afterwards changes nothing; a host that moved on is
// refused with the first differing value.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fakeCgroupHost } from '../support/cgroup-tree.js';
import { isolate } from './run.js';

/** qemu-2s-smt2's sysfs plus a cgroup2 tree of plain files in which every target already exists. */
const host = () => fakeCgroupHost(['kafka.slice', 'hadoop-yarn']);

function savePlan(root: string): { planFile: string; policy: string } {
  const dir = mkdtempSync(join(tmpdir(), 'isolate-applyplan-policy-'));
  const policy = join(dir, 'policy.yaml');
  writeFileSync(
    policy,
    `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
workloads:
  - { name: kafka, class: exclusive, cores: 1, match: { cgroup: /kafka.slice } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
`,
  );
  const planFile = join(dir, 'plan.json');
  const r = isolate(['plan', '--root', root, '--policy', policy, '--out', planFile]);
  expect(r.code, r.stderr).toBe(0);
  return { planFile, policy };
}

const env = { ISOLATE_LOG: 'off' };

describe('apply --plan', () => {
  it('applies the saved plan after its policy file was deleted', () => {
    const { root, cg } = host();
    const { planFile, policy } = savePlan(root);
    const saved = JSON.parse(readFileSync(planFile, 'utf8'));
    expect(saved.policy.text).toMatch(/name: kafka/);
    expect(saved.policy.sha256).toMatch(/^[0-9a-f]{64}$/);
    rmSync(policy);
    const r = isolate(['apply', '--plan', planFile, '--root', root, '--yes'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Applied \d+ changes/);
    const kafka = saved.allocation.kafka.cpuList;
    expect(readFileSync(join(cg, 'kafka.slice/cpuset.cpus'), 'utf8').trim()).toBe(kafka);
    expect(readFileSync(join(cg, 'kafka.slice/cpuset.cpus.partition'), 'utf8').trim()).toBe('root');
  });

  it('an edited policy file does not change what the saved plan does', () => {
    const { root, cg } = host();
    const { planFile, policy } = savePlan(root);
    writeFileSync(policy, 'this: is not a policy\n');
    const r = isolate(['apply', '--plan', planFile, '--root', root, '--yes'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(cg, 'kafka.slice/cpuset.cpus'), 'utf8').trim()).not.toBe('');
  });

  it('refuses when the host changed since the plan, naming the first differing value', () => {
    const { root, cg } = host();
    const { planFile } = savePlan(root);
    writeFileSync(join(cg, 'hadoop-yarn/cpuset.cpus'), '0-1\n');
    const r = isolate(['apply', '--plan', planFile, '--root', root, '--yes'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /host changed since the plan was saved \(\/hadoop-yarn cpuset\.cpus was "" when planned, is "0-1" now\)/,
    );
    expect(readFileSync(join(cg, 'kafka.slice/cpuset.cpus'), 'utf8').trim()).toBe('');
  });

  it('refuses a saved plan whose embedded policy was tampered with', () => {
    const { root } = host();
    const { planFile } = savePlan(root);
    const saved = JSON.parse(readFileSync(planFile, 'utf8'));
    saved.policy.text = saved.policy.text.replace('cores: 1', 'cores: 2');
    writeFileSync(planFile, JSON.stringify(saved));
    const r = isolate(['apply', '--plan', planFile, '--root', root, '--yes'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/embedded policy does not match its sha256/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
