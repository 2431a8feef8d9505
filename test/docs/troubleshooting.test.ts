// docs/troubleshooting.md: each symptom's sample is what the program prints on a fixture host built
// to have that problem (a cgroup v1 or hybrid layout, cpuset bound elsewhere, a kernel without cpuset
// partitions, a RAID controller without its tool, a cgroup write the kernel refuses).
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeHost, type SimHost } from '../raid/host.js';
import { CLI } from '../cli/run.js';
import { hostFindings } from '../../src/audit/rules.js';
import { ThreadList } from '../../src/audit/threads.js';
import { CpuSet } from '../../src/model/cpuset.js';
import { docText, expectDocSample, sampleIds } from '../support/doc-samples.js';
import { makeFakeV1Host } from '../support/fake-v1-host.js';
import { cli, hostWithPolicy, KAFKA_FLINK, put, transcript } from './host.js';

const DOC = 'docs/troubleshooting.md';
const FIXTURE = 'qemu-2s-smt2';
const checked = new Set<string>();
function sample(id: string, text: string): void {
  checked.add(id);
  expectDocSample(DOC, id, text);
}

/** A host whose /sys/fs/cgroup is the v1 layout systemd mounts (plus cgroup2 at unified/ when hybrid). */
/** A legacy (or hybrid) v1 host with a YARN hierarchy in cpu,cpuacct, and `policy` in place. */
function v1Host(hybrid: boolean, policy: string): string {
  const root = makeFakeV1Host(FIXTURE, {
    layout: hybrid ? 'hybrid' : 'legacy',
    cpus: '0-7',
    mems: '0-1',
    cpuGroups: ['hadoop-yarn'],
    memoryGroups: ['hadoop-yarn'],
  });
  put(root, 'etc/isolate/policy.yaml', policy);
  return root;
}

describe('docs/troubleshooting.md', () => {
  it('cgroup v1 and hybrid hosts', () => {
    // A policy with memory protection (low), which v1 cannot express: refused, host unchanged.
    const withLow = KAFKA_FLINK.replace(
      'match: {cgroup: /kafka.slice}}',
      'match: {cgroup: /kafka.slice}, memory: {low: 1G}}',
    );
    const legacy = v1Host(false, withLow);
    const refused = cli(legacy, ['plan', '--dry-run']);
    expect(refused.code).toBe(1);
    // The same policy without it: planned on the v1 cpuset hierarchy, which isolate owns.
    const hybrid = v1Host(true, KAFKA_FLINK);
    const planned = cli(hybrid, ['plan', '--dry-run']);
    expect(planned.code).toBe(0);
    expect(planned.stdout).toMatch(/cpuset\.cpu_exclusive/);
    const head = planned.stdout.split('\n').filter((l) => /layout|cpu_exclusive|^Changes/.test(l));
    sample(
      'cgroup-v1',
      transcript(legacy, 'isolate plan --dry-run', refused) +
        transcript(hybrid, "isolate plan --dry-run | grep -E 'layout|cpu_exclusive|^Changes'", {
          ...planned,
          stdout: `${head.join('\n')}\n`,
        }),
    );
  });

  it('cpuset controller not available in cgroup2', () => {
    const root = hostWithPolicy(FIXTURE);
    writeFileSync(join(root, 'sys/fs/cgroup/cgroup.controllers'), 'cpu io memory pids\n');
    const r = cli(root, ['apply', '--yes']);
    expect(r.code).toBe(1);
    sample('no-cpuset', transcript(root, 'isolate apply --yes', r));
  });

  it('a kernel without cpuset partitions', () => {
    const groups = ['init.scope', 'system.slice', 'user.slice', 'kafka.slice', 'hadoop-yarn'];
    const root = hostWithPolicy(FIXTURE, undefined, groups);
    for (const g of groups) unlinkSync(join(root, 'sys/fs/cgroup', g, 'cpuset.cpus.partition'));
    const r = cli(root, ['plan', '--dry-run']);
    expect(r.code).toBe(0);
    const changes = r.stdout.slice(r.stdout.indexOf('Changes'));
    expect(changes).not.toMatch(/cpuset\.cpus\.partition/);
    // The warnings lead the plan; the sample leaves out the allocation (up to its blank line), as sed does.
    const from = r.stdout.indexOf('Allocation:');
    const shown = r.stdout.slice(0, from) + r.stdout.slice(r.stdout.indexOf('\n\n', from) + 2);
    expect(shown.slice(0, shown.indexOf('Changes'))).toMatch(/kafka: this kernel has no cpuset partitions/);
    sample(
      'no-partitions',
      transcript(root, "isolate plan --dry-run | sed '/^Allocation:/,/^$/d'", { ...r, stdout: shown }),
    );
  });

  it('a cgroup write the kernel refuses (EACCES, as from an SELinux/AppArmor denial)', () => {
    const root = hostWithPolicy(FIXTURE);
    // As root, file modes do not refuse anything: run unprivileged over a tree it owns, except one
    // file, which then refuses the write with EACCES exactly as an LSM denial does.
    const asRoot = process.getuid?.() === 0;
    if (asRoot) spawnSync('chown', ['-R', '65534:65534', root]);
    const denied = join(root, 'sys/fs/cgroup/hadoop-yarn/cpuset.mems');
    if (asRoot) chownSync(denied, 0, 0);
    else spawnSync('chmod', ['0444', denied]);
    const r = spawnSync(process.execPath, [CLI, 'apply', '--yes', '--root', root], {
      encoding: 'utf8',
      env: { ...process.env, ISOLATE_LOG: 'off' },
      ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
    });
    expect(r.status).toBe(2);
    sample(
      'eacces',
      transcript(root, 'isolate apply --yes', { code: r.status, stdout: '', stderr: r.stderr }),
    );
  });

  let raid: SimHost | null = null;
  afterAll(() => raid?.cleanup());
  it('a RAID controller without its vendor tool', () => {
    raid = makeHost({ drivers: ['megaraid_sas'] });
    const r = cli(raid.root, ['raid', 'check'], {
      RAID_SIM_DIR: raid.dir,
      ISOLATE_RAID_LOCK: join(raid.dir, 'isolate-raid.lock'),
    });
    expect(r.code).toBe(1);
    sample('raid-no-tool', transcript(raid.root, 'isolate raid check', r));
  });

  it('a policy another user could write', () => {
    const root = v1Host(true, KAFKA_FLINK);
    chmodSync(join(root, 'etc/isolate/policy.yaml'), 0o664);
    const r = cli(root, ['apply', '--yes']);
    expect(r.code).toBe(1);
    sample('policy-writable', transcript(root, 'isolate apply --yes', r));
  });

  it("the severity the symptom gives v1's unbound kernel threads is the one check reports", () => {
    const kernel = new ThreadList(1);
    kernel.add(() => ({ pid: 9, tid: 9, comm: 'kworker/u16:0', cgroup: '/', cpus: '0-7' }));
    const scan = { violations: new ThreadList(1), unfenced: new ThreadList(1), kernelViolations: kernel };
    const severity = (strict: boolean) =>
      hostFindings(scan, CpuSet.parse('2-3'), 0, { strict, batchTargets: [], v1: true })[0]?.severity;
    expect([severity(false), severity(true)]).toEqual(['info', 'warning']);
    expect(docText(DOC)).toContain(
      "reports unbound kernel threads on Kafka's CPUs as INFO (WARNING with `strict: true`).",
    );
  });

  it('every sample in the doc is produced by this file', () => {
    expect(sampleIds(DOC).filter((i) => !checked.has(i))).toEqual([]);
  });
});
