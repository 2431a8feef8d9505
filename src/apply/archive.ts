// Journal archiving: a new apply (or a rollback of everything) moves the last journal to history,
// folding what it changed into the baseline first so `isolate rollback` can still undo it.
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { foldJournal, journalDir, journalPath, readBaseline, readJournal, writeBaseline } from './journal.js';

/** Journals kept for forensics; the agent applies after every drift, so history must not grow forever. */
export const JOURNAL_HISTORY = 50;

/** A PID under `root`'s /proc still exists (its process moves are still worth undoing). */
export function pidAliveUnder(root: string): (pid: number) => boolean {
  return (pid) => existsSync(path.join(root, 'proc', String(pid)));
}

export async function archiveJournal(root: string): Promise<void> {
  const j = await readJournal(root);
  if (!j) return;
  // What it changed stays undoable by `isolate rollback` after this apply replaces it.
  if (j.state === 'applied') {
    await writeBaseline(root, foldJournal(await readBaseline(root), j, pidAliveUnder(root)));
  }
  const dir = path.join(journalDir(root), 'history');
  await mkdir(dir, { recursive: true });
  await rename(journalPath(root), path.join(dir, `journal-${j.id}.json`)).catch(() => {});
  // Ids start with a UTC timestamp, so name order is age order.
  const old = (await readdir(dir)).filter((f) => /^journal-.*\.json$/.test(f)).sort();
  for (const f of old.slice(0, Math.max(0, old.length - JOURNAL_HISTORY)))
    await unlink(path.join(dir, f)).catch(() => {});
}
