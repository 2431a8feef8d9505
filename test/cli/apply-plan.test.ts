// `apply --plan`: a saved plan is self-contained. It embeds its policy text (and hash) and how to carry
// it out, so deleting or editing the policy file afterwards changes nothing; a host that moved on is
// refused with the first differing value.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Change } from '../../src/model/plan.js';
import { fingerprintOf, type PlanJson } from '../../src/planner/json.js';
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

  it("the printed hint keeps --root: pasted as printed, it applies to the plan's root", () => {
    const { root, cg } = host();
    const { planFile, policy } = savePlan(root);
    const r = isolate(['plan', '--root', root, '--policy', policy, '--out', planFile]);
    const hint = /apply it with: isolate (.*)$/m.exec(r.stdout)?.[1];
    expect(hint, r.stdout).toBe(`apply --root ${root} --plan ${planFile}`);
    const applied = isolate([...hint!.split(' '), '--yes'], { env });
    expect(applied.code, applied.stderr).toBe(0);
    expect(readFileSync(join(cg, 'kafka.slice/cpuset.cpus.partition'), 'utf8').trim()).toBe('root');
  });

  it('refuses a plan made for another root, naming both and the command for its own', () => {
    const { root, cg } = host();
    const { planFile } = savePlan(root);
    const other = host().root;
    const r = isolate(['apply', '--plan', planFile, '--root', other, '--yes'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `isolate: --plan ${planFile}: it was made for --root ${root}, this apply is for --root ${other}; run "isolate apply --root ${root} --plan ${planFile}", or "isolate plan" for this root`,
    );
    expect(readFileSync(join(cg, 'kafka.slice/cpuset.cpus.partition'), 'utf8').trim()).toBe('member');
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

// A saved plan is input anyone may have written: it is applied as verified, never as written, and it
// chooses nothing that is executed.
// biome-ignore lint/suspicious/noExplicitAny: a saved plan as a forger edits it, any field any way
type Doc = Record<string, any>;

describe('apply --plan applies what it verified, not what the file says', () => {
  const edit = (planFile: string, change: (saved: Doc) => void) => {
    const saved = JSON.parse(readFileSync(planFile, 'utf8'));
    change(saved);
    writeFileSync(planFile, JSON.stringify(saved));
  };
  const untouched = (cg: string) => {
    expect(readFileSync(join(cg, 'kafka.slice/cpuset.cpus'), 'utf8').trim()).toBe('');
    expect(readFileSync(join(cg, 'hadoop-yarn/cpuset.cpus'), 'utf8').trim()).toBe('');
  };

  it('refuses a change edited to give /hadoop-yarn every CPU, naming it, and writes nothing', () => {
    const { root, cg } = host();
    const { planFile } = savePlan(root);
    edit(planFile, (s) => {
      const yarn = s.changes.find((c: Change) => c.target === '/hadoop-yarn' && c.setting === 'cpuset.cpus');
      yarn.to = '0-7';
    });
    const r = isolate(['apply', '--plan', planFile, '--root', root, '--yes'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /the plan was edited after it was saved \(change \d+ reads "\/hadoop-yarn cpuset\.cpus: "" → 0-7", its policy plans "\/hadoop-yarn cpuset\.cpus: "" → 0-1,4-7"\)/,
    );
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    untouched(cg);
  });

  it('refuses a plan whose partition change was deleted, also with its fingerprint made to match', () => {
    const { root, cg } = host();
    const { planFile } = savePlan(root);
    const drop = (s: Doc) => {
      s.changes = s.changes.filter((c: Change) => c.setting !== 'cpuset.cpus.partition');
    };
    edit(planFile, drop);
    let r = isolate(['apply', '--plan', planFile, '--root', root, '--yes'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /edited after it was saved \(change \d+ \(.*cpuset\.cpus\.partition.*\) is missing/,
    );
    untouched(cg);
    // The forger recomputes the fingerprint over the edited file: its own policy still plans otherwise.
    edit(planFile, (s) => {
      s.fingerprint = fingerprintOf(s as PlanJson);
    });
    r = isolate(['apply', '--plan', planFile, '--root', root, '--yes'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the host now also needs: \/kafka\.slice cpuset\.cpus\.partition/);
    untouched(cg);
  });

  it('refuses tool paths stored in the plan before anything runs', () => {
    const { root, cg } = host();
    const { planFile } = savePlan(root);
    const dir = mkdtempSync(join(tmpdir(), 'isolate-evil-'));
    const evil = join(dir, 'storcli64');
    writeFileSync(evil, `#!/bin/sh\ntouch ${dir}/ran\n`, { mode: 0o755 });
    edit(planFile, (s) => {
      s.executorOptions = { raid: { timeoutMs: 1000, toolPaths: { storcli: evil } } };
    });
    const r = isolate(['apply', '--plan', planFile, '--root', root, '--yes'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `it was saved to run with RAID tools storcli=${evil} \\(timeout 1000 ms\\), this apply runs with no RAID tool; tool paths come only from --tool-path`,
      ),
    );
    expect(existsSync(join(dir, 'ran'))).toBe(false);
    untouched(cg);
  });

  it('checks every field against the schema: an unknown field, a wrong type, a relative tool path', () => {
    const { root, cg } = host();
    const cases: [(s: Doc) => void, RegExp][] = [
      [(s) => (s.hooks = { bare: true }), /plan\.hooks: not a field isolate writes/],
      [(s) => (s.changes[0].to = 7), /plan\.changes\[0\]\.to: expected a string, found 7/],
      [(s) => (s.changes[0].backend = 'shell'), /plan\.changes\[0\]\.backend: "shell" is not one of/],
      [
        (s) => (s.executorOptions = { raid: { timeoutMs: 1, toolPaths: { storcli: 'bin/storcli' } } }),
        /plan\.executorOptions\.raid\.toolPaths\.storcli: "bin\/storcli" is not an absolute path/,
      ],
      [(s) => (s.allocation.kafka.cpus = [-1]), /plan\.allocation\.kafka\.cpus\[0\]: expected an integer/],
    ];
    for (const [change, expected] of cases) {
      const { planFile } = savePlan(root);
      edit(planFile, change);
      const r = isolate(['apply', '--plan', planFile, '--root', root, '--yes'], { env });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(expected);
      expect(r.stderr).toMatch(/not a plan "isolate plan" saves/);
    }
    untouched(cg);
  });

  it('refuses a plan file another user could write, as it would such a policy', () => {
    const { root, cg } = host();
    const { planFile } = savePlan(root);
    chmodSync(planFile, 0o666);
    const r = isolate(['apply', '--plan', planFile, '--root', root, '--yes'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `--plan ${planFile}: refused, ${planFile} is writable by its group and others (owner uid 0, mode 0666); fix: chmod go-w ${planFile}`,
    );
    untouched(cg);
  });
});
