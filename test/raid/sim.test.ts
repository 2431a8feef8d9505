// End-to-end against vendor simulators that replay real captures and model the tools' set syntax:
// observe → plan → apply → verify, and every refusal the safety rules require.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserError } from '../../src/model/errors.js';
import type { Change } from '../../src/model/plan.js';
import { applyRaidChange, inverseRaidChange } from '../../src/raid/apply.js';
import { resetHungTools } from '../../src/raid/exec.js';
import { observeRaid } from '../../src/raid/observe.js';
import { DEFAULT_RAID_POLICY, type RaidPolicy } from '../../src/model/raid-policy.js';
import { planRaid } from '../../src/planner/raid/plan.js';
import { checkVerdict } from '../../src/audit/raid.js';
import { HAVE_FIXTURES } from './fixtures.js';
import {
  CV_9270,
  CV_9270_DETAIL,
  cwdWatch,
  IBBU08_DETAIL,
  M5015_BBU,
  MR216I_NO_BATTERY,
  makeHost,
  type SimHost,
} from './host.js';

const policy = (p: Partial<RaidPolicy>): RaidPolicy => ({ ...DEFAULT_RAID_POLICY, ...p });
const WB = policy({ writeCache: 'write-back' });
const WT = policy({ writeCache: 'write-through' });

let host: SimHost | null = null;
const opts = () => ({ root: host!.root, timeoutMs: 10_000 });
const sets = () => host!.log().filter((l) => / set |SetProp|modify|SETCACHE/.test(l));

let newInCwd: () => string[] = () => [];
beforeEach(() => {
  resetHungTools();
  newInCwd = cwdWatch();
});
afterEach(() => {
  host?.cleanup();
  host = null;
  expect(newInCwd()).toEqual([]);
});

async function planOn(p: RaidPolicy) {
  const obs = await observeRaid(opts());
  return { obs, ...planRaid(p, obs) };
}

describe.skipIf(!HAVE_FIXTURES)('storcli/perccli simulator', () => {
  it('enables WB on a healthy BBU, verifies it, and is idempotent', async () => {
    host = makeHost({
      drivers: ['megaraid_sas'],
      tools: { storcli: { controllers: [{ showAll: M5015_BBU, bbu: IBBU08_DETAIL, cache: { 0: 'RWTD' } }] } },
    });
    const { obs, changes, warnings } = await planOn(WB);
    expect(obs.controllers[0]?.writeBackSafe).toBe(true);
    expect(warnings).toEqual([]);
    expect(changes).toEqual([
      expect.objectContaining({
        backend: 'raid',
        target: 'storcli:/c0/v0',
        setting: 'writeCache',
        from: 'write-through',
        to: 'write-back',
      }),
    ]);
    await applyRaidChange(changes[0]!, opts());
    expect(sets()).toEqual(['storcli /c0/v0 set wrcache=WB J nolog']);
    // Re-read after the set, from the simulator's new state, with the BBU's own detail.
    expect(host.log().slice(-2)).toEqual([
      'storcli /c0 show all J nolog',
      'storcli /c0/bbu show all J nolog',
    ]);
    const again = await planOn(WB);
    expect(again.changes).toEqual([]);
    expect(again.obs.controllers[0]?.logicalDrives[0]?.currentWrite).toBe('write-back');
    // Applying the same change again is a no-op (idempotent apply).
    await applyRaidChange(changes[0]!, opts());
    expect(sets()).toHaveLength(1);
    expect(host.log().join('\n')).not.toMatch(/AWB/i);
  });

  it('enables WB on a healthy CacheVault after reading /c0/cv for "Replacement required"', async () => {
    host = makeHost({
      drivers: ['megaraid_sas'],
      tools: { storcli: { controllers: [{ showAll: CV_9270, cv: CV_9270_DETAIL, cache: { 0: 'RWTD' } }] } },
    });
    const { obs, changes } = await planOn(WB);
    expect(host.log()).toContain('storcli /c0/cv show all J nolog');
    expect(obs.controllers[0]?.protection).toMatchObject({
      kind: 'cachevault',
      healthy: true,
      replacementRequired: false,
    });
    expect(changes).toHaveLength(1);
    await applyRaidChange(changes[0]!, opts());
    expect(sets()).toEqual(['storcli /c0/v0 set wrcache=WB J nolog']);
    expect(host.state('storcli')).toMatchObject({ controllers: [{ cache: { 0: 'RWBD' } }] });
  });

  it('refuses a CacheVault that needs replacement', async () => {
    host = makeHost({
      drivers: ['megaraid_sas'],
      tools: {
        storcli: {
          controllers: [{ showAll: CV_9270, cv: CV_9270_DETAIL, cvReplacement: 'Yes', cache: { 0: 'RWTD' } }],
        },
      },
    });
    const { changes, warnings } = await planOn(WB);
    expect(changes).toEqual([]);
    expect(warnings.join('\n')).toMatch(/needs replacement/);
  });

  it.each([
    ['failed battery', { bbuState: 'Failed' }, /protection unit failed \(State: Failed\)/],
    ['charging battery', { bbuStatus: 8 }, /charging/],
  ])('refuses write-back with a %s and changes nothing', async (_name, extra, why) => {
    host = makeHost({
      drivers: ['megaraid_sas'],
      tools: {
        storcli: {
          controllers: [{ showAll: M5015_BBU, bbu: IBBU08_DETAIL, cache: { 0: 'RWTD' }, ...extra }],
        },
      },
    });
    const { changes, warnings } = await planOn(WB);
    expect(changes).toEqual([]);
    expect(warnings.join('\n')).toMatch(why);
    // Even a hand-written change is refused at apply time, before any set.
    const forged: Change = {
      backend: 'raid',
      target: 'storcli:/c0/v0',
      setting: 'writeCache',
      from: 'write-through',
      to: 'write-back',
    };
    await expect(applyRaidChange(forged, opts())).rejects.toThrow(UserError);
    expect(sets()).toEqual([]);
  });

  it('refuses write-back without a battery (Energy Pack Absent)', async () => {
    host = makeHost({
      drivers: ['megaraid_sas'],
      tools: { storcli: { controllers: [{ showAll: MR216I_NO_BATTERY }] } },
    });
    const { changes, warnings } = await planOn(WB);
    expect(changes).toEqual([]);
    expect(warnings.join('\n')).toMatch(/no battery/);
    await expect(
      applyRaidChange(
        {
          backend: 'raid',
          target: 'storcli:/c0/v239',
          setting: 'writeCache',
          from: 'write-through',
          to: 'write-back',
        },
        opts(),
      ),
    ).rejects.toThrow(/refusing to enable write-back/);
    expect(sets()).toEqual([]);
  });

  it('two controllers with different states: only the safe one changes', async () => {
    host = makeHost({
      drivers: ['megaraid_sas', 'megaraid_sas'],
      tools: {
        storcli: {
          controllers: [
            { showAll: M5015_BBU, bbu: IBBU08_DETAIL, cache: { 0: 'RWTD' } },
            { showAll: MR216I_NO_BATTERY },
          ],
        },
      },
    });
    const { obs, changes, warnings } = await planOn(WB);
    expect(obs.controllers.map((c) => [c.id, c.writeBackSafe])).toEqual([
      ['storcli:/c0', true],
      ['storcli:/c1', false],
    ]);
    expect(changes.map((c) => c.target)).toEqual(['storcli:/c0/v0']);
    expect(warnings).toEqual([expect.stringMatching(/^storcli:\/c1\/v239: not enabling write-back/)]);
    for (const c of changes) await applyRaidChange(c, opts());
    expect(sets()).toEqual(['storcli /c0/v0 set wrcache=WB J nolog']);
  });

  it('reports AWB as CRITICAL, never sets it, and replaces it only when the policy asks for write-through', async () => {
    host = makeHost({
      drivers: ['megaraid_sas'],
      tools: {
        storcli: { controllers: [{ showAll: M5015_BBU, bbu: IBBU08_DETAIL, cache: { 0: 'RAWBD' } }] },
      },
    });
    const first = await planOn(WB);
    expect(checkVerdict(first.obs).status).toBe('CRITICAL');
    expect(first.changes).toEqual([]);
    expect(first.warnings.join('\n')).toMatch(/always-write-back/);
    const second = await planOn(WT);
    expect(second.changes).toEqual([
      expect.objectContaining({ from: 'always-write-back', to: 'write-through' }),
    ]);
    await applyRaidChange(second.changes[0]!, opts());
    expect(sets()).toEqual(['storcli /c0/v0 set wrcache=WT J nolog']);
    // Rolling that back restores the self-protecting WB, never AWB.
    const undo = inverseRaidChange(second.changes[0]!);
    expect(undo).toMatchObject({ from: 'write-through', to: 'write-back' });
    await applyRaidChange(undo, opts());
    expect(sets()).toEqual([
      'storcli /c0/v0 set wrcache=WT J nolog',
      'storcli /c0/v0 set wrcache=WB J nolog',
    ]);
    expect(host.log().join('\n')).not.toMatch(/wrcache=AWB/i);
  });

  it('a hanging storcli times out: clear message, nothing changed, check UNKNOWN', async () => {
    host = makeHost({
      drivers: ['megaraid_sas'],
      tools: {
        storcli: {
          hang: 'show',
          controllers: [{ showAll: M5015_BBU, bbu: IBBU08_DETAIL, cache: { 0: 'RWTD' } }],
        },
      },
    });
    // The tool's own timeout stopped it (the message below), not the test's.
    const obs = await observeRaid({ root: host.root, timeoutMs: 1500 });
    expect(obs.controllers).toEqual([]);
    expect(obs.findings.map((f) => f.message).join('\n')).toMatch(
      /storcli64 \/call show all J nolog timed out after 2s.*nothing will be changed/,
    );
    expect(checkVerdict(obs).status).toBe('UNKNOWN');
    expect(planRaid(WB, obs).changes).toEqual([]);
  });

  it('a set that hangs is killed, not verified, and reported', async () => {
    host = makeHost({
      drivers: ['megaraid_sas'],
      tools: {
        storcli: {
          hang: ' set ',
          controllers: [{ showAll: M5015_BBU, bbu: IBBU08_DETAIL, cache: { 0: 'RWTD' } }],
        },
      },
    });
    const { changes } = await planOn(WB);
    // 4 s: time for the simulator to start and log the call it hangs in, however busy the machine.
    const err = await applyRaidChange(changes[0]!, { root: host.root, timeoutMs: 4000 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).message).toMatch(
      /storcli:\/c0\/v0: storcli64 \/c0\/v0 set wrcache=WB J nolog timed out .*nothing further was changed/,
    );
    expect(host.log().at(-1)).toBe('storcli /c0/v0 set wrcache=WB J nolog');
    // The hung tool is not called again in this run.
    await expect(observeRaid({ root: host.root, timeoutMs: 1500 })).resolves.toMatchObject({
      controllers: [],
    });
    expect(host.log().at(-1)).toBe('storcli /c0/v0 set wrcache=WB J nolog');
  });

  it.each([
    ['garbage', { garbage: 'show' }],
    ['truncated', { truncate: 700, truncateOn: 'show' }],
  ])('%s output is unknown and changes nothing', async (_name, extra) => {
    host = makeHost({
      drivers: ['megaraid_sas'],
      tools: {
        storcli: {
          ...extra,
          controllers: [{ showAll: M5015_BBU, bbu: IBBU08_DETAIL, cache: { 0: 'RWTD' } }],
        },
      },
    });
    const { obs, changes } = await planOn(WB);
    expect(obs.controllers).toEqual([]);
    expect(
      obs.findings.some(
        (f) => f.severity === 'unknown' && /not valid JSON|not storcli output/.test(f.message),
      ),
    ).toBe(true);
    expect(checkVerdict(obs).code).toBe(3);
    expect(changes).toEqual([]);
    expect(sets()).toEqual([]);
  });

  it('"No Controller found" from perccli is reported, not an error', async () => {
    host = makeHost({ drivers: ['megaraid_sas'], tools: { perccli: { controllers: [] } } });
    const obs = await observeRaid(opts());
    expect(obs.controllers).toEqual([]);
    const text = obs.findings.map((f) => `${f.severity} ${f.message}`).join('\n');
    expect(text).toMatch(/info perccli: No Controller found/);
    expect(text).toMatch(
      /warning host0: megaraid_sas RAID controller but storcli\/perccli\/megacli found no controller/,
    );
  });

  it('perccli2 (mpi3mr) controllers are read-only: reported, never set', async () => {
    host = makeHost({
      drivers: ['mpi3mr'],
      tools: { perccli2: { controllers: [{ showAll: 'perccli/perccli2-status-H965i-energy-pack.json' }] } },
    });
    const { obs, changes, warnings } = await planOn(WT);
    expect(obs.controllers[0]).toMatchObject({ id: 'perccli2:/c0', tool: 'perccli2', writeBackSafe: false });
    expect(obs.controllers[0]?.readOnlyReason).toMatch(/not verified/);
    expect(changes).toEqual([]);
    expect(warnings.join('\n')).toMatch(/perccli2:\/c0: no RAID change/);
    expect(host.log()).toEqual(['perccli2 /call show all J']);
    await expect(
      applyRaidChange(
        {
          backend: 'raid',
          target: 'perccli2:/c0/v1',
          setting: 'writeCache',
          from: 'write-back',
          to: 'write-through',
        },
        opts(),
      ),
    ).rejects.toThrow(/not changed|cannot be set/);
    expect(sets()).toEqual([]);
  });

  it('the simulator rejects wrong syntax like storcli does (Failure with exit status 0) and apply notices', async () => {
    host = makeHost({
      drivers: ['megaraid_sas'],
      tools: { storcli: { controllers: [{ showAll: M5015_BBU, bbu: IBBU08_DETAIL, cache: { 0: 'RWTD' } }] } },
    });
    const { execa } = await import('execa');
    const r = await execa(
      `${host.root}/opt/MegaRAID/storcli/storcli64`,
      ['/c0/v0', 'set', 'wrcache=XX', 'J'],
      // Like the real storcli, the simulator writes storcli.log where it runs: not in the test's cwd.
      { reject: false, cwd: host.root },
    );
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout).Controllers[0]['Command Status']).toMatchObject({
      Status: 'Failure',
      Description: 'Un-supported command',
    });
    const { refusalOf } = await import('../../src/raid/apply.js');
    expect(refusalOf('storcli', { stdout: r.stdout, stderr: '', exitCode: 0, timedOut: false })).toMatch(
      /Un-supported command/,
    );
  });

  it('a set that storcli refuses with exit status 0 is reported as failed', async () => {
    host = makeHost({
      drivers: ['megaraid_sas'],
      tools: {
        storcli: {
          refuse: { pdcache: 'SSD Pd is present' },
          controllers: [{ showAll: M5015_BBU, bbu: IBBU08_DETAIL }],
        },
      },
    });
    const { changes } = await planOn(policy({ diskWriteCache: 'enabled' }));
    expect(changes).toEqual([
      expect.objectContaining({ setting: 'diskWriteCache', from: 'disabled', to: 'enabled' }),
    ]);
    await expect(applyRaidChange(changes[0]!, opts())).rejects.toThrow(
      'storcli:/c0/v0: storcli64 /c0/v0 set pdcache=On J nolog failed: SSD Pd is present',
    );
    expect(host.log().at(-1)).toBe('storcli /c0/v0 set pdcache=On J nolog');
  });

  it('a controller without its tool gives a warning naming the tool to install', async () => {
    host = makeHost({ drivers: ['megaraid_sas', 'hpsa', 'aacraid'] });
    const obs = await observeRaid(opts());
    const text = obs.findings.map((f) => f.message).join('\n');
    expect(text).toMatch(
      /host0: megaraid_sas .*install storcli64 \(Broadcom\) or perccli64 \(Dell\) or MegaCli64/,
    );
    expect(text).toMatch(/host1: hpsa .*install ssacli \(HPE\)/);
    expect(text).toMatch(/host2: aacraid .*install arcconf/);
    expect(checkVerdict(obs).status).toBe('WARNING');
  });

  it('runs vendor calls one at a time even when asked concurrently', async () => {
    host = makeHost({
      drivers: ['megaraid_sas', 'aacraid'],
      tools: {
        storcli: { controllers: [{ showAll: CV_9270, cv: CV_9270_DETAIL }] },
        arcconf: {
          list: 'arcconf/pyarcconf-SmartRAID3204-list.txt',
          getconfig: 'arcconf/percona-arcconf-3405-battery-optimal.txt',
          getstatus: 'arcconf/check_raid-3-getstatus-task-in-progress.txt',
          ld: { 0: { write: 'wbb' } },
        },
      },
    });
    const results = await Promise.all([observeRaid(opts()), observeRaid(opts()), observeRaid(opts())]);
    expect(host.log().filter((l) => l.startsWith('CONCURRENT'))).toEqual([]);
    for (const r of results) expect(r.controllers.map((c) => c.id)).toEqual(['storcli:/c0', 'arcconf:1']);
  });
});

describe.skipIf(!HAVE_FIXTURES)('MegaCli simulator', () => {
  const megacli = (extra: Record<string, unknown> = {}) => ({
    adpAllInfo: 'megacli/percona-AdpAllInfo-PERC6i.txt',
    ldInfo: 'megacli/check_raid-3-ldinfo-WB.txt',
    bbu: 'megacli/check_raid-issue45-adpbbucmd-ibbu08-optimal.txt',
    vds: {
      0: { write: 'WriteThrough', read: 'ReadAhead', io: 'Direct', badBbu: 'No Write Cache if Bad BBU' },
    },
    ...extra,
  });

  it('sets NoCachedBadBBU then WB on a healthy BBU and verifies', async () => {
    host = makeHost({ drivers: ['megaraid_sas'], tools: { megacli: megacli() } });
    const { changes } = await planOn(WB);
    expect(changes).toEqual([
      expect.objectContaining({ target: 'megacli:/a0/l0', from: 'write-through', to: 'write-back' }),
    ]);
    await applyRaidChange(changes[0]!, opts());
    expect(sets()).toEqual([
      'megacli -LDSetProp NoCachedBadBBU -L0 -a0 -NoLog',
      'megacli -LDSetProp WB -L0 -a0 -NoLog',
    ]);
    expect(host.log().join('\n')).not.toMatch(/ CachedBadBBU|ForcedWB/);
  });

  it.each([
    [
      'replacement required',
      { bbu: 'megacli/check_raid-issue39-bbu-replacement-required.txt' },
      /needs replacement/,
    ],
    ['battery missing (0x22)', { bbu: 'megacli/check_raid-issue32-bbu-absent-exit-0x22.txt' }, /no battery/],
    ['charging', { bbu: 'megacli/check_raid-issue39-bbu-charging.txt' }, /charging/],
    ['learn cycle', { learnActive: true }, /learn cycle running/],
  ])('changes nothing with %s', async (_name, extra, why) => {
    host = makeHost({ drivers: ['megaraid_sas'], tools: { megacli: megacli(extra) } });
    const { changes, warnings } = await planOn(WB);
    expect(changes).toEqual([]);
    expect(warnings.join('\n')).toMatch(why);
    expect(sets()).toEqual([]);
  });

  it('rolling write-back back to write-through still works while a learn cycle runs', async () => {
    host = makeHost({ drivers: ['megaraid_sas'], tools: { megacli: megacli() } });
    const { changes } = await planOn(WB);
    await applyRaidChange(changes[0]!, opts());
    const state = host.state('megacli');
    writeFileSync(join(host.dir, 'state-megacli.json'), JSON.stringify({ ...state, learnActive: true }));
    await applyRaidChange(inverseRaidChange(changes[0]!), opts());
    expect(sets().slice(-2)).toEqual([
      'megacli -LDSetProp NoCachedBadBBU -L0 -a0 -NoLog',
      'megacli -LDSetProp WT -L0 -a0 -NoLog',
    ]);
    // ...but nothing moves toward write-back during the learn cycle.
    await expect(applyRaidChange(changes[0]!, opts())).rejects.toThrow(/learn cycle running/);
  });

  it('CachedBadBBU is CRITICAL and left alone for a write-back policy', async () => {
    host = makeHost({
      drivers: ['megaraid_sas'],
      tools: {
        megacli: megacli({
          vds: {
            0: {
              write: 'WriteBack',
              read: 'ReadAdaptive',
              io: 'Cached',
              badBbu: 'Write Cache OK if Bad BBU',
            },
          },
        }),
      },
    });
    const { obs, changes, warnings } = await planOn(WB);
    expect(checkVerdict(obs).code).toBe(2);
    expect(changes).toEqual([]);
    expect(warnings.join('\n')).toMatch(/always-write-back is configured/);
  });
});

describe.skipIf(!HAVE_FIXTURES)('arcconf and ssacli simulators', () => {
  const arcconf = (extra: Record<string, unknown> = {}) => ({
    list: 'arcconf/pyarcconf-SmartRAID3204-list.txt',
    getconfig: 'arcconf/percona-arcconf-3405-battery-optimal.txt',
    getstatus: 'arcconf/check_raid-3-getstatus-task-in-progress.txt',
    ld: { 0: { write: 'wt' } },
    ...extra,
  });

  it('arcconf: wbb, never wb', async () => {
    host = makeHost({ drivers: ['aacraid'], tools: { arcconf: arcconf() } });
    const { changes } = await planOn(WB);
    expect(changes).toEqual([
      expect.objectContaining({ target: 'arcconf:1/ld0', from: 'write-through', to: 'write-back' }),
    ]);
    await applyRaidChange(changes[0]!, opts());
    expect(sets()).toEqual(['arcconf SETCACHE 1 LOGICALDRIVE 0 wbb noprompt']);
    expect(host.log().join('\n')).not.toMatch(/ wb( |$)/);
  });

  it('arcconf: refused while the battery failed', async () => {
    host = makeHost({ drivers: ['aacraid'], tools: { arcconf: arcconf({ batteryFailed: true }) } });
    const { changes, warnings } = await planOn(WB);
    expect(changes).toEqual([]);
    expect(warnings.join('\n')).toMatch(/protection unit failed \(Status: Failed\)/);
  });

  it('ssacli: caching=enable with no-battery write cache disabled; nbwc enabled is CRITICAL and untouched', async () => {
    const base = {
      config: 'ssacli/netdata-P408i-a-Gen10-smartpqi.txt',
      caching: { 1: 'Disabled' },
      nbwc: 'Disabled',
    };
    host = makeHost({ drivers: ['smartpqi'], tools: { ssacli: base } });
    const { changes } = await planOn(WB);
    expect(changes).toEqual([expect.objectContaining({ target: 'ssacli:slot=0/ld1', to: 'write-back' })]);
    await applyRaidChange(changes[0]!, opts());
    expect(sets()).toEqual(['ssacli ctrl slot=0 ld 1 modify caching=enable forced']);
    host.cleanup();
    host = makeHost({
      drivers: ['smartpqi'],
      tools: { ssacli: { ...base, caching: { 1: 'Enabled' }, nbwc: 'Enabled' } },
    });
    const unsafe = await planOn(WB);
    expect(checkVerdict(unsafe.obs).status).toBe('CRITICAL');
    expect(unsafe.changes).toEqual([]);
    expect(host.log().join('\n')).not.toMatch(/nobatterywritecache=enable|nbwc=enable/);
  });
});

describe('software RAID only', () => {
  it('md arrays are reported as having no controller cache; check is OK', async () => {
    host = makeHost({
      mdstat:
        'Personalities : [raid1]\nmd0 : active raid1 sda1[0] sdb1[1]\n      56128 blocks [2/2] [UU]\n\nunused devices: <none>\n',
    });
    const obs = await observeRaid(opts());
    expect(obs.mdArrays).toEqual([
      { name: 'md0', level: 'raid1', devices: ['sda1', 'sdb1'], degraded: false, operation: null },
    ]);
    expect(obs.findings.map((f) => f.message)).toEqual(['software RAID md0 (raid1): no controller cache']);
    expect(checkVerdict(obs).code).toBe(0);
  });
});
