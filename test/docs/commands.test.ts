// docs/commands.md: every sample is a run of the built CLI on a fixture host (test/fixtures/sysfs
// with a stand-in cgroup2 tree and /proc) or on a simulated RAID host replaying real vendor captures.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FIXTURES, HAVE_FIXTURES } from '../raid/fixtures.js';
import { CV_9270, CV_9270_DETAIL, makeHost, type SimHost } from '../raid/host.js';
import { formatTopology } from '../../src/topology/format.js';
import { readTopology } from '../../src/topology/read.js';
import { docTable, docText, expectDocSample, sampleIds } from '../support/doc-samples.js';
import { LARGE_HOST_POLICY, largeHost } from '../support/irq-host.js';
import { cli, hostWithPolicy, put, putProcesses, settleEffective, transcript } from './host.js';

const DOC = 'docs/commands.md';
const checked = new Set<string>();
function sample(id: string, text: string): void {
  checked.add(id);
  expectDocSample(DOC, id, text);
}

// One broker (two threads), one YARN container, systemd: the host of docs/install.md.
const FIXTURE = 'qemu-2s-smt2';
function running(root: string, kafkaCpus: string, yarnCpus: string): void {
  putProcesses(root, [
    { pid: 1, name: 'systemd', cgroup: '/init.scope', threads: [1], cpus: '0-7', ppid: 0 },
    { pid: 2100, name: 'java', cgroup: '/kafka.slice/kafka.service', threads: [2100, 2101], cpus: kafkaCpus },
    { pid: 3300, name: 'java', cgroup: '/hadoop-yarn/container_01', threads: [3300], cpus: yarnCpus },
  ]);
}

describe('docs/commands.md', () => {
  it('topology', () => {
    const root = hostWithPolicy(FIXTURE);
    const r = cli(root, ['topology']);
    expect(r.code).toBe(0);
    sample('topology', transcript(root, 'isolate topology', r));
    const j = cli(root, ['topology', '--json']);
    expect(j.code).toBe(0);
    const t = JSON.parse(j.stdout);
    // The first entry of each list and every scalar: the shape, at a readable length.
    const excerpt = Object.fromEntries(
      Object.entries(t).map(([k, v]) => [
        k,
        Array.isArray(v) && v.length > 1 && typeof v[0] === 'object' ? [v[0]] : v,
      ]),
    );
    sample('topology-json', JSON.stringify(excerpt, null, 2));
    // On a live host the CPU model and memory come on a line of their own, before the CPU count.
    const live = formatTopology(readTopology(root), 'Intel Xeon Gold 6342, 503.1 GiB').split('\n');
    expect(live.slice(0, 2)).toEqual(['Intel Xeon Gold 6342, 503.1 GiB', r.stdout.split('\n')[0]]);
    expect(docText(DOC)).toContain('On a live host (`--root /`) a line before\nthese names the CPU model');
  });

  it('policy validate', () => {
    const root = hostWithPolicy(FIXTURE);
    // Run on the fixture's file, shown as on the host.
    const okR = cli(null, ['policy', 'validate', join(root, 'etc/isolate/policy.yaml'), '--root', root]);
    expect(okR.code).toBe(0);
    writeFileSync(
      join(root, 'etc/isolate/bad.yaml'),
      readFileSync(join(root, 'etc/isolate/policy.yaml'), 'utf8').replace('cores: 1', 'cores: 9'),
    );
    const bad = cli(null, ['policy', 'validate', join(root, 'etc/isolate/bad.yaml'), '--root', root]);
    expect(bad.code).toBe(1);
    sample(
      'policy-validate',
      transcript(root, 'isolate policy validate /etc/isolate/policy.yaml --root /', okR) +
        transcript(root, 'isolate policy validate /etc/isolate/bad.yaml --root /', bad),
    );
  });

  it('plan, apply, check, rollback, agent --once on one host', () => {
    const root = hostWithPolicy(FIXTURE);
    running(root, '0-7', '0-7');
    settleEffective(root, '0-7');

    const dry = cli(root, ['plan', '--dry-run', '--json']);
    expect(dry.code).toBe(0);
    sample('plan-json', transcript(root, 'isolate plan --dry-run --json', dry));
    const alloc = JSON.parse(dry.stdout).allocation;
    // The flags table names every top-level field of the document (`disks` comes only with a policy
    // that names disks, which this one does not).
    const row = docTable('docs/commands.md', 'isolate plan').find((r) => r[0]?.startsWith('`--json`'));
    const named = [...(row?.[2] ?? '').matchAll(/`(\w+)`/g)].map((m) => m[1]);
    expect(named.filter((k) => k !== 'disks').sort()).toEqual(Object.keys(JSON.parse(dry.stdout)).sort());

    const detailed = (): string => {
      const r = cli(root, ['plan', '--dry-run', '--detailed-exitcode']);
      return transcript(
        root,
        'isolate plan --dry-run --detailed-exitcode > /dev/null',
        { ...r, stdout: '' },
        { code: true },
      );
    };
    const before = detailed();
    expect(before).toMatch(/\n2\n$/);

    const before_check = cli(root, ['check']);
    expect(before_check.code).toBe(2);
    // --json carries the exit code beside the status, as a failure's document does.
    const json = cli(root, ['check', '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'CRITICAL', code: 2 });
    sample('check-critical', transcript(root, 'isolate check', before_check));

    const saved = cli(root, ['plan']);
    expect(saved.code).toBe(0);
    sample('plan', transcript(root, 'isolate plan', saved));

    const applied = cli(root, ['apply', '--plan', join(root, 'var/lib/isolate/plan.json'), '--yes']);
    expect(applied.code, applied.stderr).toBe(0);
    const again = cli(root, ['apply', '--yes']);
    expect(again.code).toBe(0);
    sample(
      'apply',
      transcript(root, 'isolate apply --plan /var/lib/isolate/plan.json --yes', applied) +
        transcript(root, 'isolate apply --yes', again),
    );
    sample('plan-detailed-exitcode', before + detailed());

    // The kernel now confines each workload's threads to its cgroup's CPUs.
    settleEffective(root, '0-7');
    running(root, alloc.kafka.cpuList, alloc.flink.cpuList);
    const ok = cli(root, ['check']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(cli(root, ['check', '--json']).stdout)).toMatchObject({ status: 'OK', code: 0 });
    sample('check-ok', transcript(root, 'isolate check', ok));

    const agent = cli(root, ['agent', '--once'], { ISOLATE_LOG: 'json' });
    expect(agent.code).toBe(0);
    sample('agent-once', transcript(root, 'isolate agent --once', agent, { code: true }));

    // An operator's hand edit since: the preview shows the value the rollback overwrites, marked.
    writeFileSync(join(root, 'sys/fs/cgroup/hadoop-yarn/cpuset.cpus'), '0-1\n');
    const preview = cli(root, ['rollback', '--dry-run']);
    expect(preview.code, preview.stderr).toBe(0);
    expect(preview.stdout).toMatch(/^Rollback would undo \d+ changes \(journal /);
    expect(preview.stdout).toMatch(/\/hadoop-yarn cpuset\.cpus: 0-1 → .* \(changed since isolate wrote /);
    const rb = cli(root, ['rollback']);
    expect(rb.code).toBe(0);
    const rb2 = cli(root, ['rollback']);
    sample(
      'rollback',
      transcript(root, 'isolate rollback --dry-run', preview) +
        transcript(root, 'isolate rollback', rb) +
        transcript(root, 'isolate rollback', rb2),
    );
  });

  it('agent: an invalid policy is refused at start', () => {
    const root = hostWithPolicy(FIXTURE, 'apiVersion: isolate/v1\nkind: HostPolicy\nworkloads: []\n');
    const r = cli(root, ['agent']);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(/internal error/);
    sample('agent-invalid-policy', transcript(root, 'isolate agent', r));
  });

  it('apply --plan refuses a plan the host has moved away from', () => {
    const root = hostWithPolicy(FIXTURE);
    expect(cli(root, ['plan']).code).toBe(0);
    // Someone (YARN, an operator) changes a value the plan was made against.
    writeFileSync(join(root, 'sys/fs/cgroup/hadoop-yarn/cpuset.cpus'), '0-3\n');
    const r = cli(root, ['apply', '--plan', join(root, 'var/lib/isolate/plan.json'), '--yes']);
    expect(r.code).toBe(1);
    sample('apply-stale-plan', transcript(root, 'isolate apply --plan /var/lib/isolate/plan.json --yes', r));
  });

  it('apply --plan refuses a plan edited after it was saved', () => {
    const root = hostWithPolicy(FIXTURE);
    expect(cli(root, ['plan']).code).toBe(0);
    const file = join(root, 'var/lib/isolate/plan.json');
    const saved = JSON.parse(readFileSync(file, 'utf8'));
    const yarn = saved.changes.find(
      (c: { target: string; setting: string }) => c.target === '/hadoop-yarn' && c.setting === 'cpuset.cpus',
    );
    yarn.to = '0-7';
    writeFileSync(file, JSON.stringify(saved));
    const r = cli(root, ['apply', '--plan', file, '--yes']);
    expect(r.code).toBe(1);
    sample('apply-edited-plan', transcript(root, 'isolate apply --plan /var/lib/isolate/plan.json --yes', r));
  });

  it('one-line errors, and the JSON document of a failure', () => {
    const missing = join(tmpdir(), `isolate-no-such-host-${process.pid}`);
    const plan = cli(missing, ['plan', '--dry-run']);
    expect(plan.code).toBe(1);
    const check = cli(missing, ['check']);
    expect(check.code).toBe(3);
    const json = cli(missing, ['apply', '--yes', '--json']);
    expect(json.code).toBe(1);
    const t = (s: string, r: typeof plan) =>
      transcript('/-', s, {
        ...r,
        stdout: r.stdout.replaceAll(missing, '/srv/host'),
        stderr: r.stderr.replaceAll(missing, '/srv/host'),
      });
    sample(
      'errors',
      t('isolate plan --dry-run --root /srv/host', plan) +
        t('isolate check --root /srv/host', check) +
        t('isolate apply --yes --json --root /srv/host', json),
    );
  });
});

describe.skipIf(!HAVE_FIXTURES)('docs/commands.md: raid', () => {
  let host: SimHost | null = null;
  afterAll(() => host?.cleanup());

  it('raid show and raid check on a healthy CacheVault controller', () => {
    host = makeHost({
      drivers: ['megaraid_sas'],
      tools: { storcli: { controllers: [{ showAll: CV_9270, cv: CV_9270_DETAIL }] } },
    });
    const env = { RAID_SIM_DIR: host.dir, ISOLATE_RAID_LOCK: join(host.dir, 'isolate-raid.lock') };
    const show = cli(host.root, ['raid', 'show'], env);
    expect(show.code).toBe(0);
    sample('raid-show', transcript(host.root, 'isolate raid show', show));
    const check = cli(host.root, ['raid', 'check'], env);
    expect(check.code).toBe(0);
    sample('raid-check', transcript(host.root, 'isolate raid check', check, { code: true }));
    host.cleanup();
    host = makeHost({ drivers: ['megaraid_sas'] });
    const none = cli(host.root, ['raid', 'check'], {
      RAID_SIM_DIR: host.dir,
      ISOLATE_RAID_LOCK: join(host.dir, 'isolate-raid.lock'),
    });
    expect(none.code).toBe(1);
    sample('raid-check-no-tool', transcript(host.root, 'isolate raid check', none));
  });

  it('raid parse on saved MegaCli outputs', () => {
    const files = ['check_raid-3-ldinfo-WB.txt', 'check_raid-issue39-bbu-replacement-required.txt'];
    const r = cli(
      null,
      ['raid', 'parse', '--tool', 'megacli', ...files, '--check'],
      {},
      join(FIXTURES, 'megacli'),
    );
    expect(r.code).toBe(2);
    sample('raid-parse', transcript('/-', `isolate raid parse --tool megacli ${files.join(' ')} --check`, r));
  });
});

describe('docs/commands.md: a plan on a large host', () => {
  it('a 96-CPU host with a 48-queue NIC: summary and warnings first, alike changes one line each', () => {
    const root = largeHost();
    put(root, 'etc/isolate/policy.yaml', LARGE_HOST_POLICY);
    const r = cli(root, ['plan', '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    const text = transcript(root, 'isolate plan --dry-run', r);
    expect(text.split('\n').length).toBeLessThan(60);
    expect(r.stdout).toMatch(
      /^Summary: 158 changes \(5 cgroup, 57 IRQ affinity, 48 RPS, 47 XPS, 1 IRQ default\); 3 warnings, 1 note \(at the end\)$/m,
    );
    // The warnings come before the allocation and the changes.
    expect(r.stdout.indexOf('Warnings:')).toBeLessThan(r.stdout.indexOf('Allocation:'));
    expect(r.stdout).toMatch(/ 49 × \/proc\/irq\/\{130-178\} smp_affinity_list: .* → 24,72 /);
    // A hex mask is followed by the CPUs it names.
    expect(r.stdout).toMatch(/default_smp_affinity: ffffffff,ffffffff,ffffffff \(CPUs 0-95\) → /);
    sample('plan-large-host', text);
    // --verbose and --json list every change.
    const all = cli(root, ['plan', '--dry-run', '--verbose']);
    const changes = JSON.parse(cli(root, ['plan', '--dry-run', '--json']).stdout).changes;
    expect(all.stdout.match(/^ +\d+\. /gm)?.length).toBe(changes.length);
    expect(all.stdout).toContain('/proc/irq/131 smp_affinity_list: 24 → 24,72');
  });
});

describe('docs/commands.md: the disks of a workload', () => {
  it("plan shows the disks under the broker's log.dirs", () => {
    // The R630's CPUs (intel-2s-ht-split) with its block devices, mounts and server.properties.
    const fixtures = join(import.meta.dirname, '../fixtures');
    const root = mkdtempSync(join(tmpdir(), 'isolate-doc-disks-'));
    cpSync(join(fixtures, 'sysfs/intel-2s-ht-split/sys/devices/system'), join(root, 'sys/devices/system'), {
      recursive: true,
    });
    cpSync(join(fixtures, 'disks/r630-kafka'), root, { recursive: true, verbatimSymlinks: true });
    mkdirSync(join(root, 'etc/isolate'));
    writeFileSync(
      join(root, 'etc/isolate/policy.yaml'),
      `apiVersion: isolate/v1
kind: HostPolicy
workloads:
  - name: kafka
    class: exclusive
    cores: 2
    match: { systemdUnit: kafka.service }
    disks: { kafkaConfig: /etc/kafka/server.properties }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
`,
    );
    const r = cli(root, ['plan', '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    const from = r.stdout.indexOf('Disks:');
    expect(from).toBeGreaterThan(0);
    const excerpt = r.stdout.slice(from, r.stdout.indexOf('\n\n', from) + 1);
    sample(
      'plan-disks',
      transcript(root, 'isolate plan --dry-run   # the Disks: section', {
        ...r,
        stdout: excerpt,
        stderr: '',
      }),
    );
  });
});

describe('docs/commands.md: coverage', () => {
  it('every sample in the doc is produced by this file', () => {
    const ids = sampleIds(DOC);
    expect(new Set(ids).size).toBe(ids.length);
    // Runs after the others (vitest keeps file order); the RAID ones may be skipped without captures.
    const raid = ids.filter((i) => i.startsWith('raid-'));
    expect(ids.filter((i) => !checked.has(i) && !(raid.includes(i) && !HAVE_FIXTURES))).toEqual([]);
  });
});
