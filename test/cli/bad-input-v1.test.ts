// The refusals only a cgroup v1 host (legacy or hybrid) has: one line on stderr naming the policy
// field (or file), the layout, what v1 lacks and the kernel parameter that changes it; exit code 1;
// no stack trace; nothing written under the host's cgroup trees and no journal.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeFakeV1Host, mountinfoFor } from '../support/fake-v1-host.js';
import { isolate } from './run.js';

const GOOD = `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
workloads:
  - name: kafka
    class: exclusive
    cores: 1
    match: { process: { cmdline: 'kafka\\.Kafka' } }
  - name: flink
    class: batch
    match: { cgroup: /hadoop-yarn }
    memory: { high: 1G, max: 2G }
    cpu: { weight: 50 }
`;
const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
}, 180_000);
// Nothing is ever written, so one host per layout serves every case (copying sysfs is the slow part).
const hosts: Partial<Record<'legacy' | 'hybrid', string>> = {};
const hostFor = (layout: 'legacy' | 'hybrid') => {
  if (!hosts[layout]) {
    hosts[layout] = makeFakeV1Host('qemu-2s-smt2', { layout, ...base });
    roots.push(hosts[layout]);
  }
  return hosts[layout];
};
const base = { cpus: '0-7', mems: '0-1', cpuGroups: ['hadoop-yarn'], memoryGroups: ['hadoop-yarn'] };

/** Every file under the host's cgroup mount and /var, with its contents' hash. */
function tree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const e of readdirSync(dir)) {
      const p = join(dir, e);
      if (statSync(p).isDirectory()) walk(p);
      else out[p.slice(root.length)] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(join(root, 'sys/fs/cgroup'));
  walk(join(root, 'var'));
  return out;
}

const V1_FIX = /systemd\.unified_cgroup_hierarchy=1/;
const cases: [string, 'legacy' | 'hybrid', (t: string) => string, RegExp, string?][] = [
  [
    'memory.low on legacy',
    'legacy',
    (t) => t.replace("'kafka\\.Kafka' } }\n", "'kafka\\.Kafka' } }\n    memory: { low: 1G }\n"),
    /policy\.yaml:\d+:\d+: workloads\[0\]\.memory\.low: memory\.low protection does not exist in cgroup v1 \(no memory\.low file\) on this legacy cgroup v1 layout; v1 has no way to keep Kafka's page cache from reclaim: what it offers is capping the batch workloads .*; remove workloads\[0\]\.memory\.low from the policy, or boot a kernel of 5\.0 or later \(cpuset on cgroup v2\) with systemd\.unified_cgroup_hierarchy=1 \(a 3\.10 kernel, as RHEL 7's, cannot\)/,
  ],
  [
    'memory.min on hybrid',
    'hybrid',
    (t) => t.replace("'kafka\\.Kafka' } }\n", "'kafka\\.Kafka' } }\n    memory: { min: 512M }\n"),
    /workloads\[0\]\.memory\.min: memory\.min protection does not exist in cgroup v1 .* on this hybrid cgroup layout \(cpuset on v1\)/,
  ],
  [
    'cpu.idle',
    'legacy',
    (t) => t.replace('weight: 50', 'idle: true'),
    /workloads\[1\]\.cpu\.idle: cpu\.idle \(cgroup SCHED_IDLE\) does not exist in cgroup v1 on this legacy/,
  ],
  [
    'memory on a process-matched workload',
    'hybrid',
    (t) => t.replace("'kafka\\.Kafka' } }\n", "'kafka\\.Kafka' } }\n    memory: { max: 4G }\n"),
    /workloads\[0\]\.memory: a process-matched workload gets only a cpuset on cgroup v1 .* match it by cgroup or systemdUnit/,
  ],
  [
    'a hierarchy that is not mounted',
    'legacy',
    (t) => t.replace('{ cgroup: /hadoop-yarn }', '{ cgroup: /hadoop-yarn, hierarchy: blkio }'),
    /workloads\[1\]\.match\.hierarchy: no cgroup v1 hierarchy with the blkio controller is mounted under \/sys\/fs\/cgroup on this legacy cgroup v1 layout/,
  ],
  [
    'an unknown hierarchy',
    'legacy',
    (t) => t.replace('{ cgroup: /hadoop-yarn }', '{ cgroup: /hadoop-yarn, hierarchy: gpu }'),
    /workloads\[1\]\.match\.hierarchy: expected a cgroup v1 controller \(cpu, cpuacct, memory, .*\) whose hierarchy the path lies in; got "gpu"/,
    'any',
  ],
  [
    'hierarchy without cgroup',
    'legacy',
    (t) =>
      t.replace(
        "match: { process: { cmdline: 'kafka\\.Kafka' } }",
        'match: { systemdUnit: kafka.service, hierarchy: cpu }',
      ),
    /workloads\[0\]\.match\.hierarchy: only goes with cgroup:/,
    'any',
  ],
];

describe('v1-only refusals: one line, exit 1, nothing written', () => {
  for (const [name, layout, edit, pattern, fix] of cases) {
    // validate --root refuses what the agent would refuse: the role installs only what validates.
    for (const cmd of [
      ['plan', '--dry-run'],
      ['apply', '--yes'],
      ['policy', 'validate'],
    ]) {
      it(`${name}: ${cmd.join(' ')}`, () => {
        const root = hostFor(layout);
        const file = join(root, 'policy.yaml');
        writeFileSync(file, edit(GOOD));
        const before = tree(root);
        const r = isolate([...cmd, '--root', root, ...(cmd[0] === 'policy' ? [file] : ['--policy', file])]);
        expect(r.code, r.stderr + r.stdout).toBe(1);
        const lines = r.stderr.trimEnd().split('\n');
        expect(lines, r.stderr).toHaveLength(1);
        expect(r.stderr).not.toMatch(/\n\s+at /);
        expect(lines[0]).toMatch(pattern);
        if (fix !== 'any') expect(lines[0]).toMatch(V1_FIX);
        expect(tree(root)).toEqual(before);
        expect(existsSync(join(root, 'var/lib/isolate/journal.json'))).toBe(false);
      });
    }
  }

  it('a mount table contradicting /sys/fs/cgroup is refused by every command', () => {
    const root = makeFakeV1Host('qemu-2s-smt2', {
      layout: 'legacy',
      ...base,
      mountinfo: `${mountinfoFor('legacy')}40 25 0:40 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n`,
    });
    roots.push(root);
    const file = join(root, 'policy.yaml');
    writeFileSync(file, GOOD);
    const before = tree(root);
    for (const cmd of [['plan', '--dry-run'], ['apply', '--yes'], ['check'], ['topology']]) {
      const r = isolate([...cmd, '--root', root, ...(cmd[0] === 'topology' ? [] : ['--policy', file])]);
      expect(r.code === 1 || (cmd[0] === 'check' && r.code === 3), `${cmd[0]}: ${r.code} ${r.stderr}`).toBe(
        true,
      );
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines, r.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(
        /mountinfo lists a cgroup v1 hierarchy at \/sys\/fs\/cgroup\/pids but .*\/sys\/fs\/cgroup\/pids does not exist; the cgroup layout cannot be judged, so isolate changes nothing/,
      );
    }
    expect(tree(root)).toEqual(before);
  });
});
