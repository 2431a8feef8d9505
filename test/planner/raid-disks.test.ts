// Kafka's disks tied to the RAID section: the r630-kafka block devices (sda is a PERC virtual drive
// under /data1/kafka-logs and /srv/kafka) with RAID observations parsed from real vendor captures. The
// tie is by the OS disk the vendor tool names, never by order.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RaidObservation } from '../../src/model/raid.js';
import type { Plan } from '../../src/model/plan.js';
import { formatPlan } from '../../src/planner/format.js';
import { planToJson } from '../../src/planner/json.js';
import { tieDisksToRaid } from '../../src/planner/raid/disks.js';
import { parseSaved } from '../../src/raid/offline.js';
import { readWorkloadDisks } from '../../src/topology/disks.js';
import { CpuSet } from '../../src/model/cpuset.js';
import { fixture, HAVE_FIXTURES } from '../raid/fixtures.js';

const R630 = join(import.meta.dirname, '../fixtures/disks/r630-kafka');
const kafkaDisks = () =>
  readWorkloadDisks(R630, [
    { workload: 'kafka', source: { kind: 'kafkaConfig', file: '/etc/kafka/server.properties' } },
  ]);
type Tool = Parameters<typeof parseSaved>[0];
const observe = (...parts: [Tool, ...string[]][]): RaidObservation => {
  const obs: RaidObservation = { controllers: [], findings: [], mdArrays: [], hostAdapters: [] };
  for (const [tool, ...files] of parts) {
    const p = parseSaved(
      tool,
      files.map((f) => ({ text: fixture(f), source: f })),
    );
    obs.controllers.push(...p.controllers);
    obs.findings.push(...p.findings);
  }
  return obs;
};
const KAFKA = new Set(['kafka']);
const H755 = observe([
  'perccli',
  'perccli/perccli-status-H755-bbu-optimal.json',
  'perccli/perccli-status-H755-vall_show_all.json',
]);

describe.skipIf(!HAVE_FIXTURES)('exclusive workloads disks → RAID logical drives', () => {
  it('the r630 fixture: sda is a PERC virtual drive under two of kafka log dirs', () => {
    const sda = kafkaDisks()[0]!.disks.find((d) => d.name === 'sda');
    expect(sda?.raid).toEqual({ vendor: 'DELL', model: 'PERC H730 Mini', driver: 'megaraid_sas' });
  });

  it('perccli names sda for /c0/v239: tied, write-back with a healthy battery, no warning', () => {
    const t = tieDisksToRaid(kafkaDisks(), KAFKA, H755);
    expect(t.warnings).toEqual([]);
    expect(t.notes).toEqual([]);
    expect(t.ties).toEqual([
      {
        workload: 'kafka',
        disk: 'sda',
        dirs: ['/data1/kafka-logs'],
        dirsWord: 'log dirs',
        controller: 'perccli:/c0',
        model: 'PERC H755 Front',
        drive: 'perccli:/c0/v239',
        currentWrite: 'write-back',
        defaultWrite: 'write-back',
        // The controller's show all says Optimal, but only /c0/bbu show all prints the fault flags.
        protection: { kind: 'bbu', state: 'Optimal', condition: 'unknown' },
      },
    ]);
  });

  it('plan text and --json: the disk row names its drive and the RAID section what it holds', () => {
    const disks = kafkaDisks();
    const t = tieDisksToRaid(disks, KAFKA, H755);
    const plan: Plan = {
      allocation: { workloads: [], reserved: CpuSet.EMPTY },
      changes: [],
      warnings: [],
      notes: [],
      disks,
      raidDisks: t.ties,
    };
    const text = formatPlan(plan, 'p.yaml');
    expect(text).toContain(
      '    sda      8:0    0     mq-deadline  yes (HDD)   RAID virtual drive DELL PERC H730 Mini (megaraid_sas) = perccli:/c0/v239\n',
    );
    expect(text).toContain(
      [
        'RAID:',
        '  perccli:/c0 (PERC H755 Front): battery unknown (Optimal)',
        "    perccli:/c0/v239 (sda): holds kafka's log dirs /data1/kafka-logs; write cache write-back",
      ].join('\n'),
    );
    const json = planToJson(plan);
    expect(json.raidDisks).toEqual(t.ties);
    // Facts, not changes: the fingerprint is that of the same plan without them.
    expect(json.fingerprint).toBe(planToJson({ ...plan, raidDisks: undefined }).fingerprint);
  });

  it('a write-through drive (backup not present) under kafka: a warning saying why, pointing at the raid policy', () => {
    // arcconf GETCONFIG AL: "Disk Name : /dev/sda", write-cache Disabled, backup "Not Present".
    const obs = observe(['arcconf', 'arcconf/check_raid-issue128-backup-not-present-WT.txt']);
    const t = tieDisksToRaid(kafkaDisks(), KAFKA, obs);
    expect(t.ties.map((x) => [x.disk, x.drive, x.currentWrite])).toEqual([
      ['sda', 'arcconf:1/ld0', 'write-through'],
    ]);
    expect(t.warnings).toHaveLength(1);
    expect(t.warnings).toEqual([
      "raid: kafka's appends on sda (arcconf:1/ld0, log dirs /data1/kafka-logs) wait for the platters: the write cache is write-through — write-through is configured and its battery/flash backup is absent (Not Present): isolate will not enable write-back until the backup is known healthy (raid policy: docs/raid.md)",
    ]);
  });

  it('ssacli P212 + P410i name sda, sdb, sdc: all three of kafka disks tied, each write-through and said', () => {
    // P410i slot 0: LD 1 "Disk Name: /dev/sda", LD 2 "/dev/sdb"; P212 slot 5: LD 1 "/dev/sdc". Both
    // controllers: "Cache Ratio: 100% Read / 0% Write", no battery line: writes go through.
    const obs = observe(['ssacli', 'ssacli/netdata-P212_P410i-config-detail.txt']);
    const t = tieDisksToRaid(kafkaDisks(), KAFKA, obs);
    expect(t.ties.map((x) => [x.disk, x.drive, x.dirs, x.currentWrite])).toEqual([
      ['sda', 'ssacli:slot=0/ld1', ['/data1/kafka-logs'], 'write-through'],
      ['sdb', 'ssacli:slot=0/ld2', ['/data2/kafka-logs'], 'write-through'],
      ['sdc', 'ssacli:slot=5/ld1', ['/data2/kafka-logs'], 'write-through'],
    ]);
    expect(t.warnings).toHaveLength(3);
    expect(t.warnings[2]).toBe(
      "raid: kafka's appends on sdc (ssacli:slot=5/ld1, log dirs /data2/kafka-logs) wait for the platters: the write cache is write-through — configured write-back, but the controller writes through: the state of its battery/flash backup is unknown; it stays so until the backup is known healthy (raid policy: docs/raid.md)",
    );
  });

  it('storcli /call show all prints no OS disk: which disk could not be matched is said (info), not guessed', () => {
    const obs = observe(['storcli', 'storcli/netdata-megaraid-controllers-info.json']);
    expect(obs.controllers[0]!.logicalDrives).toHaveLength(1);
    const t = tieDisksToRaid(kafkaDisks(), KAFKA, obs);
    expect(t.ties).toEqual([]);
    expect(t.warnings).toEqual([]);
    expect(t.notes).toEqual([
      "raid: sda (kafka's log dirs) is a RAID virtual drive (DELL PERC H730 Mini, megaraid_sas), but the vendor tool's output names no OS disk for its logical drives (storcli/perccli print it only in /cN/vall show all, MegaCli never); its write cache is not tied to it (see isolate raid show)",
    ]);
  });

  it('two drives naming the same disk: unknown, no tie', () => {
    const obs = observe(
      [
        'perccli',
        'perccli/perccli-status-H755-bbu-optimal.json',
        'perccli/perccli-status-H755-vall_show_all.json',
      ],
      ['arcconf', 'arcconf/check_raid-issue128-backup-not-present-WT.txt'],
    );
    const t = tieDisksToRaid(kafkaDisks(), KAFKA, obs);
    expect(t.ties).toEqual([]);
    expect(t.warnings).toEqual([]);
    expect(t.notes).toEqual([
      "raid: sda (kafka's log dirs) is named by perccli:/c0/v239 and arcconf:1/ld0; which logical drive holds it is unknown",
    ]);
  });

  it('a batch workload on the same disk is not tied', () => {
    const t = tieDisksToRaid(kafkaDisks(), new Set(), H755);
    expect(t).toEqual({ ties: [], notes: [], warnings: [] });
  });
});
