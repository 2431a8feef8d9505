// docs/policy.md: every example policy is planned on the captured topology its comment names, and the
// plan printed under it is this test's output.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolate } from '../cli/run.js';
import { expectDocSample } from '../support/doc-samples.js';
import { makeFakeHost } from '../support/fake-host.js';

const DOC = 'docs/policy.md';
const text = readFileSync(resolve(import.meta.dirname, '../..', DOC), 'utf8');
// <!-- policy: ID fixture=SYSFS-TREE groups=CGROUP,... --> then a yaml block.
const examples = [
  ...text.matchAll(/<!-- policy: (\S+) fixture=(\S+) groups=(\S+) -->\n```yaml\n([\s\S]*?)```/g),
].map(([, id, fixture, groups, yaml]) => ({
  id: id ?? '',
  fixture: fixture ?? '',
  // A systemd host's top-level cgroups, plus the ones this host's workloads already run in.
  groups: ['init.scope', 'system.slice', 'user.slice', ...(groups ?? '').split(',')],
  yaml: yaml ?? '',
}));

describe('docs/policy.md', () => {
  it('has the three host examples', () => {
    expect(examples.map((e) => e.id)).toEqual(['kafka-flink', 'kafka-storm', 'two-brokers']);
  });

  for (const e of examples) {
    it(`${e.id}: validates on ${e.fixture} and its plan is the one shown`, () => {
      const root = makeFakeHost(e.fixture, e.groups);
      mkdirSync(join(root, 'etc/isolate'), { recursive: true });
      const policy = join(root, 'etc/isolate/policy.yaml');
      writeFileSync(policy, e.yaml);
      const valid = isolate(['policy', 'validate', '--root', root, policy]);
      expect(valid.code, valid.stderr).toBe(0);
      const plan = isolate(['plan', '--dry-run', '--root', root], { env: { ISOLATE_LOG: 'off' } });
      expect(plan.code, plan.stderr).toBe(0);
      expect(plan.stdout).toMatch(/\(exclusive\)/);
      expectDocSample(DOC, e.id, plan.stdout.replaceAll(root, '').trim());
    });
  }
});
