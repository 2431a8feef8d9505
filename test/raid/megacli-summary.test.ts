// MegaCli -ShowSummary (the three glpi captures): read for the controller, its BBU and its virtual
// drives, but it prints no cache policy and no adapter number, so the write policy is unknown and
// nothing is ever changed on its strength.
import { describe, expect, it } from 'vitest';
import type { RaidController, RaidObservation } from '../../src/model/raid.js';
import { DEFAULT_RAID_POLICY, type RaidPolicy } from '../../src/model/raid-policy.js';
import { assess } from '../../src/model/raid-safety.js';
import { planRaid } from '../../src/planner/raid/plan.js';
import { MegacliReader } from '../../src/raid/megacli/parse.js';
import { parseSaved } from '../../src/raid/offline.js';
import { fixture, HAVE_FIXTURES } from './fixtures.js';

const H310 = 'megacli/glpi-ShowSummary-H310-mini-no-bbu.txt';
const H710P = 'megacli/glpi-ShowSummary-H710P-bbu-healthy.txt';
const H730P = 'megacli/glpi-ShowSummary-H730P-bbu-healthy-2vd.txt';
const SUMMARIES = [H310, H710P, H730P];

const parse = (...files: string[]) =>
  parseSaved(
    'megacli',
    files.map((f) => ({ text: fixture(f), source: f })),
  );
const observe = (...files: string[]): RaidObservation => ({
  ...parse(...files),
  mdArrays: [],
  hostAdapters: [],
});
const everything: RaidPolicy = {
  ...DEFAULT_RAID_POLICY,
  writeCache: 'write-back',
  readAhead: 'on',
  ioPolicy: 'direct',
  diskWriteCache: 'disabled',
};

describe.skipIf(!HAVE_FIXTURES)('MegaCli -ShowSummary', () => {
  it.each(SUMMARIES)('%s: write policy unknown, read only, and no change planned', (file) => {
    const obs = observe(file);
    expect(obs.controllers).toHaveLength(1);
    const c = obs.controllers[0]!;
    expect(c.readOnlyReason).toMatch(/-ShowSummary prints no cache policy/);
    expect(c.writeBackSafe).toBe(false);
    for (const d of c.logicalDrives) {
      expect(d).toMatchObject({
        currentWrite: 'unknown',
        defaultWrite: 'unknown',
        writeBackIfBadBattery: null,
        readAhead: null,
        ioPolicy: null,
        diskCache: null,
      });
    }
    expect(c.findings.some((f) => f.severity === 'unknown')).toBe(true);
    for (const p of [everything, { ...everything, writeCache: 'write-through' as const }]) {
      const plan = planRaid(p, obs);
      expect(plan.changes).toEqual([]);
      expect(plan.warnings).toEqual([expect.stringMatching(/^megacli:\/a0: no RAID change: .*-ShowSummary/)]);
    }
  });

  it('controller status and model, BBU presence and word, drive count, level and state', () => {
    const [h310, h710p, h730p] = SUMMARIES.map((f) => parse(f).controllers[0]!) as [
      RaidController,
      RaidController,
      RaidController,
    ];
    expect([h310, h710p, h730p].map((c) => [c.model, c.status, c.healthy])).toEqual([
      ['PERC H310 Mini', 'Optimal', true],
      ['PERC H710P Mini', 'Optimal', true],
      ['PERC H730P Mini', 'Optimal', true],
    ]);
    // No BBU section at all in a complete output: no battery.
    expect(h310.protection).toMatchObject({ kind: 'none', present: false, condition: 'absent' });
    // "BBU Type : BBU" / "Status : Healthy": present, the word kept, not judged healthy from one word.
    expect(h710p.protection).toMatchObject({ kind: 'bbu', present: true, state: 'Healthy', healthy: null });
    expect(h730p.logicalDrives.map((d) => [d.id, d.name, d.raidLevel, d.state])).toEqual([
      ['l0', 'raid11', '1', 'Optimal'],
      ['l1', 'raid12', '1', 'Optimal'],
    ]);
  });

  it('the live reader (MegacliReader, exit status given) reads a summary the same way: unknown policy', () => {
    const reader = new MegacliReader();
    reader.add(fixture(H710P), 'MegaCli64 -LDInfo -Lall -aALL -NoLog', 0);
    const [c] = reader.result().controllers;
    expect(c?.logicalDrives.map((d) => d.currentWrite)).toEqual(['unknown']);
    expect(assess(c!).writeBackSafe).toBe(false);
    expect(c?.readOnlyReason).toMatch(/-ShowSummary/);
  });

  it('a summary cut short (no "Exit Code:") says nothing about the battery, not "absent"', () => {
    const text = fixture(H310).replace(/Exit Code: 0x00\s*$/, '');
    const out = parseSaved('megacli', [{ text, source: 'cut' }]);
    const c = out.controllers[0]!;
    expect(c.protection).toMatchObject({ present: null, condition: 'unknown' });
    expect(c.readOnlyReason).toMatch(/does not end with "Exit Code:"/);
  });

  it('with outputs that name their adapter, the summary is not merged (no adapter number to merge by)', () => {
    const out = parse(H710P, 'megacli/check_raid-3-ldinfo-WB.txt');
    expect(out.controllers.map((c) => c.id)).toEqual(['megacli:/a0']);
    // The drive comes from -LDInfo only; nothing of the summary was attached to adapter 0.
    expect(out.controllers[0]!.logicalDrives.map((d) => [d.target, d.currentWrite, d.name])).toEqual([
      ['megacli:/a0/l0', 'write-back', null],
    ]);
    expect(out.controllers[0]!.model).toBeNull();
    expect(out.findings).toEqual([
      expect.objectContaining({ severity: 'info', message: expect.stringMatching(/not merged/) }),
    ]);
  });

  it('a summary listing drives that no other output describes leaves them unknown', () => {
    const out = parse(H730P, 'megacli/percona-AdpAllInfo-PERC6i.txt');
    expect(out.controllers.every((c) => c.logicalDrives.length === 0)).toBe(true);
    expect(out.findings).toEqual([
      expect.objectContaining({ severity: 'unknown', message: expect.stringMatching(/2 virtual drives/) }),
    ]);
  });

  it('two Controller sections (no capture shows one): nothing is attributed, unknown', () => {
    const text = fixture(H310);
    const controller = /^ {8}Controller\n(?: {17}.*\n)+/m.exec(text.replace(/\r/g, ''))![0];
    const doubled = text.replace(/\r/g, '').replace(controller, controller + controller);
    const out = parseSaved('megacli', [{ text: doubled, source: 'two' }]);
    expect(out.controllers).toEqual([]);
    expect(out.findings).toEqual([
      expect.objectContaining({ severity: 'unknown', message: expect.stringMatching(/2 controllers/) }),
    ]);
  });
});
