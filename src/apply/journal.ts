// The apply journal: before every write isolate records what it is about to change and the value
// it found, so a failed or interrupted apply (kill -9) can be undone exactly, in reverse order.
import path from 'node:path';
import { UserError } from '../model/errors.js';
import { CpuSet } from '../model/cpuset.js';
import type { CpuChange } from '../model/jvm.js';
import type { Change } from '../model/plan.js';
import { cgroupCpuList } from '../model/systemd.js';
import {
  arrayOf,
  type Check,
  change,
  executorOptions,
  int,
  matching,
  NewerFormatError,
  nullable,
  object,
  oneOf,
  refuseNewerFormat,
  str,
  timestamp,
} from '../model/shape.js';
import { ReadRefused, readTextFile } from '../sys/read.js';
import { writeFileAtomic } from '../sys/write.js';
import { changeObject, objectKey, readBootId, sameBoot, UNKNOWN } from './identity.js';

/** Every state a journal is written in: the type is read off this list, so the check in readJournalFile knows them all. */
const JOURNAL_STATES = [
  /** Writes are being made; seen at start-up it means the apply was interrupted. */
  'applying',
  /** Every change is in place; `isolate rollback` can undo them. */
  'applied',
  /** Undo in progress (after a failure, an interruption, or `isolate rollback`). */
  'rolling-back',
  /** Everything was undone. */
  'rolled-back',
  /** Undo stopped on an error; the entries still `done` are in place. */
  'rollback-failed',
] as const;
export type JournalState = (typeof JOURNAL_STATES)[number];

/**
 * pending: recorded, write maybe made (a crash here leaves it unknown; undo is idempotent);
 * done: written and verified; undone: restored; skipped: benign no-op (e.g. the PID exited).
 */
const ENTRY_STATUSES = ['pending', 'done', 'undone', 'skipped'] as const;

export interface JournalEntry {
  seq: number;
  change: Change;
  /** Live value read just before the write (null: absent). */
  previous: string | null;
  /** One of ENTRY_STATUSES, above. */
  status: (typeof ENTRY_STATUSES)[number];
  /** Why the entry was skipped, or how the undo differs from an exact restore. */
  note?: string;
  /**
   * When the write was made (a `done` entry; in the baseline, the latest write of that setting):
   * `check` tells a JVM started after its CPUs changed from one started before (model/jvm.ts).
   */
  at?: string;
  /**
   * The boot the write was made in (a boot_id, or "unknown"), set when the entry is folded into a
   * baseline, whose entries come from many journals; absent: the journal's own `boot`.
   */
  boot?: string;
  /** A per-device entry: the device's identity when it was written (`wwid:…`, `serial:…`, "unknown"). */
  identity?: string;
}

/**
 * The journal and baseline format this isolate writes and the newest it reads. Raise it when a
 * change would make an older isolate misread the file (a new state, a field that changes how an
 * entry is undone); an older isolate then refuses the file instead of guessing.
 */
export const JOURNAL_FORMAT = 2 as const;

/**
 * Formats this isolate reads. 1: entries keyed without the object a value names (a device's line,
 * a thread, a v1 hierarchy), no boot stamp; read as format 2 (see legacyCaveat).
 */
const JOURNAL_FORMATS_READ = [1, JOURNAL_FORMAT] as const;

export interface Journal {
  /** JOURNAL_FORMAT for every journal this isolate writes or has read (older formats are converted). */
  version: (typeof JOURNAL_FORMATS_READ)[number];
  id: string;
  /** isolate's PID during the apply. */
  pid: number;
  startedAt: string;
  updatedAt: string;
  state: JournalState;
  /** How the changes were carried out (backend options), so a rollback needs no policy file. */
  context?: Record<string, unknown>;
  /** Set when an apply failed: the failing step. */
  error?: string;
  /** The boot it was written in (`/proc/sys/kernel/random/boot_id`), "unknown" when unreadable; absent in format 1. */
  boot?: string;
  /** What a rollback of it cannot restore, said as a note by every rollback (an old baseline's loss). */
  caveats?: string[];
  entries: JournalEntry[];
}

export function journalDir(root: string): string {
  return path.join(root, 'var/lib/isolate');
}
export function journalPath(root: string): string {
  return path.join(journalDir(root), 'journal.json');
}

/** Journals hold one entry per change: a few hundred KiB at most on the largest hosts. */
const JOURNAL_MAX_BYTES = 16 * 1024 * 1024;

/**
 * The journal, or null when there is none. A journal that cannot be trusted is the operator's to
 * inspect (it says what was changed): a one-line error naming it, never a guess.
 */
export async function readJournal(root: string): Promise<Journal | null> {
  return readJournalFile(journalPath(root), 'journal');
}

/**
 * For readers that only date changes from the journals (check, plan's JVM notes): an unreadable
 * journal leaves them undated, but one a newer isolate wrote is refused as apply and rollback refuse it.
 */
export function undatedUnlessNewer(err: unknown): null {
  if (err instanceof NewerFormatError) throw err;
  return null;
}

/** The journal's state alone (null: no journal): the agent asks it every round. */
export async function readJournalState(root: string): Promise<JournalState | null> {
  return (await readJournal(root))?.state ?? null;
}

async function readJournalFile(file: string, what: 'journal' | 'baseline'): Promise<Journal | null> {
  const unreadable = (why: string) =>
    new UserError(
      `${what} ${file} is unreadable (${why}); inspect it (it lists every value isolate changed), restore by hand, then move it aside`,
    );
  let text: string;
  try {
    text = readTextFile(file, { maxBytes: JOURNAL_MAX_BYTES });
  } catch (err) {
    if (err instanceof ReadRefused) {
      if (err.code === 'ENOENT') return null;
      throw unreadable(err.reason);
    }
    throw err;
  }
  let j: unknown;
  try {
    j = JSON.parse(text);
  } catch {
    throw unreadable('not valid JSON');
  }
  refuseNewerFormat(j, file, what, JOURNAL_FORMAT);
  // Every field, before any is used: an unknown state would read as "nothing to recover", an id
  // names the file an undone journal is moved to, a change's target is where root writes.
  const wrong = JOURNAL(j, 'journal');
  if (wrong) throw unreadable(wrong);
  return fromFormat1(j as Journal, file, what);
}

/**
 * A format-1 file read as format 2: the entries are the same, the boot is unknown. A folded one
 * (a baseline, or the journal a rollback made of one) may have lost entries, see legacyCaveat.
 */
function fromFormat1(j: Journal, file: string, what: string): Journal {
  if (j.version === JOURNAL_FORMAT) return j;
  const caveat = legacyCaveat(j, file, what);
  return { ...j, version: JOURNAL_FORMAT, ...(caveat ? { caveats: [...(j.caveats ?? []), caveat] } : {}) };
}

/**
 * Format 1 folded entries by backend, target and setting: of a per-device io file or property one
 * device survived, of a v1 `tasks` file one thread, of a path in several v1 hierarchies one
 * hierarchy. What was dropped is nowhere in the file, so it cannot be repaired; but only a file
 * that holds such an entry can have lost one. Such a file is read, not refused: refusing it would
 * stop every apply and rollback on the host (the agent reads the baseline every round) and restore
 * nothing, and no isolate could restore the dropped values from it either. The rollback restores what
 * it holds and names, in a note, each setting whose other devices/threads/hierarchies may still
 * carry isolate's values, for the operator to check by hand.
 */
function legacyCaveat(j: Journal, file: string, what: string): string | null {
  if (what !== 'baseline' && !j.id.startsWith('baseline-')) return null; // one apply's journal: never folded
  const lossy = new Set<string>();
  for (const e of j.entries) {
    const o = changeObject(e.change);
    if (o.device !== undefined || o.task?.kind === 'thread' || o.hierarchy !== '') {
      lossy.add(`${o.target}${o.hierarchy ? ` (${o.hierarchy})` : ''} ${o.setting}`);
    }
  }
  if (lossy.size === 0) return null;
  return `${what} ${file} was folded by an older isolate (journal format 1), which kept one device, thread or v1 hierarchy per setting: rollback restores the ones it lists; check the others of ${[...lossy].sort().join(', ')} by hand`;
}

/**
 * Whether `j` was written in the boot the host is in now (the host's boot_id under `root`): true,
 * false, or "unknown" when either boot is unknown (format 1, an unreadable boot_id).
 */
export function writtenInThisBoot(root: string, j: Pick<Journal, 'boot'>): boolean | 'unknown' {
  return sameBoot(j.boot, readBootId(root));
}

/** The schema of a journal (and of the baseline, which has the same shape): see Journal above. */
const BOOT = matching(
  /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|unknown)$/,
  'a boot_id or "unknown"',
  36,
);
const JOURNAL: Check = object(
  {
    version: oneOf(JOURNAL_FORMATS_READ),
    id: matching(/^[A-Za-z0-9-]{1,200}$/, 'a journal id (letters, digits, "-")', 200),
    pid: int(1, 2 ** 22),
    startedAt: timestamp,
    updatedAt: timestamp,
    state: oneOf(JOURNAL_STATES),
    entries: arrayOf(
      object(
        { seq: int(1, 10_000_000), change, previous: nullable(str()), status: oneOf(ENTRY_STATUSES) },
        { note: str(4096), at: timestamp, boot: BOOT, identity: str(300) },
      ),
    ),
  },
  { context: object({}, { executorOptions }), error: str(), boot: BOOT, caveats: arrayOf(str(8192)) },
);

export async function writeJournal(root: string, j: Journal): Promise<void> {
  j.updatedAt = new Date().toISOString();
  // The state directory is isolate's own: the one place it may create directories.
  await writeFileAtomic(journalPath(root), `${JSON.stringify(j, null, 1)}\n`, { createParents: true });
}

/**
 * Every change isolate has made since the host was last rolled back, each with the value it had
 * before isolate first changed it. The agent applies again after every drift, and each apply has a
 * journal of its own; `isolate rollback` must still restore the host as it was before isolate, not
 * just undo the last correction. So a finished apply is folded in here when the next one starts.
 */
export function baselinePath(root: string): string {
  return path.join(journalDir(root), 'baseline.json');
}

export async function readBaseline(root: string): Promise<Journal | null> {
  return readJournalFile(baselinePath(root), 'baseline');
}

export async function writeBaseline(root: string, j: Journal): Promise<void> {
  j.updatedAt = new Date().toISOString();
  await writeFileAtomic(baselinePath(root), `${JSON.stringify(j, null, 1)}\n`, { createParents: true });
}

/**
 * One setting of one object: a later change of it keeps the first one's `previous`. The object is
 * the change's (identity.ts: a device's line, a PID/TID, a v1 hierarchy), and for a PID/TID or a
 * MAJ:MIN, which name another object after a reboot, the boot the entry was written in too.
 */
function entryKey(e: JournalEntry, j: Journal): string {
  const o = changeObject(e.change);
  const bootBound = o.task !== undefined || o.device !== undefined;
  return bootBound ? `${objectKey(e.change)}\0${e.boot ?? j.boot ?? UNKNOWN}` : objectKey(e.change);
}

/** A move of a process or thread (cgroup.procs, v1 tasks): its PID/TID is `to`. */
const isTaskMove = (c: Change) => c.setting === 'cgroup.procs' || c.setting === 'tasks';

/**
 * Fold a journal's completed entries into a baseline (a new one when there is none): keys already
 * there keep their first `previous`; new keys are appended, so undoing in reverse order still undoes
 * creations last. Process moves of PIDs that no longer exist are dropped: there is nothing to move
 * back, and a reused PID must never be moved by an old entry.
 */
export function foldJournal(
  baseline: Journal | null,
  j: Journal,
  pidAlive: (pid: number) => boolean,
): Journal {
  const out: Journal = baseline ?? {
    ...newJournal(j.context, j.boot ?? UNKNOWN),
    id: `baseline-${j.id}`,
    state: 'applied',
  };
  if (j.context) out.context = { ...(out.context ?? {}), ...j.context };
  if (j.caveats) out.caveats = [...new Set([...(out.caveats ?? []), ...j.caveats])];
  // Every entry keeps the boot it was written in: the baseline's own stamp is its latest fold's.
  for (const e of out.entries) e.boot ??= out.boot ?? UNKNOWN;
  out.boot = j.boot ?? UNKNOWN;
  out.version = JOURNAL_FORMAT;
  const keys = new Map(out.entries.map((e) => [entryKey(e, out), e]));
  for (const e of j.entries) {
    if (e.status !== 'done') continue;
    const added = { ...e, boot: e.boot ?? j.boot ?? UNKNOWN, seq: out.entries.length + 1 };
    const had = keys.get(entryKey(added, out));
    if (had) {
      // The first `previous` is what rollback restores; the last write is when the value changed.
      if (e.at) had.at = e.at;
      continue;
    }
    keys.set(entryKey(added, out), added);
    out.entries.push(added);
  }
  // A process of this boot that is gone is nothing to move back (and a reused PID must never be
  // moved by an old entry); one of another boot is kept, for the rollback to name as skipped.
  out.entries = out.entries.filter(
    (e) =>
      e.change.setting !== 'cgroup.procs' ||
      e.status !== 'done' ||
      sameBoot(e.boot, out.boot ?? UNKNOWN) === false ||
      pidAlive(Number(e.change.to)),
  );
  out.entries.forEach((e, i) => {
    e.seq = i + 1;
  });
  out.state = 'applied';
  return out;
}

/** A new journal, stamped with the boot it is written in (readBootId; "unknown" when not given). */
export function newJournal(context?: Record<string, unknown>, boot: string = UNKNOWN): Journal {
  const now = new Date().toISOString();
  return {
    version: JOURNAL_FORMAT,
    boot,
    id: `${now.replace(/[-:.]/g, '')}-${process.pid}`,
    pid: process.pid,
    startedAt: now,
    updatedAt: now,
    state: 'applying',
    entries: [],
    context,
  };
}

/**
 * The settings whose write changes which CPUs a workload's processes may use. Not its partition: a
 * partition root keeps its own CPUs and only takes them from its siblings (seen in the systemd-jvm
 * guest: a JVM restarted fenced, then the slice made a root, was dated before "the change").
 */
const CPU_SETTINGS = new Set(['cpuset.cpus', 'AllowedCPUs']);

/** The size of a CPU list as a journal holds it (cgroupfs or systemd's spelling); '' and unset: null. */
function cpuCount(list: string | null): number | null {
  const text = list === null || list.trim() === '[not set]' ? '' : cgroupCpuList(list);
  if (text === '') return null;
  try {
    return CpuSet.parse(text).size;
  } catch {
    return null;
  }
}

/**
 * When isolate last changed the CPUs process `pid` of `workload` may use: a write of its workload's
 * cpuset or AllowedCPUs, or its own move into the workload's cgroup, the latest dated one in the
 * journal and the baseline; null when none is dated. `before` is the first old value of the
 * workload's CPU list, counted when it is one. An empty one (AllowedCPUs= unset, an empty cpuset.cpus)
 * is its parent's CPUs, which before isolate's first change were every `online` CPU when given.
 */
export function cpuChangeOf(
  journals: readonly (Journal | null)[],
  workload: string,
  pid: number,
  online?: number,
): CpuChange | null {
  let at = 0;
  let before: number | null = null;
  for (const j of journals) {
    for (const e of j?.entries ?? []) {
      const c = e.change;
      const cpus = c.workload === workload && CPU_SETTINGS.has(c.setting);
      const moved = isTaskMove(c) && c.to === String(pid);
      if (e.status !== 'done' || !(cpus || moved)) continue;
      // A write that left the count as it was (the same list in another spelling) changed no pool's size.
      const was = cpus ? (cpuCount(e.previous) ?? online ?? null) : null;
      if (cpus && was !== null && was === cpuCount(c.to)) continue;
      const t = e.at ? Date.parse(e.at) / 1000 : Number.NaN;
      if (t > at) at = t;
      if (before === null && cpus && e.previous !== null) before = was;
    }
  }
  return at > 0 ? { at, before } : null;
}
