// Undo of a process or thread move moves back only the task isolate moved: a PID (TID) the kernel
// handed to another task between apply and rollback is left where it is, with a note naming the ID
// and both start times (field 22 of /proc/ID/stat). Fixture hosts: a cgroup2 tree and /proc by hand,
// and a v1 hierarchy (fake-v1-host).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rollbackLast } from '../../src/apply/engine.js';
import { type Journal, newJournal, writeJournal } from '../../src/apply/journal.js';
import { CgroupFsExecutor } from '../../src/cgroup/cgroupfs.js';
import { stampTaskStarts } from '../../src/cgroup/task-start.js';
import { CgroupV1Executor } from '../../src/cgroupv1/executor.js';
import type { Change } from '../../src/model/plan.js';
import { fakeCgroupHost } from '../support/cgroup-tree.js';
import { makeFakeV1Host } from '../support/fake-v1-host.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

/** /proc/<id>/stat with a start time (field 22), the name holding a space and a ')' as real ones may. */
function stat(root: string, id: number, ticks: number): void {
  mkdirSync(join(root, 'proc', String(id)), { recursive: true });
  writeFileSync(
    join(root, 'proc', String(id), 'stat'),
    `${id} (java) x) S ${Array.from({ length: 18 }, () => '0').join(' ')} ${ticks} 0 0\n`,
  );
}

/** A journal of one finished apply: the move, done. */
async function applied(root: string, move: Change, previous: string): Promise<void> {
  const j: Journal = { ...newJournal(), state: 'applied' };
  j.entries.push({ seq: 1, change: move, previous, status: 'done', at: new Date().toISOString() });
  await writeJournal(root, j);
}

function v2Host(pid: number, ticks: number) {
  const { root, cg } = fakeCgroupHost(['kafka.slice', 'system.slice']);
  roots.push(root);
  stat(root, pid, ticks);
  // Where the move put it (isolate's), and where the rollback would write it back.
  writeFileSync(join(root, 'proc', String(pid), 'cgroup'), '0::/kafka.slice\n');
  writeFileSync(join(cg, 'system.slice/cgroup.procs'), '');
  return { root, cg };
}

const move: Change = {
  backend: 'cgroupfs',
  target: '/kafka.slice',
  setting: 'cgroup.procs',
  from: '/system.slice',
  to: '4242',
};

describe('undo of a process move', () => {
  it('the apply journals the moved task start time with the move', () => {
    const { root } = v2Host(4242, 1234);
    const other: Change = {
      backend: 'cgroupfs',
      target: '/kafka.slice',
      setting: 'cpuset.cpus',
      from: '',
      to: '2-3',
    };
    const [m, o] = stampTaskStarts(root, [move, other]);
    expect(m).toEqual({ ...move, startTime: '1234' });
    expect(o).toBe(other);
    // A task already gone: no start time to journal (the move is skipped as exited).
    expect(stampTaskStarts(root, [{ ...move, to: '999' }])[0]).not.toHaveProperty('startTime');
  });

  it('a PID reused by another process between apply and rollback is not moved; the note names both start times', async () => {
    const { root, cg } = v2Host(4242, 1234);
    await applied(root, { ...move, startTime: '1234' }, '/system.slice');
    // PID 4242 exited and the kernel gave its number to another process, started later.
    stat(root, 4242, 98765);
    const r = await rollbackLast({ root, executors: { cgroupfs: new CgroupFsExecutor(root) } });
    expect(readFileSync(join(cg, 'system.slice/cgroup.procs'), 'utf8')).toBe('');
    expect(r.notes).toEqual([
      'PID 4242 is another task now (started at tick 98765; the task isolate moved started at tick 1234); not moved back',
    ]);
  });

  it('the same process is moved back', async () => {
    const { root, cg } = v2Host(4242, 1234);
    await applied(root, { ...move, startTime: '1234' }, '/system.slice');
    const r = await rollbackLast({ root, executors: { cgroupfs: new CgroupFsExecutor(root) } });
    expect(r.notes).toEqual([]);
    expect(readFileSync(join(cg, 'system.slice/cgroup.procs'), 'utf8')).toBe('4242');
  });

  it('a start time that cannot be read leaves the task where it is: unknown, not the same', async () => {
    const { root, cg } = v2Host(4242, 1234);
    await applied(root, { ...move, startTime: '1234' }, '/system.slice');
    rmSync(join(root, 'proc/4242/stat'));
    mkdirSync(join(root, 'proc/4242/stat'));
    const r = await rollbackLast({ root, executors: { cgroupfs: new CgroupFsExecutor(root) } });
    expect(readFileSync(join(cg, 'system.slice/cgroup.procs'), 'utf8')).toBe('');
    expect(r.notes[0]).toMatch(
      /^PID 4242 not moved back: its start time is unknown \(.+; the task isolate moved started at tick 1234\)$/,
    );
  });

  it('cgroup v1: a reused TID is not moved back through tasks', async () => {
    const root = makeFakeV1Host('qemu-2s-smt2', {
      layout: 'legacy',
      cpus: '0-7',
      mems: '0-1',
      cpusets: { kafka: { cpus: '2-3', mems: '0' } },
    });
    roots.push(root);
    const tid = 5151;
    stat(root, tid, 777);
    writeFileSync(join(root, 'proc', String(tid), 'cgroup'), '2:cpuset:/kafka\n1:name=systemd:/\n');
    const thread: Change = {
      backend: 'cgroupfs',
      hierarchy: 'cpuset',
      target: '/kafka',
      setting: 'tasks',
      from: '/',
      to: String(tid),
      startTime: '555',
    };
    await applied(root, thread, '/');
    const tasks = join(root, 'sys/fs/cgroup/cpuset/tasks');
    writeFileSync(tasks, '');
    const r = await rollbackLast({ root, executors: { cgroupfs: new CgroupV1Executor(root) } });
    expect(readFileSync(tasks, 'utf8')).toBe('');
    expect(r.notes).toEqual([
      'thread 5151 is another task now (started at tick 777; the task isolate moved started at tick 555); not moved back',
    ]);
  });
});

describe('a journal read back', () => {
  it('refuses a start time on anything but a move', async () => {
    const { root } = v2Host(4242, 1234);
    const cpus = {
      backend: 'cgroupfs',
      target: '/kafka.slice',
      setting: 'cpuset.cpus',
      from: '',
      to: '2-3',
      startTime: '1',
    };
    await applied(root, cpus as Change, '');
    await expect(rollbackLast({ root, executors: { cgroupfs: new CgroupFsExecutor(root) } })).rejects.toThrow(
      /entries\[0\]\.change\.startTime: only a process or thread move names a task's start time/,
    );
  });
});
