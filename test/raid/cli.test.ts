// The real bundled CLI (dist/cli.js) against simulated hosts and saved captures: exit codes, JSON
// shape, one-line errors.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fixturePath, HAVE_FIXTURES } from './fixtures.js';
import {
  CV_9270,
  CV_9270_DETAIL,
  cwdWatch,
  IBBU08_DETAIL,
  M5015_BBU,
  makeHost,
  type SimHost,
} from './host.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
let CLI = join(repo, 'dist/cli.js');
let host: SimHost | null = null;
let snapshot: string | null = null;

beforeAll(() => {
  // The suite's global setup built dist/; other work in this tree may rebuild it at any time, so run
  // a private copy of that build (inside the repo so its external packages still resolve from
  // node_modules). Not built again here: a rebuild removes dist/ under the other files running now.
  snapshot = mkdtempSync(join(repo, 'test/raid/.cli-'));
  cpSync(join(repo, 'dist'), snapshot, { recursive: true });
  CLI = join(snapshot, 'cli.js');
});
afterAll(() => {
  if (snapshot) rmSync(snapshot, { recursive: true, force: true });
});
let newInCwd: () => string[] = () => [];
beforeEach(() => {
  newInCwd = cwdWatch();
});
afterEach(() => {
  host?.cleanup();
  host = null;
  // The CLI runs in the test's directory: vendor tools must not leave their logs here.
  expect(newInCwd()).toEqual([]);
});

const isolate = (args: string[]) =>
  execa(process.execPath, [CLI, ...args], {
    reject: false,
    env: { RAID_SIM_DIR: host?.dir ?? '', ISOLATE_RAID_LOCK: `${host?.dir ?? '/tmp'}/isolate-raid.lock` },
  });

describe.skipIf(!HAVE_FIXTURES)('isolate raid (bundled CLI)', () => {
  it('raid check: OK on a healthy CacheVault host in write-back', async () => {
    host = makeHost({
      drivers: ['megaraid_sas'],
      tools: { storcli: { controllers: [{ showAll: CV_9270, cv: CV_9270_DETAIL }] } },
    });
    const r = await isolate(['raid', 'check', '--root', host.root]);
    expect(r.stdout).toMatch(/^RAID OK - 1 controller/);
    expect(r.exitCode).toBe(0);
  });

  it('raid check: CRITICAL (2) for AWB, with the drive named on the first line', async () => {
    host = makeHost({
      drivers: ['megaraid_sas'],
      tools: { storcli: { controllers: [{ showAll: M5015_BBU, cache: { 0: 'RAWBD' } }] } },
    });
    const r = await isolate(['raid', 'check', '--root', host.root]);
    expect(r.stdout.split('\n')[0]).toMatch(/^RAID CRITICAL - storcli:\/c0\/v0: always-write-back \(AWB\)/);
    expect(r.exitCode).toBe(2);
  });

  it('raid check: UNKNOWN (3) when the tool hangs', async () => {
    host = makeHost({
      drivers: ['megaraid_sas'],
      tools: { storcli: { hang: 'show', controllers: [{ showAll: M5015_BBU }] } },
    });
    const r = await isolate(['raid', 'check', '--root', host.root, '--timeout', '1']);
    expect(r.stdout).toMatch(/^RAID UNKNOWN - storcli64 \/call show all J nolog timed out after 1s/);
    expect(r.exitCode).toBe(3);
  });

  it('raid show: a controller whose tool hung is unread, never "no controller found"', async () => {
    host = makeHost({
      drivers: ['megaraid_sas'],
      tools: { storcli: { hang: 'show', controllers: [{ showAll: M5015_BBU }] } },
    });
    const r = await isolate(['raid', 'show', '--root', host.root, '--timeout', '1']);
    expect(r.stdout).toMatch(
      /^no RAID controller could be read: whether one has a cache is unknown \(see below\)$/m,
    );
    expect(r.stdout).not.toMatch(/no hardware RAID controller with a cache was found/);
    expect(r.stdout).toMatch(/^UNKNOWN: storcli64 \/call show all J nolog timed out after 1s/m);
  });

  it('raid show: a host with only an HBA has no RAID controller, and says so', async () => {
    // An md-less host with one plain SATA HBA (ahci): nothing that has a controller cache.
    host = makeHost({ drivers: ['ahci'], tools: {} });
    const r = await isolate(['raid', 'show', '--root', host.root]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^no hardware RAID controller with a cache was found$/m);
  });

  it('two isolate processes never run vendor tools at the same time', async () => {
    host = makeHost({
      drivers: ['megaraid_sas'],
      tools: { storcli: { controllers: [{ showAll: CV_9270, cv: CV_9270_DETAIL }] } },
    });
    const runs = await Promise.all([1, 2, 3].map(() => isolate(['raid', 'check', '--root', host!.root])));
    expect(runs.map((r) => r.exitCode)).toEqual([0, 0, 0]);
    expect(host.log()).toHaveLength(6);
    expect(host.log().filter((l) => l.startsWith('CONCURRENT'))).toEqual([]);
  });

  it('raid show --json has the documented fields, null where the output is silent', async () => {
    host = makeHost({
      drivers: ['megaraid_sas'],
      tools: { storcli: { controllers: [{ showAll: M5015_BBU, bbu: IBBU08_DETAIL, cache: { 0: 'RWTD' } }] } },
    });
    const r = await isolate(['raid', 'show', '--json', '--root', host.root]);
    expect(r.exitCode).toBe(0);
    const doc = JSON.parse(r.stdout);
    const c = doc.controllers[0];
    expect(c).toMatchObject({
      id: 'storcli:/c0',
      tool: 'storcli',
      writeBackSafe: true,
      protection: {
        kind: 'bbu',
        present: true,
        healthy: true,
        charging: false,
        learnActive: false,
        replacementRequired: false,
        condition: 'healthy',
        faults: [],
        unrecognised: [],
      },
    });
    expect(c.logicalDrives[0]).toEqual(
      expect.objectContaining({
        id: 'v0',
        currentWrite: 'write-through',
        defaultWrite: 'unknown',
        readAhead: 'on',
        ioPolicy: 'direct',
        diskCache: 'disabled',
        writeBackIfBadBattery: false,
      }),
    );
    expect(Array.isArray(c.findings)).toBe(true);
  });

  it('raid parse audits saved outputs offline and runs nothing', async () => {
    const r = await isolate([
      'raid',
      'parse',
      '--tool',
      'megacli',
      '--json',
      '--check',
      fixturePath('megacli/check_raid-issue39-ldinfo-CachedBadBBU.txt'),
      fixturePath('megacli/netdata-AdpBbuCmd-recent.txt'),
    ]);
    const doc = JSON.parse(r.stdout);
    expect(doc.status).toBe('CRITICAL');
    expect(doc.controllers[0].logicalDrives[0]).toMatchObject({
      currentWrite: 'always-write-back',
      writeBackIfBadBattery: true,
    });
    expect(doc.controllers[0].protection).toMatchObject({ kind: 'bbu', state: 'Optimal', healthy: true });
    expect(r.exitCode).toBe(2);
  });

  it('raid parse reads a MegaCli -ShowSummary (format told from the content): write policy unknown, nothing proposed', async () => {
    const file = fixturePath('megacli/glpi-ShowSummary-H730P-bbu-healthy-2vd.txt');
    const r = await isolate(['raid', 'parse', '--tool', 'megacli', '--json', '--check', file]);
    const doc = JSON.parse(r.stdout);
    expect(doc.controllers).toHaveLength(1);
    const c = doc.controllers[0];
    expect(c).toMatchObject({
      id: 'megacli:/a0',
      model: 'PERC H730P Mini',
      writeBackSafe: false,
      readOnlyReason: expect.stringMatching(/-ShowSummary prints no cache policy/),
      protection: { kind: 'bbu', present: true, state: 'Healthy' },
    });
    expect(
      c.logicalDrives.map((d: Record<string, unknown>) => [d.target, d.raidLevel, d.state, d.currentWrite]),
    ).toEqual([
      ['megacli:/a0/l0', '1', 'Optimal', 'unknown'],
      ['megacli:/a0/l1', '1', 'Optimal', 'unknown'],
    ]);
    // Unknown, not OK and not a guess: the check says so and exits 3.
    expect(doc.status).toBe('UNKNOWN');
    expect(r.exitCode).toBe(3);
    const text = await isolate(['raid', 'parse', '--tool', 'megacli', file]);
    expect(text.stdout).toMatch(/write-back safe now: no \(MegaCli -ShowSummary prints no cache policy/);
    expect(text.stdout).toMatch(/megacli:\/a0\/l1 {2}1 Optimal {2}write unknown \(default unknown\)/);
    expect(text.exitCode).toBe(0);
  });

  it('one-line errors with exit code 1, like every other isolate command', async () => {
    const bad = await isolate(['raid', 'parse', '--tool', 'hpacu', '/x']);
    expect(bad.stderr.trim().split('\n')).toEqual([
      'isolate: raid parse: --tool hpacu: expected one of storcli, perccli, megacli, ssacli, arcconf',
    ]);
    expect(bad.exitCode).toBe(1);
    const missing = await isolate(['raid', 'parse', '--tool', 'ssacli', '/nonexistent/ssacli.txt']);
    expect(missing.stderr.trim()).toBe(
      'isolate: raid parse: cannot read /nonexistent/ssacli.txt (no such file); give saved output files of ssacli',
    );
    expect(missing.exitCode).toBe(1);
    const timeout = await isolate(['raid', 'show', '--timeout', 'soon']);
    expect(timeout.stderr.trim()).toBe('isolate: --timeout soon: expected seconds from 1 to 3600');
    expect(timeout.exitCode).toBe(1);
  });
});
