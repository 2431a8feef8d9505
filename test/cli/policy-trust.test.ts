// A policy decides where root puts every process: apply, the agent and check use one only when root
// alone can change it (the file and every directory above it), and say what to fix; a dry run, which
// changes nothing, warns and goes on.
import { chmodSync, chownSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fakeCgroupHost } from '../support/cgroup-tree.js';
import { isolate } from './run.js';
import { KAFKA_YARN_POLICY } from '../support/policies.js';

const POLICY = KAFKA_YARN_POLICY;
const env = { ISOLATE_LOG: 'off' };

function hostWithPolicy() {
  const { root, cg } = fakeCgroupHost(['kafka.slice', 'hadoop-yarn']);
  const dir = join(root, 'etc/isolate');
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const file = join(dir, 'policy.yaml');
  writeFileSync(file, POLICY, { mode: 0o644 });
  return { root, cg, dir, file };
}

const kafkaCpus = (cg: string) => readFileSync(join(cg, 'kafka.slice/cpuset.cpus'), 'utf8').trim();

describe.skipIf(process.getuid?.() !== 0)('a policy others can write is refused', () => {
  it('is used as it is when root alone can change it (the control)', () => {
    const { root, cg } = hostWithPolicy();
    const r = isolate(['apply', '--yes', '--root', root], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(kafkaCpus(cg)).not.toBe('');
  });

  it('a world-writable policy file: apply, check, plan and the agent refuse it; a dry run warns', () => {
    const { root, cg, file } = hostWithPolicy();
    chmodSync(file, 0o666);
    const why = `policy ${file}: ${file} is writable by its group and others (owner uid 0, mode 0666); fix: chmod go-w ${file}`;
    const apply = isolate(['apply', '--yes', '--root', root], { env });
    expect(apply.code).toBe(1);
    expect(apply.stderr.trim()).toBe(
      `isolate: ${why} — a policy decides where root puts every process, so only one that root alone can change is used`,
    );
    const check = isolate(['check', '--root', root], { env });
    expect(check.code).toBe(3);
    expect(check.stderr).toContain(`UNKNOWN: ${why}`);
    const plan = isolate(['plan', '--root', root], { env });
    expect(plan.code).toBe(1);
    expect(plan.stderr).toContain(why);
    const agent = isolate(['agent', '--once', '--root', root], { env: { ISOLATE_LOG: 'json' } });
    expect(agent.code).not.toBe(0);
    expect(agent.stderr).toContain(why);
    const dry = isolate(['plan', '--dry-run', '--root', root], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain(`warning: ${why}`);
    expect(dry.stdout).toMatch(/kafka/);
    expect(kafkaCpus(cg)).toBe('');
  });

  it('/etc/isolate writable by its group, or a policy owned by another user', () => {
    const { root, cg, dir, file } = hostWithPolicy();
    chmodSync(dir, 0o775);
    let r = isolate(['apply', '--yes', '--root', root], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `${dir} is writable by its group (owner uid 0, mode 0775); fix: chmod go-w ${dir}`,
    );
    chmodSync(dir, 0o755);
    chownSync(file, 65534, 65534);
    r = isolate(['apply', '--yes', '--root', root], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `${file} is owned by uid 65534, not root (owner uid 65534, mode 0644); fix: chown root:root ${file}`,
    );
    expect(kafkaCpus(cg)).toBe('');
  });

  it('an explicit --policy in a directory anyone can write', () => {
    const { root, cg, dir } = hostWithPolicy();
    const open = join(dir, 'drop');
    mkdirSync(open);
    chmodSync(open, 0o777);
    const file = join(open, 'policy.yaml');
    writeFileSync(file, POLICY, { mode: 0o644 });
    const r = isolate(['apply', '--yes', '--root', root, '--policy', file], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${open} is writable by its group and others (owner uid 0, mode 0777)`);
    expect(kafkaCpus(cg)).toBe('');
  });
});
