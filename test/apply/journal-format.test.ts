// Journal format 2: every journal and baseline is stamped with the boot it was written in, per-device
// entries carry the device's identity, and format-1 files (an isolate from before) are read, an old
// baseline that may have lost entries with a note naming the file and what to check by hand. After a
// reboot, entries whose object is named by a PID/TID or a MAJ:MIN no longer known to be the same
// disk are skipped and said, never undone onto another task or disk.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyChanges, rollbackLast } from '../../src/apply/engine.js';
import {
  baselinePath,
  JOURNAL_FORMAT,
  journalPath,
  readBaseline,
  readJournal,
  writtenInThisBoot,
} from '../../src/apply/journal.js';
import { oneLine } from '../../src/model/errors.js';
import type { Change } from '../../src/model/plan.js';
import { ModelHost } from './model-host.js';

const BOOT_A = '0b2e4d6f-1111-4222-8333-944445555666';
const BOOT_B = '7c1d9e2a-aaaa-4bbb-8ccc-dddddddddddd';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'isolate-journal-format-'));
  mkdirSync(join(root, 'proc/100'), { recursive: true });
  mkdirSync(join(root, 'proc/200'), { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function put(rel: string, text: string): void {
  mkdirSync(dirname(join(root, rel)), { recursive: true });
  writeFileSync(join(root, rel), text);
}
const boot = (id: string) => put('proc/sys/kernel/random/boot_id', `${id}\n`);

const cg = (target: string, setting: string, to: string, hierarchy?: string): Change =>
  ({ backend: 'cgroupfs', target, setting, from: null, to, ...(hierarchy ? { hierarchy } : {}) }) as Change;

const CPUS = cg('/hadoop-yarn', 'cpuset.cpus', '2-7');
const MOVE = cg('/kafka.slice', 'cgroup.procs', '100');
const THREAD = cg('/kafka', 'tasks', '200', 'cpuset');
const CAP = (dev: string) => cg('/hadoop-yarn', 'io.max', `${dev} wbps=83886080`);
const DISKS = ['8:0', '8:16', '8:32', '259:0'];

/** The model host before isolate: every task in the root cgroup, io files empty. */
function fresh(): ModelHost {
  const m = new ModelHost();
  m.set(CPUS, '0-7');
  m.set(MOVE, '/');
  m.set(THREAD, '/');
  return m;
}

describe('format 2: boot stamp and device identity', () => {
  it('stamps the journal and the baseline with the boot, and each disk entry with its WWID or serial', async () => {
    boot(BOOT_A);
    put('sys/dev/block/8:16/device/wwid', 'naa.5000c500a1b2c3d4\n');
    put('sys/dev/block/259:0/wwid', 'eui.0025388b71b0a1c2\n');
    put('sys/dev/block/8:32/device/serial', 'WD-WCC4N1234567\n');
    const m = fresh();
    await applyChanges({ root, changes: [CPUS, ...DISKS.map(CAP)], executors: { cgroupfs: m } });
    const j = await readJournal(root);
    expect(j?.version).toBe(JOURNAL_FORMAT);
    expect(j?.boot).toBe(BOOT_A);
    expect(j?.entries.map((e) => [e.change.to.split(' ')[0], e.identity])).toEqual([
      ['2-7', undefined],
      ['8:0', 'unknown'],
      ['8:16', 'wwid:naa.5000c500a1b2c3d4'],
      ['8:32', 'serial:WD-WCC4N1234567'],
      ['259:0', 'wwid:eui.0025388b71b0a1c2'],
    ]);
    expect(writtenInThisBoot(root, j!)).toBe(true);
    // The agent's next apply folds it: the baseline carries the boot, each entry its own.
    await applyChanges({
      root,
      changes: [cg('/hadoop-yarn', 'cpuset.cpus', '3-7')],
      executors: { cgroupfs: m },
    });
    const b = JSON.parse(readFileSync(baselinePath(root), 'utf8'));
    expect(b.version).toBe(2);
    expect(b.boot).toBe(BOOT_A);
    expect(new Set(b.entries.map((e: { boot: string }) => e.boot))).toEqual(new Set([BOOT_A]));

    boot(BOOT_B);
    expect(writtenInThisBoot(root, j!)).toBe(false);
    rmSync(join(root, 'proc/sys/kernel/random/boot_id'));
    expect(writtenInThisBoot(root, j!)).toBe('unknown');
  });

  it('an unreadable or malformed boot_id is recorded as unknown', async () => {
    boot('not-a-boot-id');
    await applyChanges({ root, changes: [CPUS], executors: { cgroupfs: fresh() } });
    const j = await readJournal(root);
    expect(j?.boot).toBe('unknown');
    expect(writtenInThisBoot(root, j!)).toBe('unknown');
  });

  it('after a reboot, skips process and thread moves and disks not known to be the same, naming each; restores the rest', async () => {
    boot(BOOT_A);
    put('sys/dev/block/8:16/device/wwid', 'naa.5000c500a1b2c3d4\n');
    put('sys/dev/block/8:32/device/wwid', 'naa.5000c500deadbeef\n');
    put('sys/dev/block/259:0/wwid', 'eui.0025388b71b0a1c2\n');
    const m = fresh();
    m.set(CAP('8:16'), '8:16 rbps=max wbps=max riops=5000 wiops=max');
    const before = m.bytes();
    await applyChanges({
      root,
      changes: [MOVE, THREAD, CPUS, ...DISKS.map(CAP)],
      executors: { cgroupfs: m },
    });

    // Rebooted: another disk answers at 8:32 now, and the same PID and TID name other tasks.
    boot(BOOT_B);
    put('sys/dev/block/8:32/device/wwid', 'naa.5000c500feedface\n');
    const r = await rollbackLast({ root, executors: { cgroupfs: m } });
    const was = `written in boot ${BOOT_A}, host is now in boot ${BOOT_B}`;
    expect(r.notes.sort()).toEqual(
      [
        `${was}: device 8:0 of /hadoop-yarn io.max not identity-checked (journaled unknown, now unknown), skipped`,
        `${was}: device 8:32 of /hadoop-yarn io.max not identity-checked (journaled wwid:naa.5000c500deadbeef, now wwid:naa.5000c500feedface), skipped`,
        `${was}: process 100 in /kafka.slice cgroup.procs not identity-checked, skipped`,
        `${was}: thread 200 in /kafka (cpuset) tasks not identity-checked, skipped`,
      ].sort(),
    );
    for (const n of r.notes) expect(oneLine(n)).toBe(n);
    // Restored: the CPUs (a cgroup path survives a reboot) and the disks whose WWID matched.
    expect(await m.read(CPUS)).toBe('0-7');
    expect(await m.read(CAP('8:16'))).toBe('8:16 rbps=max wbps=max riops=5000 wiops=max');
    expect(await m.read(CAP('259:0'))).toBe('259:0 none');
    // Left: what could not be checked.
    expect(await m.read(MOVE)).toBe('/kafka.slice');
    expect(await m.read(CAP('8:32'))).toBe('8:32 wbps=83886080');
    expect(m.bytes()).not.toBe(before);
    expect((await readJournal(root))?.state).toBe('rolled-back');
    expect((await rollbackLast({ root, executors: { cgroupfs: m } })).nothing).toBe(true);
  });

  it('a process moved again after a reboot is its own entry: the new move is undone, the old one skipped', async () => {
    boot(BOOT_A);
    const m = fresh();
    await applyChanges({ root, changes: [MOVE], executors: { cgroupfs: m } });
    // The reboot put every task back in the root cgroup; PID 100 is another process, moved again.
    boot(BOOT_B);
    m.set(MOVE, '/system.slice');
    await applyChanges({ root, changes: [MOVE], executors: { cgroupfs: m } });
    const r = await rollbackLast({ root, executors: { cgroupfs: m } });
    expect(await m.read(MOVE)).toBe('/system.slice');
    expect(r.undone).toBe(1);
    expect(r.notes).toEqual([
      `written in boot ${BOOT_A}, host is now in boot ${BOOT_B}: process 100 in /kafka.slice cgroup.procs not identity-checked, skipped`,
    ]);
  });
});

/** A format-1 file as the isolate before this one wrote it: no boot, entries keyed without devices. */
function format1(id: string, state: string, entries: { change: Change; previous: string | null }[]) {
  return `${JSON.stringify(
    {
      version: 1,
      id,
      pid: 4242,
      startedAt: '2026-11-01T00:00:00.000Z',
      updatedAt: '2026-11-01T00:00:00.000Z',
      state,
      entries: entries.map((e, i) => ({ seq: i + 1, ...e, status: 'done', at: '2026-11-01T00:00:00.000Z' })),
    },
    null,
    1,
  )}\n`;
}

describe('format 1 (an older isolate) is read', () => {
  it('a journal of one apply reads as it was written, boot unknown, and rolls back without a note', async () => {
    const m = fresh();
    m.set(CPUS, '2-7');
    m.set(CAP('8:16'), '8:16 wbps=83886080');
    put(
      'var/lib/isolate/journal.json',
      format1('20261101T000000000Z-4242', 'applied', [
        { change: CPUS, previous: '0-7' },
        { change: CAP('8:16'), previous: '8:16 none' },
      ]),
    );
    const j = await readJournal(root);
    expect(j?.version).toBe(JOURNAL_FORMAT);
    expect(j?.caveats).toBeUndefined();
    expect(writtenInThisBoot(root, j!)).toBe('unknown');
    boot(BOOT_B);
    const r = await rollbackLast({ root, executors: { cgroupfs: m } });
    expect(r.notes).toEqual([]);
    expect(await m.read(CAP('8:16'))).toBe('8:16 none');
    expect(await m.read(CPUS)).toBe('0-7');
    expect(JSON.parse(readFileSync(journalPath(root), 'utf8')).version).toBe(2);
  });

  it('a baseline without per-device, thread or v1 entries cannot have lost any: read without a note', async () => {
    put(
      'var/lib/isolate/baseline.json',
      format1('baseline-x', 'applied', [
        { change: CPUS, previous: '0-7' },
        { change: MOVE, previous: '/' },
      ]),
    );
    expect((await readBaseline(root))?.caveats).toBeUndefined();
  });

  it('a baseline that may have lost devices is read: rollback restores what it lists and names what to check', async () => {
    const m = fresh();
    m.set(CPUS, '2-7');
    for (const d of DISKS) m.set(CAP(d), `${d} wbps=83886080`);
    // The old fold kept one device of the four.
    const file = baselinePath(root);
    put(
      'var/lib/isolate/baseline.json',
      format1('baseline-x', 'applied', [
        { change: CPUS, previous: '0-7' },
        { change: CAP('8:16'), previous: '8:16 none' },
        { change: THREAD, previous: '/' },
      ]),
    );
    const caveat = `baseline ${file} was folded by an older isolate (journal format 1), which kept one device, thread or v1 hierarchy per setting: rollback restores the ones it lists; check the others of /hadoop-yarn io.max, /kafka (cpuset) tasks by hand`;
    expect((await readBaseline(root))?.caveats).toEqual([caveat]);
    // The agent's next correction keeps the caveat in the (now format-2) baseline.
    await applyChanges({
      root,
      changes: [cg('/kafka.slice', 'cpuset.cpus', '0-1')],
      executors: { cgroupfs: m },
    });
    await applyChanges({
      root,
      changes: [cg('/kafka.slice', 'cpuset.cpus', '0-2')],
      executors: { cgroupfs: m },
    });
    const b = JSON.parse(readFileSync(file, 'utf8'));
    expect([b.version, b.caveats]).toEqual([2, [caveat]]);

    const r = await rollbackLast({ root, executors: { cgroupfs: m } });
    expect(r.notes).toEqual([caveat]);
    expect(await m.read(CPUS)).toBe('0-7');
    expect(await m.read(CAP('8:16'))).toBe('8:16 none');
    expect(await m.read(CAP('8:32'))).toBe('8:32 wbps=83886080'); // lost by the old fold: named, not restored
  });
});
