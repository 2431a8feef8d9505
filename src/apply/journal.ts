// The apply journal: before every write isolate records what it is about to change and the value
// it found, so a failed or interrupted apply (kill -9) can be undone exactly, in reverse order.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Change } from '../model/plan.js';
import { writeFileAtomic } from '../sys/write.js';

export type JournalState =
  /** Writes are being made; seen at start-up it means the apply was interrupted. */
  | 'applying'
  /** Every change is in place; `isolate rollback` can undo them. */
  | 'applied'
  /** Undo in progress (after a failure, an interruption, or `isolate rollback`). */
  | 'rolling-back'
  /** Everything was undone. */
  | 'rolled-back'
  /** Undo stopped on an error; the entries still `done` are in place. */
  | 'rollback-failed';

export interface JournalEntry {
  seq: number;
  change: Change;
  /** Live value read just before the write (null: absent). */
  previous: string | null;
  /**
   * pending: recorded, write maybe made (a crash here leaves it unknown; undo is idempotent);
   * done: written and verified; undone: restored; skipped: benign no-op (e.g. the PID exited).
   */
  status: 'pending' | 'done' | 'undone' | 'skipped';
  /** Why the entry was skipped, or how the undo differs from an exact restore. */
  note?: string;
}

export interface Journal {
  version: 1;
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
  entries: JournalEntry[];
}

export function journalDir(root: string): string {
  return path.join(root, 'var/lib/isolate');
}
export function journalPath(root: string): string {
  return path.join(journalDir(root), 'journal.json');
}

export async function readJournal(root: string): Promise<Journal | null> {
  let text: string;
  try {
    text = await readFile(journalPath(root), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const j = JSON.parse(text) as Journal;
    if (j.version !== 1 || !Array.isArray(j.entries)) throw new Error('unknown journal version');
    return j;
  } catch (err) {
    throw new Error(
      `journal ${journalPath(root)} is unreadable (${(err as Error).message}); inspect it, restore by hand, then delete it`,
    );
  }
}

export async function writeJournal(root: string, j: Journal): Promise<void> {
  j.updatedAt = new Date().toISOString();
  // The state directory is isolate's own: the one place it may create directories.
  await writeFileAtomic(journalPath(root), `${JSON.stringify(j, null, 1)}\n`, { createParents: true });
}

export function newJournal(context?: Record<string, unknown>): Journal {
  const now = new Date().toISOString();
  return {
    version: 1,
    id: `${now.replace(/[-:.]/g, '')}-${process.pid}`,
    pid: process.pid,
    startedAt: now,
    updatedAt: now,
    state: 'applying',
    entries: [],
    ...(context ? { context } : {}),
  };
}
