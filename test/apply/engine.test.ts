// Engine logic (journal, order, rollback, recovery, lock) against an in-memory backend. Kernel
// semantics of the cgroupfs backend are proven in test/vm on a real kernel.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApplyFailedError, applyChanges, EXIT, rollbackLast } from '../../src/apply/engine.js';
import { type ChangeExecutor, StepError } from '../../src/apply/executor.js';
import { CgroupFsExecutor, sameValue } from '../../src/cgroup/cgroupfs.js';
import { errnoMeaning } from '../../src/cgroup/errno.js';
import { journalPath, readJournal, readJournalState, writeJournal } from '../../src/apply/journal.js';
import { acquireLock, lockPath } from '../../src/apply/lock.js';
import { UserError } from '../../src/model/errors.js';
import type { Change, RaidSetting } from '../../src/model/plan.js';

let root: string;

/**
 * A RAID-like backend kept in memory: key = target/setting, written short (`a/x`). The changes it
 * takes are real RAID changes (`mem:a` writeCache), as a journal's schema requires.
 */
const SETTING: Record<string, RaidSetting> = { x: 'writeCache', y: 'readAhead', z: 'ioPolicy' };
const SHORT = Object.fromEntries(Object.entries(SETTING).map(([k, v]) => [v, k]));

class MemExec implements ChangeExecutor {
  state = new Map<string, string>();
  writes: string[] = [];
  failOn?: (c: Change) => StepError | undefined;
  key(c: Change) {
    return `${c.target.replace(/^mem:/, '')}/${SHORT[c.setting]}`;
  }
  async read(c: Change) {
    return this.state.get(this.key(c)) ?? null;
  }
  satisfied(c: Change, live: string | null) {
    return live === c.to;
  }
  same(_c: Change, a: string | null, b: string | null) {
    return a === b;
  }
  async apply(c: Change) {
    const e = this.failOn?.(c);
    if (e) throw e;
    this.writes.push(`${this.key(c)}=${c.to}`);
    this.state.set(this.key(c), c.to);
    return {};
  }
  async undo(c: Change, previous: string | null) {
    this.writes.push(`undo ${this.key(c)}=${previous}`);
    if (previous === null) this.state.delete(this.key(c));
    else this.state.set(this.key(c), previous);
    return {};
  }
}

const ch = (target: string, setting: string, from: string | null, to: string): Change => ({
  backend: 'raid',
  target: `mem:${target}`,
  setting: SETTING[setting] as RaidSetting,
  from,
  to,
});

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'isolate-apply-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('applyChanges', () => {
  it('applies in order, journals previous values, and is idempotent', async () => {
    const m = new MemExec();
    m.state.set('a/x', '1');
    const changes = [ch('a', 'x', '1', '2'), ch('b', 'y', null, 'on')];
    const r = await applyChanges({ root, changes, executors: { raid: m } });
    expect(r.changed).toBe(2);
    expect(m.writes).toEqual(['a/x=2', 'b/y=on']);
    const j = await readJournal(root);
    expect(j?.state).toBe('applied');
    expect(j?.entries.map((e) => [e.previous, e.status])).toEqual([
      ['1', 'done'],
      [null, 'done'],
    ]);
    const again = await applyChanges({ root, changes, executors: { raid: m } });
    expect(again.changed).toBe(0);
    expect(m.writes).toHaveLength(2);
    expect((await readJournal(root))?.id).toBe(j?.id); // no-op leaves the journal alone
  });

  it('says each RAID step before it runs, for a terminal: a vendor tool may take seconds', async () => {
    const m = new MemExec();
    const said: string[] = [];
    const changes = [ch('a', 'x', null, 'wb'), ch('b', 'y', null, 'ra')];
    await applyChanges({
      root,
      changes,
      executors: { raid: m },
      progress: (step, total, c) => said.push(`${step}/${total} ${c.target}`),
    });
    expect(said).toEqual(['1/2 mem:a', '2/2 mem:b']);
  });

  it('rolls back in reverse order on failure and names the step and errno meaning', async () => {
    const m = new MemExec();
    m.state.set('a/x', '1');
    m.failOn = (c) =>
      c.target === 'mem:c'
        ? new StepError(`writing to c failed: ENOSPC (${errnoMeaning('cpuset.cpus', 'ENOSPC')})`, 'ENOSPC')
        : undefined;
    const changes = [ch('a', 'x', '1', '2'), ch('b', 'y', null, 'on'), ch('c', 'z', null, 'boom')];
    const err = await applyChanges({ root, changes, executors: { raid: m } }).catch((e) => e);
    expect(err).toBeInstanceOf(ApplyFailedError);
    expect(err.exitCode).toBe(EXIT.rolledBack);
    expect(err.message).toMatch(/step 3\/3/);
    expect(err.message).toMatch(/ENOSPC \(the cgroup has processes/);
    expect(err.message).toMatch(/rolled back/);
    expect(m.writes).toEqual(['a/x=2', 'b/y=on', 'undo c/z=null', 'undo b/y=null', 'undo a/x=1']);
    expect([...m.state.entries()]).toEqual([['a/x', '1']]);
    expect((await readJournal(root))?.state).toBe('rolled-back');
  });

  it('a read that fails is not "absent": refused before any write, or the step fails before its own', async () => {
    const eacces = () => Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
    // In pre-flight (the first read of every change): nothing is written, no journal entry made.
    const m = new MemExec();
    m.state.set('a/x', '1');
    const read = m.read.bind(m);
    m.read = async (c) => (c.target === 'mem:b' ? Promise.reject(eacces()) : read(c));
    const refused = await applyChanges({
      root,
      changes: [ch('a', 'x', '1', '2'), ch('b', 'y', null, 'on')],
      executors: { raid: m },
    }).catch((e) => e);
    expect(refused).toBeInstanceOf(UserError);
    expect(refused.message).toMatch(
      /cannot read .*mem:b.* before changing it \(EACCES: permission denied\); nothing was changed/,
    );
    expect(m.writes).toEqual([]);
    expect(await readJournal(root)).toBeNull();
    // Between pre-flight and the write (the step's own read): that step fails before its write, the
    // writes before it are undone, and the journal never records the unknown value as absent.
    const n = new MemExec();
    n.state.set('a/x', '1');
    const readN = n.read.bind(n);
    let reads = 0;
    n.read = async (c) => (c.target === 'mem:b' && ++reads > 1 ? Promise.reject(eacces()) : readN(c));
    const failed = await applyChanges({
      root,
      changes: [ch('a', 'x', '1', '2'), ch('b', 'y', null, 'on')],
      executors: { raid: n },
    }).catch((e) => e);
    expect(failed).toBeInstanceOf(ApplyFailedError);
    expect(failed.message).toMatch(/step 2\/2 .*EACCES/);
    expect(n.writes).toEqual(['a/x=2', 'undo a/x=1']);
    const j = await readJournal(root);
    expect(j?.entries.map((e) => e.change.target)).toEqual(['mem:a']);
  });

  it('reports an incomplete rollback with its own exit code', async () => {
    const m = new MemExec();
    m.failOn = (c) => (c.target === 'mem:b' ? new StepError('b failed', 'EIO') : undefined);
    m.undo = async (c) => {
      if (c.target === 'mem:a') throw new StepError('cannot undo a', 'EBUSY');
      return {};
    };
    const err = await applyChanges({
      root,
      changes: [ch('a', 'x', null, '1'), ch('b', 'y', null, '2')],
      executors: { raid: m },
    }).catch((e) => e);
    expect(err.exitCode).toBe(EXIT.rollbackIncomplete);
    expect(err.message).toMatch(/ROLLBACK INCOMPLETE/);
    expect((await readJournal(root))?.state).toBe('rollback-failed');
  });

  it('rollback restores the state from before the last apply', async () => {
    const m = new MemExec();
    m.state.set('a/x', '1');
    await applyChanges({
      root,
      changes: [ch('a', 'x', '1', '2'), ch('b', 'y', null, 'on')],
      executors: { raid: m },
    });
    const r = await rollbackLast({ root, executors: { raid: m } });
    expect(r.undone).toBe(2);
    expect([...m.state.entries()]).toEqual([['a/x', '1']]);
    expect((await rollbackLast({ root, executors: { raid: m } })).nothing).toBe(true);
  });

  it("rollback after several applies (the agent correcting drift) restores the host from before isolate's first", async () => {
    const m = new MemExec();
    m.state.set('a/x', '1');
    const apply = (changes: Change[]) => applyChanges({ root, changes, executors: { raid: m } });
    await apply([ch('a', 'x', '1', '2'), ch('b', 'y', null, 'on')]);
    // Drift: someone writes a/x by hand; the agent's next round puts its value back and adds c/z.
    m.state.set('a/x', '7');
    await apply([ch('a', 'x', '7', '2'), ch('c', 'z', null, 'z1')]);
    // A third round: only c/z moved on (a new policy), its first previous value must survive.
    await apply([ch('c', 'z', 'z1', 'z2')]);
    const r = await rollbackLast({ root, executors: { raid: m } });
    expect(r.undone).toBe(3);
    expect([...m.state.entries()]).toEqual([['a/x', '1']]);
    // Creations are undone last, in reverse order of when they were first made.
    expect(m.writes.filter((w) => w.startsWith('undo'))).toEqual([
      'undo c/z=null',
      'undo b/y=null',
      'undo a/x=1',
    ]);
    expect((await rollbackLast({ root, executors: { raid: m } })).nothing).toBe(true);
    // After a rollback the history starts again: the next rollback undoes only what came after it.
    await apply([ch('a', 'x', '1', '3')]);
    await apply([ch('b', 'y', null, 'off')]);
    await rollbackLast({ root, executors: { raid: m } });
    expect([...m.state.entries()]).toEqual([['a/x', '1']]);
  });

  it('a value the backend holds but has not put in force is made again, not taken for done', async () => {
    // systemd holding AllowedCPUs= it could not write into the unit's cgroup is the real case.
    class Held extends MemExec {
      inForce = new Set<string>();
      async notInForce(c: Change) {
        return this.inForce.has(this.key(c)) ? null : `${this.key(c)} not in the kernel`;
      }
      override async apply(c: Change) {
        const r = await super.apply(c);
        this.inForce.add(this.key(c));
        return r;
      }
    }
    const m = new Held();
    m.state.set('a/x', '2');
    m.state.set('b/y', 'on');
    m.inForce.add('b/y');
    const changes = [ch('a', 'x', '2', '2'), ch('b', 'y', 'on', 'on')];
    const r = await applyChanges({ root, changes, executors: { raid: m } });
    expect(r.steps.map((x) => x.status)).toEqual(['applied', 'unchanged']);
    expect(m.writes).toEqual(['a/x=2']);
    // Journaled with the value it held, which is what undo restores.
    expect((await readJournal(root))?.entries.map((e) => [e.change.target, e.previous])).toEqual([
      ['mem:a', '2'],
    ]);
    expect((await applyChanges({ root, changes, executors: { raid: m } })).changed).toBe(0);
    // Without the check the same state is taken for done: the test can fail.
    const plain = new MemExec();
    plain.state.set('a/x', '2');
    expect((await applyChanges({ root, changes: [changes[0]!], executors: { raid: plain } })).changed).toBe(
      0,
    );
  });

  it('what must be undone last (a controller) waits for every other undo and every staged commit, wherever it stands', async () => {
    // z plays the root's cgroup.subtree_control, y a systemd drop-in (staged until one reload).
    class Ordered extends MemExec {
      staged: string[] = [];
      undoLast(c: Change) {
        return c.setting === SETTING.z;
      }
      override async undo(c: Change, previous: string | null) {
        if (c.setting !== SETTING.y) return super.undo(c, previous);
        this.staged.push(`${this.key(c)}=${previous}`);
        return { pending: true };
      }
      async commitUndo() {
        for (const w of this.staged.splice(0)) {
          this.writes.push(`commit ${w}`);
          const [k, v] = w.split('=');
          if (v === 'null') this.state.delete(k!);
          else this.state.set(k!, v!);
        }
        return [];
      }
    }
    const m = new Ordered();
    m.state.set('c/z', 'memory');
    const apply = (changes: Change[]) => applyChanges({ root, changes, executors: { raid: m } });
    await apply([ch('c', 'z', 'memory', 'cpuset memory'), ch('a', 'x', null, '1'), ch('b', 'y', null, 'on')]);
    // The agent puts the controller back after something dropped it: its entry now comes last in
    // the folded journal, so plain reverse order would undo it first.
    m.state.set('c/z', 'memory');
    await apply([ch('c', 'z', 'memory', 'cpuset memory')]);
    await rollbackLast({ root, executors: { raid: m } });
    expect(m.writes.filter((w) => w.startsWith('undo') || w.startsWith('commit'))).toEqual([
      'undo a/x=null',
      'commit b/y=null',
      'undo c/z=memory',
    ]);
    expect([...m.state.entries()]).toEqual([['c/z', 'memory']]);
  });

  it("a value an earlier step made on isolate's behalf is journaled with its value from before the apply, and rollback restores it", async () => {
    // a/x plays a systemd property, c/z the root's cgroup.subtree_control that systemd enables for it.
    class Side extends MemExec {
      madeByOtherSteps(c: Change) {
        return c.setting === SETTING.z;
      }
      override async apply(c: Change) {
        const r = await super.apply(c);
        if (this.key(c) === 'a/x') this.state.set('c/z', 'cpuset memory');
        return r;
      }
    }
    const m = new Side();
    m.state.set('c/z', 'memory');
    const r = await applyChanges({
      root,
      changes: [ch('a', 'x', null, '2'), ch('c', 'z', 'memory', 'cpuset memory')],
      executors: { raid: m },
    });
    expect(r.steps.map((x) => [x.status, x.previous])).toEqual([
      ['applied', null],
      ['applied', 'memory'],
    ]);
    expect(m.writes).toEqual(['a/x=2']);
    await rollbackLast({ root, executors: { raid: m } });
    expect([...m.state.entries()]).toEqual([['c/z', 'memory']]);
    // Without the hook it is "unchanged" and the host keeps what the earlier step made.
    const plain = new (class extends Side {
      override madeByOtherSteps() {
        return false;
      }
    })();
    plain.state.set('c/z', 'memory');
    const root2 = await mkdtemp(path.join(tmpdir(), 'isolate-apply-'));
    try {
      await applyChanges({
        root: root2,
        changes: [ch('a', 'x', null, '2'), ch('c', 'z', 'memory', 'cpuset memory')],
        executors: { raid: plain },
      });
      await rollbackLast({ root: root2, executors: { raid: plain } });
      expect(plain.state.get('c/z')).toBe('cpuset memory');
    } finally {
      await rm(root2, { recursive: true, force: true });
    }
  });

  it('a rollback killed half-way is finished by the next one', async () => {
    const m = new MemExec();
    m.state.set('a/x', '1');
    const apply = (changes: Change[]) => applyChanges({ root, changes, executors: { raid: m } });
    await apply([ch('a', 'x', '1', '2')]);
    await apply([ch('b', 'y', null, 'on')]);
    m.failOn = undefined;
    let calls = 0;
    const flaky: ChangeExecutor = {
      ...m,
      read: (c) => m.read(c),
      satisfied: (c, l) => m.satisfied(c, l),
      same: (c, a, b) => m.same(c, a, b),
      apply: (c) => m.apply(c),
      undo: async (c, p) => {
        if (++calls === 1) throw new StepError('simulated failure', 'EIO');
        return m.undo(c, p);
      },
    };
    await expect(rollbackLast({ root, executors: { raid: flaky } })).rejects.toThrow(/did not complete/);
    expect((await readJournal(root))?.state).toBe('rollback-failed');
    const r = await rollbackLast({ root, executors: { raid: m } });
    expect(r.nothing).toBe(false);
    expect([...m.state.entries()]).toEqual([['a/x', '1']]);
  });

  it('completes the undo of an interrupted apply before anything else', async () => {
    const m = new MemExec();
    m.state.set('a/x', '2');
    m.state.set('b/y', 'on');
    // Journal as left by a kill -9 after the second write was recorded.
    await writeJournal(root, {
      version: 1,
      id: 'crashed',
      pid: 999999,
      startedAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      state: 'applying',
      entries: [
        { seq: 1, change: ch('a', 'x', '1', '2'), previous: '1', status: 'done' },
        { seq: 2, change: ch('b', 'y', null, 'on'), previous: null, status: 'pending' },
      ],
    });
    const r = await applyChanges({ root, changes: [ch('a', 'x', '1', '2')], executors: { raid: m } });
    expect(r.recovered?.undone).toBe(1); // the pending write is undone too, but not counted
    expect(r.changed).toBe(0); // caller must re-plan against the restored host
    expect([...m.state.entries()]).toEqual([['a/x', '1']]);
    expect((await readJournal(root))?.state).toBe('rolled-back');
  });

  it('refuses a saved plan when the host drifted', async () => {
    const m = new MemExec();
    m.state.set('a/x', 'other');
    const err = await applyChanges({
      root,
      changes: [ch('a', 'x', '1', '2')],
      requireFrom: true,
      executors: { raid: m },
    }).catch((e) => e);
    expect(err).toBeInstanceOf(UserError);
    expect(err.message).toMatch(/host changed since the plan was saved/);
    expect(m.writes).toEqual([]);
  });

  it('refuses the systemd backend', async () => {
    const err = await applyChanges({
      root,
      changes: [{ backend: 'systemd', target: 'kafka.service', setting: 'AllowedCPUs', from: '', to: '2-5' }],
      executors: { cgroupfs: new CgroupFsExecutor(root) },
    }).catch((e) => e);
    expect(err.message).toMatch(/no systemd backend is available/);
  });

  it('refuses cgroupfs changes without a cgroup v2 hierarchy', async () => {
    const err = await applyChanges({
      root,
      changes: [{ backend: 'cgroupfs', target: '/kafka', setting: 'mkdir', from: null, to: 'present' }],
      executors: { cgroupfs: new CgroupFsExecutor(root) },
    }).catch((e) => e);
    expect(err.exitCode).toBe(EXIT.refused);
    expect(err.message).toMatch(/not a cgroup v2 hierarchy/);
  });

  it('refuses memory.max below memory.current unless --force, naming the usage', async () => {
    const cg = path.join(root, 'sys/fs/cgroup');
    await mkdir(path.join(cg, 'batch'), { recursive: true });
    await writeFile(path.join(cg, 'cgroup.controllers'), 'cpuset cpu memory\n');
    await writeFile(path.join(cg, 'batch/memory.current'), `${3 * 2 ** 30}\n`);
    await writeFile(path.join(cg, 'batch/memory.max'), 'max\n');
    const changes: Change[] = [
      { backend: 'cgroupfs', target: '/batch', setting: 'memory.max', from: 'max', to: String(2 ** 30) },
    ];
    const executors = { cgroupfs: new CgroupFsExecutor(root) };
    const err = await applyChanges({ root, changes, executors }).catch((e) => e);
    expect(err.message).toMatch(/uses 3G \(3221225472 bytes\)/);
    expect(err.message).toMatch(/--force/);
    const ok = await applyChanges({ root, changes, force: true, executors });
    expect(ok.changed).toBe(1);
    expect((await readFile(path.join(cg, 'batch/memory.max'), 'utf8')).trim()).toBe(String(2 ** 30));
  });
});

describe('lock', () => {
  it('a second holder fails at once naming the PID; stale locks are taken over', async () => {
    const l = await acquireLock(root, 'apply');
    const err = await acquireLock(root, 'apply').catch((e) => e);
    expect(err.message).toContain(`PID ${process.pid}`);
    await l.release();
    await writeFile(
      lockPath(root),
      JSON.stringify({ pid: 2 ** 22 + 12345, start: null, since: 'x', command: 'apply' }),
    );
    const l2 = await acquireLock(root, 'apply');
    await l2.release();
  });
});

describe('journal', () => {
  it('is written atomically as JSON', async () => {
    const m = new MemExec();
    await applyChanges({ root, changes: [ch('a', 'x', null, '1')], executors: { raid: m } });
    const j = JSON.parse(await readFile(journalPath(root), 'utf8'));
    expect(j.version).toBe(2);
  });

  it('every field is checked against its schema before any is used', async () => {
    const m = new MemExec();
    await applyChanges({ root, changes: [ch('a', 'x', null, '1')], executors: { raid: m } });
    const good = JSON.parse(await readFile(journalPath(root), 'utf8'));
    const cases: [(j: typeof good) => void, string][] = [
      // The id names the file an undone journal is moved to.
      [(j) => (j.id = '../../../etc/cron.d/x'), 'journal.id: "../../../etc/cron.d/x" is not a journal id'],
      [(j) => (j.pid = 'me'), 'journal.pid: expected an integer from 1 to 4194304, found "me"'],
      [(j) => (j.hook = 1), 'journal.hook: not a field isolate writes'],
      [
        (j) =>
          (j.context = { executorOptions: { raid: { timeoutMs: 1, toolPaths: { storcli: 'storcli64' } } } }),
        'journal.context.executorOptions.raid.toolPaths.storcli: "storcli64" is not an absolute path',
      ],
      [
        (j) =>
          (j.entries[0].change = {
            backend: 'cgroupfs',
            target: '/x',
            setting: 'Slice',
            from: null,
            to: 'a',
          }),
        'journal.entries[0].change.setting: "Slice" is not one of',
      ],
      [
        (j) => (j.entries[0].change.target = '/etc/passwd'),
        'journal.entries[0].change.target: "/etc/passwd" is not a RAID target',
      ],
      [(j) => (j.entries[0].previous = 3), 'journal.entries[0].previous: expected a string, found 3'],
    ];
    for (const [edit, message] of cases) {
      const j = structuredClone(good);
      edit(j);
      await writeFile(journalPath(root), JSON.stringify(j));
      await expect(readJournal(root)).rejects.toThrow(message);
    }
    await writeFile(journalPath(root), JSON.stringify(good));
    expect((await readJournal(root))?.entries).toHaveLength(1);
  });

  it('is read as it is on disk each time: any write is seen, each reader gets its own copy', async () => {
    const m = new MemExec();
    await applyChanges({ root, changes: [ch('a', 'x', null, '1')], executors: { raid: m } });
    const file = journalPath(root);
    const first = await readJournal(root);
    // What a caller does to its copy is not what the next reader gets.
    first!.entries[0]!.status = 'undone';
    first!.state = 'rolled-back';
    const second = await readJournal(root);
    expect([second?.state, second?.entries[0]?.status]).toEqual(['applied', 'done']);
    expect(await readJournalState(root)).toBe('applied');
    // Rewritten in place, same size, its modification time set back: read as it is now.
    const { mtime, atime } = await stat(file);
    await writeFile(file, (await readFile(file, 'utf8')).replace('"to": "1"', '"to": "2"'));
    await utimes(file, atime, mtime);
    expect((await readJournal(root))?.entries[0]?.change.to).toBe('2');
    // A state isolate never writes is refused, not taken for "nothing to recover".
    await writeFile(file, (await readFile(file, 'utf8')).replace('"applied"', '"applyin"'));
    await expect(readJournal(root)).rejects.toThrow(
      /is unreadable \(journal\.state: "applyin" is not one of "applying", "applied"/,
    );
    await expect(readJournalState(root)).rejects.toThrow(/is unreadable/);
    // Replaced by another apply (writeJournal: a new file).
    await writeJournal(root, { ...second!, state: 'rolled-back' });
    expect((await readJournal(root))?.state).toBe('rolled-back');
    expect(await readJournalState(root)).toBe('rolled-back');
    // Gone: none, without an error.
    await rm(file);
    expect(await readJournal(root)).toBeNull();
    expect(await readJournalState(root)).toBeNull();
  });
});

describe('sameValue', () => {
  it('normalises cpu lists, memory pages and controller sets', () => {
    expect(sameValue('cpuset.cpus', '0-3', '0,1,2,3')).toBe(true);
    expect(sameValue('memory.high', '1073741824', '1073741825')).toBe(true);
    expect(sameValue('memory.high', 'max', '1073741824')).toBe(false);
    expect(sameValue('memory.low', '1G', '1073741824')).toBe(true);
    expect(sameValue('cgroup.subtree_control', 'cpu memory', 'memory cpu')).toBe(true);
  });
});

describe('cgroupfs write', () => {
  const c = { backend: 'cgroupfs', target: '/x', setting: 'cpuset.cpus', from: '0-7', to: '' } as Change;
  it('an empty value reaches write(2) (Node skips zero-length writes)', async () => {
    // Node's FileHandle.write returns without a syscall for an empty buffer; an undo of a cpuset list
    // to "" then silently changed nothing (kernel 6.1, /hadoop-yarn). The open truncates a plain
    // file, so only a real write(2) leaves the "\n" the kernel would read as the empty list.
    const file = path.join(root, 'cpuset.cpus');
    await writeFile(file, '0-7\n');
    await new CgroupFsExecutor(root).write(file, '', c, 'undo /x cpuset.cpus');
    expect(await readFile(file, 'utf8')).toBe('\n');
  });
  it('refuses a link, a FIFO or a device at the name before opening it, and writes through nothing', async () => {
    const exec = new CgroupFsExecutor(root);
    const victim = path.join(root, 'victim');
    await writeFile(victim, 'precious\n');
    await symlink(victim, path.join(root, 'link'));
    execFileSync('mkfifo', [path.join(root, 'fifo')]);
    for (const [file, kind] of [
      [path.join(root, 'link'), 'a symbolic link'],
      [path.join(root, 'fifo'), 'a FIFO'],
      ['/dev/full', 'a character device'],
    ] as const) {
      const err = await exec.write(file, '2-3', c, 'apply /x cpuset.cpus').catch((e) => e);
      expect(err).toBeInstanceOf(StepError);
      expect((err as StepError).message).toBe(
        `apply /x cpuset.cpus: refusing to write to ${file}: it is ${kind}, not a kernel file`,
      );
    }
    expect(await readFile(victim, 'utf8')).toBe('precious\n');
  });
  it("keeps the kernel's errno: a missing file is ENOENT with its meaning", async () => {
    const err = await new CgroupFsExecutor(root)
      .write(path.join(root, 'gone/cpuset.cpus'), '2-3', c, 'apply /x cpuset.cpus')
      .catch((e) => e);
    expect(err).toBeInstanceOf(StepError);
    expect((err as StepError).code).toBe('ENOENT');
    expect((err as StepError).message).toContain(errnoMeaning('cpuset.cpus', 'ENOENT'));
  });
});

describe('cgroupfs undo', () => {
  it("a value whose file is gone while its cgroup stays (a reboot turned the parent's controller off) is a note, not a failure", async () => {
    // Kernel 6.1, a rollback after a reboot (test/vm/reboot-rollback.test.ts): /hadoop-yarn is back,
    // but cpuset is not enabled in the root, so its cpuset.cpus does not exist. Writing the journaled ""
    // failed with ENOENT on every rollback: the host could never be rolled back.
    await mkdir(path.join(root, 'sys/fs/cgroup/hadoop-yarn'), { recursive: true });
    const c = {
      backend: 'cgroupfs',
      target: '/hadoop-yarn',
      setting: 'cpuset.cpus',
      from: null,
      to: '0-1,4-7',
    } as Change;
    const r = await new CgroupFsExecutor(root).undo(c, '', { entries: [] });
    expect(r.note).toBe(
      '/hadoop-yarn cpuset.cpus is gone (its controller is off in the parent cgroup): nothing to restore',
    );
    const gone = { ...c, target: '/gone' };
    expect((await new CgroupFsExecutor(root).undo(gone, '', { entries: [] })).note).toBe(
      '/gone no longer exists',
    );
  });
});

describe('pre-flight on cpusets', () => {
  it('refuses to empty the cpuset of a populated cgroup', async () => {
    const cg = path.join(root, 'sys/fs/cgroup');
    await mkdir(path.join(cg, 'busy'), { recursive: true });
    await writeFile(path.join(cg, 'cgroup.controllers'), 'cpuset cpu memory\n');
    await writeFile(path.join(cg, 'busy/cgroup.events'), 'populated 1\nfrozen 0\n');
    await writeFile(path.join(cg, 'busy/cpuset.cpus'), '0-3\n');
    const err = await applyChanges({
      root,
      changes: [{ backend: 'cgroupfs', target: '/busy', setting: 'cpuset.cpus', from: '0-3', to: '' }],
      executors: { cgroupfs: new CgroupFsExecutor(root) },
    }).catch((e) => e);
    expect(err.exitCode).toBe(EXIT.refused);
    expect(err.message).toMatch(/emptying \/busy cpuset.cpus \("0-3"\) while the cgroup has processes/);
    expect((await readFile(path.join(cg, 'busy/cpuset.cpus'), 'utf8')).trim()).toBe('0-3');
  });
});
