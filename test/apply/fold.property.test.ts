// The baseline's promise, as a property: the agent applies j1, later corrects drift with j2 (which
// folds j1 into the baseline), and one rollback must leave the host exactly as undoing j2 and then
// j1 would. The changes are drawn from a small world so they collide: io lines of several devices in
// the same files and properties, v1 blkio files, threads moved in two v1 hierarchies, processes,
// one cgroup in two hierarchies, plain files. The engine runs for real (journal files, fold, undo)
// against an in-memory host (model-host.ts).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyChanges, rollbackLast } from '../../src/apply/engine.js';
import { foldJournal, type Journal, newJournal, readJournal } from '../../src/apply/journal.js';
import type { Change } from '../../src/model/plan.js';
import { ModelHost } from './model-host.js';

const DEVICES = ['8:0', '8:16', '8:32', '259:0'];
const PIDS = ['100', '101'];
const TIDS = ['200', '201', '202'];
const V1 = ['cpuset', 'cpu,cpuacct'];

const dev = fc.constantFrom(...DEVICES);
const n = fc.integer({ min: 1, max: 9 });

/** Every kind of change whose object is named beyond its target and setting, and a plain one. */
const change: fc.Arbitrary<Change> = fc.oneof(
  fc.record({ t: fc.constantFrom('/kafka.slice', '/hadoop-yarn'), d: dev, v: n }).map(
    ({ t, d, v }): Change => ({
      backend: 'cgroupfs',
      target: t,
      setting: 'io.max',
      from: null,
      to: `${d} wbps=${v}`,
    }),
  ),
  fc.record({ d: dev, v: n }).map(
    ({ d, v }): Change => ({
      backend: 'cgroupfs',
      target: '/kafka.slice',
      setting: 'io.latency',
      from: null,
      to: `${d} target=${v}`,
    }),
  ),
  fc.record({ d: dev, v: n }).map(
    ({ d, v }): Change => ({
      backend: 'cgroupfs',
      target: '/kafka.slice',
      setting: 'io.weight',
      from: null,
      to: `${d} ${v}`,
    }),
  ),
  fc.record({ d: dev, v: n }).map(
    ({ d, v }): Change => ({
      backend: 'cgroupfs',
      hierarchy: 'blkio',
      target: '/yarn',
      setting: 'blkio.throttle.write_bps_device',
      from: null,
      to: `${d} ${v}`,
    }),
  ),
  fc
    .record({
      p: fc.constantFrom('IOWriteBandwidthMax', 'IODeviceWeight', 'IODeviceLatencyTargetSec'),
      d: dev,
      v: n,
    })
    .map(
      ({ p, d, v }): Change => ({
        backend: 'systemd',
        target: 'kafka.service',
        setting: p as 'IODeviceWeight',
        from: null,
        to: `/dev/block/${d} ${v}`,
      }),
    ),
  fc
    .record({
      h: fc.constantFrom(...V1),
      t: fc.constantFrom('/kafka', '/yarn'),
      tid: fc.constantFrom(...TIDS),
    })
    .map(
      ({ h, t, tid }): Change => ({
        backend: 'cgroupfs',
        hierarchy: h,
        target: t,
        setting: 'tasks',
        from: null,
        to: tid,
      }),
    ),
  fc.record({ t: fc.constantFrom('/kafka.slice', '/hadoop-yarn'), pid: fc.constantFrom(...PIDS) }).map(
    ({ t, pid }): Change => ({
      backend: 'cgroupfs',
      target: t,
      setting: 'cgroup.procs',
      from: null,
      to: pid,
    }),
  ),
  // A process moved in a v1 hierarchy.
  fc
    .record({
      h: fc.constantFrom(...V1),
      t: fc.constantFrom('/kafka', '/yarn'),
      pid: fc.constantFrom(...PIDS),
    })
    .map(
      ({ h, t, pid }): Change => ({
        backend: 'cgroupfs',
        hierarchy: h,
        target: t,
        setting: 'cgroup.procs',
        from: null,
        to: pid,
      }),
    ),
  // One cgroup made in several v1 hierarchies.
  fc.constantFrom(...V1, 'memory').map(
    (h): Change => ({
      backend: 'cgroupfs',
      hierarchy: h,
      target: '/kafka',
      setting: 'mkdir',
      from: null,
      to: 'present',
    }),
  ),
  fc.record({ v: n }).map(
    ({ v }): Change => ({
      backend: 'cgroupfs',
      target: '/hadoop-yarn',
      setting: 'cpuset.cpus',
      from: null,
      to: `0-${v}`,
    }),
  ),
);

/** A host before isolate: some io lines already set by someone, every task somewhere. */
function startingHost(seed: Change[]): ModelHost {
  const m = new ModelHost();
  for (const c of seed) m.set(c, c.setting === 'cgroup.procs' || c.setting === 'tasks' ? c.target : c.to);
  for (const h of V1) for (const tid of TIDS) m.tasks.set(`${h}|tasks|${tid}`, '/');
  for (const h of ['', ...V1]) for (const pid of PIDS) m.tasks.set(`${h}|cgroup.procs|${pid}`, '/');
  return m;
}

/** Undo a journal's completed writes, last first, on the model: what "undoing it" means. */
function undo(m: ModelHost, j: Journal | null): void {
  for (const e of [...(j?.entries ?? [])].reverse()) if (e.status === 'done') m.set(e.change, e.previous);
}

/** What the engine journals when it applies `changes` to `m`: each write with the value it found. */
async function journalOf(m: ModelHost, changes: Change[]): Promise<Journal> {
  const j = { ...newJournal(undefined, '0b2e4d6f-1111-4222-8333-944445555666'), state: 'applied' as const };
  for (const change of changes) {
    const previous = await m.read(change);
    if (m.satisfied(change, previous)) continue;
    await m.apply(change);
    j.entries.push({ seq: j.entries.length + 1, change, previous, status: 'done' });
  }
  return j;
}

describe('folding journals', () => {
  it('fold(fold(null, j1), j2), undone last entry first, restores the bytes undoing j2 then j1 restores', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(change, { maxLength: 12 }),
        fc.array(change, { minLength: 1, maxLength: 16 }),
        fc.array(change, { minLength: 1, maxLength: 16 }),
        async (seed, c1, c2) => {
          const host = startingHost(seed);
          const j1 = await journalOf(host, c1);
          const j2 = await journalOf(host, c2);
          const expected = host.clone();
          undo(expected, j2);
          undo(expected, j1);
          const alive = () => true;
          undo(host, foldJournal(foldJournal(null, structuredClone(j1), alive), structuredClone(j2), alive));
          expect(host.bytes()).toBe(expected.bytes());
        },
      ),
      { numRuns: 500 },
    );
  });

  // The same through the engine's files (apply, agent-style fold, rollback): fewer runs, each writes journals.
  it('the engine: apply j1, apply j2, rollback restores what undoing j2 then j1 restores', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(change, { maxLength: 12 }),
        fc.array(change, { minLength: 1, maxLength: 12 }),
        fc.array(change, { minLength: 1, maxLength: 12 }),
        async (seed, c1, c2) => {
          const root = mkdtempSync(join(tmpdir(), 'isolate-fold-'));
          try {
            // The PIDs and TIDs are alive (a fold drops moves of dead processes), in one known boot.
            for (const id of [...PIDS, ...TIDS]) mkdirSync(join(root, 'proc', id), { recursive: true });
            mkdirSync(join(root, 'proc/sys/kernel/random'), { recursive: true });
            writeFileSync(
              join(root, 'proc/sys/kernel/random/boot_id'),
              '0b2e4d6f-1111-4222-8333-944445555666\n',
            );
            const host = startingHost(seed);
            const executors = { cgroupfs: host, systemd: host };
            await applyChanges({ root, changes: c1, executors });
            const j1 = structuredClone(await readJournal(root));
            await applyChanges({ root, changes: c2, executors });
            const j2 = structuredClone(await readJournal(root));
            const expected = host.clone();
            if (j2 !== null && j2.id !== j1?.id) undo(expected, j2);
            undo(expected, j1);
            await rollbackLast({ root, executors });
            expect(host.bytes()).toBe(expected.bytes());
          } finally {
            rmSync(root, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 10 },
    );
  });
});
