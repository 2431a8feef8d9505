// planRaid is pure: drive it with parsed real captures. Plus the inverse used for rollback and the
// per-tool success verdicts, checked against real captured verdicts.
import { describe, expect, it } from 'vitest';
import { inverseRaidChange, refusalOf } from '../../src/raid/apply.js';
import { setCommands } from '../../src/model/raid-commands.js';
import type { RaidObservation } from '../../src/model/raid.js';
import { parseSaved } from '../../src/raid/offline.js';
import { DEFAULT_RAID_POLICY, type RaidPolicy } from '../../src/model/raid-policy.js';
import { planRaid } from '../../src/planner/raid/plan.js';
import { fixture, HAVE_FIXTURES } from './fixtures.js';

type Tool = Parameters<typeof parseSaved>[0];
const observe = (tool: Tool, ...files: string[]): RaidObservation => ({
  ...parseSaved(
    tool,
    files.map((f) => ({ text: fixture(f), source: f })),
  ),
  mdArrays: [],
  hostAdapters: [],
});
const policy = (p: Partial<RaidPolicy>): RaidPolicy => ({ ...DEFAULT_RAID_POLICY, ...p });

describe.skipIf(!HAVE_FIXTURES)('planRaid on real captures', () => {
  it('nothing to do when the policy says unchanged', () => {
    expect(
      planRaid(
        DEFAULT_RAID_POLICY,
        observe('arcconf', 'arcconf/check_raid-issue47-zmm-not-installed-WB-on.txt'),
      ),
    ).toEqual({
      changes: [],
      warnings: [],
    });
  });

  it('already self-protecting write-back: no change (idempotent)', () => {
    const obs = observe('arcconf', 'arcconf/percona-arcconf-3405-battery-optimal.txt');
    expect(planRaid(policy({ writeCache: 'write-back' }), obs)).toEqual({ changes: [], warnings: [] });
  });

  it('arcconf wb with no ZMM: kept under a write-back policy, replaced under write-through', () => {
    const obs = observe('arcconf', 'arcconf/check_raid-issue47-zmm-not-installed-WB-on.txt');
    const wb = planRaid(policy({ writeCache: 'write-back' }), obs);
    expect(wb.changes).toEqual([]);
    expect(wb.warnings).toEqual([
      expect.stringMatching(/^arcconf:1\/ld0: always-write-back is configured \(unsafe\)/),
    ]);
    const wt = planRaid(policy({ writeCache: 'write-through' }), obs);
    expect(wt.changes).toEqual([
      {
        backend: 'raid',
        target: 'arcconf:1/ld0',
        setting: 'writeCache',
        from: 'always-write-back',
        to: 'write-through',
        note: 'replaces an unsafe always-write-back mode',
      },
    ]);
  });

  it('a BBU that needs replacement blocks write-back; write-through still allowed', () => {
    const obs = observe(
      'megacli',
      'megacli/percona-AdpAllInfo-PERC6i.txt',
      'megacli/check_raid-issue39-bbu-replacement-required.txt',
      'megacli/check_raid-3-ldinfo-WB.txt',
    );
    expect(planRaid(policy({ writeCache: 'write-back' }), obs).changes).toEqual([]);
    expect(planRaid(policy({ writeCache: 'write-through' }), obs).changes).toEqual([
      expect.objectContaining({ target: 'megacli:/a0/l0', from: 'write-back', to: 'write-through' }),
    ]);
  });

  it('controller-status unknown: no change at all', () => {
    const obs = observe('megacli', 'megacli/check_raid-3-ldinfo-WB.txt');
    const plan = planRaid(policy({ writeCache: 'write-through' }), obs);
    expect(plan.changes).toEqual([]);
    expect(plan.warnings).toEqual(['megacli:/a0: no RAID change: controller status unknown']);
  });

  it('storcli disk cache and read-ahead come from the capture, unsupported values warn', () => {
    const obs = observe('storcli', 'storcli/netdata-megaraid-controllers-info.json');
    const plan = planRaid(
      policy({ diskWriteCache: 'default', readAhead: 'adaptive', ioPolicy: 'direct' }),
      obs,
    );
    expect(plan.changes).toEqual([
      {
        backend: 'raid',
        target: 'storcli:/c0/v0',
        setting: 'diskWriteCache',
        from: 'disabled',
        to: 'default',
      },
    ]);
    expect(plan.warnings).toEqual([
      'storcli:/c0: readAhead=adaptive is not something isolate can set with storcli; left as is',
    ]);
  });

  it('ssacli drive write cache is one controller-wide change; read-ahead is not an ssacli setting', () => {
    const obs = observe('ssacli', 'ssacli/netdata-P400i-cache-disabled-battery-failed.txt');
    const plan = planRaid(policy({ diskWriteCache: 'enabled', readAhead: 'on' }), obs);
    expect(plan.changes).toEqual([
      {
        backend: 'raid',
        target: 'ssacli:slot=0',
        setting: 'diskWriteCache',
        from: 'disabled',
        to: 'enabled',
        note: 'applies to all drives on the controller',
      },
    ]);
    expect(plan.warnings).toEqual([
      'ssacli:slot=0: readAhead=on is not something isolate can set with ssacli; left as is',
    ]);
  });

  it('per-controller override wins', () => {
    const obs = observe('storcli', 'storcli/storcli-check-text-3ctrl-cv-bbu-nobbu.txt');
    const plan = planRaid(
      policy({ writeCache: 'write-through', controllers: { 'storcli:/c2': { writeCache: 'unchanged' } } }),
      obs,
    );
    expect(plan.changes).toEqual([]);
    const plan2 = planRaid(policy({ controllers: { 'storcli:/c2': { writeCache: 'write-through' } } }), obs);
    expect(plan2.changes.map((c) => [c.target, c.from, c.to])).toEqual([
      ['storcli:/c2/v0', 'write-back', 'write-through'],
    ]);
  });

  it('read-only controllers (SmartRAID, perccli2) are reported, not planned', () => {
    const smart = observe('arcconf', 'arcconf/check_raid-arcconf31000-SmartRAID3154-smartpqi.txt');
    const plan = planRaid(policy({ writeCache: 'write-through' }), smart);
    expect(plan.changes).toEqual([]);
    expect(plan.warnings[0]).toMatch(/^arcconf:1: no RAID change: SmartRAID/);
  });
});

describe.skipIf(!HAVE_FIXTURES)('tool verdicts on real captured outputs', () => {
  const r = (stdout: string, exitCode = 0) => ({ stdout, stderr: '', exitCode, timedOut: false });
  it('storcli: Command Status decides, not the exit code', () => {
    expect(refusalOf('storcli', r(fixture('storcli/pystorcli2-v1_del_J-success.json')))).toBeNull();
    expect(refusalOf('storcli', r(fixture('storcli/pystorcli2-set_good-failure-errcd255.json')))).toBe(
      'Set Drive Good Failed.: Operation not allowed.',
    );
    expect(refusalOf('perccli', r(fixture('perccli/phe-perccli-no-controller.json')))).toBe(
      'No Controller found',
    );
    expect(refusalOf('storcli', r('{"Controllers": [{"Command Sta'))).toMatch(/not JSON/);
  });
  it('MegaCli: the printed Exit Code decides', () => {
    expect(refusalOf('megacli', r(fixture('megacli/check_raid-3-ldinfo-WB.txt')))).toBeNull();
    expect(
      refusalOf('megacli', r(fixture('megacli/check_raid-issue32-bbu-absent-exit-0x22.txt'), 0x22)),
    ).toBe('Adapter 0: Get BBU Status Failed. (Exit Code 0x22)');
  });
  it('ssacli: an Error: line is a failure', () => {
    expect(refusalOf('ssacli', r(fixture('ssacli/check_raid-pr207-no-controllers.txt'), 1))).toBe(
      'No controllers detected.',
    );
    expect(refusalOf('ssacli', r('', 0))).toBeNull();
  });
  it('arcconf: success only with "Command completed successfully."', () => {
    expect(refusalOf('arcconf', r(fixture('arcconf/pyarcconf-SmartRAID3204-getversion.txt')))).toBeNull();
    expect(refusalOf('arcconf', r('Controllers found: 1\nInvalid cache mode.\n', 1))).toBe(
      'Controllers found: 1',
    );
  });
});

describe('set commands and rollback', () => {
  it('only self-protecting write-back words are ever produced', () => {
    const wb = (target: Parameters<typeof setCommands>[0]) => setCommands(target, 'writeCache', 'write-back');
    expect(wb({ tool: 'storcli', controller: '0', drive: '0' })).toEqual([
      ['/c0/v0', 'set', 'wrcache=WB', 'J', 'nolog'],
    ]);
    expect(wb({ tool: 'megacli', controller: '0', drive: '1' })).toEqual([
      ['-LDSetProp', 'NoCachedBadBBU', '-L1', '-a0', '-NoLog'],
      ['-LDSetProp', 'WB', '-L1', '-a0', '-NoLog'],
    ]);
    expect(wb({ tool: 'ssacli', controller: 'slot=0', drive: '1' })).toEqual([
      ['ctrl', 'slot=0', 'ld', '1', 'modify', 'caching=enable', 'forced'],
    ]);
    expect(wb({ tool: 'arcconf', controller: '1', drive: '0' })).toEqual([
      ['SETCACHE', '1', 'LOGICALDRIVE', '0', 'wbb', 'noprompt'],
    ]);
    expect(wb({ tool: 'perccli2', controller: '0', drive: '0' })).toBeNull();
    for (const tool of ['storcli', 'megacli', 'ssacli', 'arcconf'] as const) {
      expect(
        setCommands({ tool, controller: '0', drive: '0' }, 'writeCache', 'always-write-back'),
      ).toBeNull();
    }
  });

  it('inverse swaps from/to, restores WB (not AWB) after replacing always-write-back', () => {
    const c = {
      backend: 'raid' as const,
      target: 'storcli:/c0/v0',
      setting: 'writeCache' as const,
      from: 'write-through',
      to: 'write-back',
    };
    expect(inverseRaidChange(c)).toMatchObject({ from: 'write-back', to: 'write-through' });
    expect(inverseRaidChange({ ...c, from: 'always-write-back', to: 'write-through' })).toMatchObject({
      from: 'write-through',
      to: 'write-back',
    });
    expect(() => inverseRaidChange({ ...c, from: null })).toThrow(/before the change was not known/);
    expect(() => inverseRaidChange({ ...c, target: '/kafka.slice' })).toThrow(/not a RAID target/);
  });
});

describe.skipIf(!HAVE_FIXTURES)('rollback is always possible', () => {
  it('a value the tool cannot set back is not changed away from', () => {
    // P408i-a: "Configured Drive Write Cache Policy: Enable"; P212: "Drive Write Cache: Disabled"; MegaCli
    // "Disk Cache Policy : Disk's Default" cannot be set back with -EnDskCache/-DisDskCache.
    const obs = observe(
      'megacli',
      'megacli/percona-AdpAllInfo-PERC6i.txt',
      'megacli/netdata-AdpBbuCmd-recent.txt',
      'megacli/check_raid-3-ldinfo-WB.txt',
    );
    const plan = planRaid(policy({ diskWriteCache: 'disabled' }), obs);
    expect(plan.changes).toEqual([]);
    expect(plan.warnings).toEqual([
      'megacli:/a0/l0: diskWriteCache is default, which megacli cannot set back on rollback; left as is',
    ]);
  });
});
