// `isolate rollback --dry-run`: what a rollback would undo now, each entry with the live value it
// would overwrite, read from the journal and the baseline without writing anything or locking.
import type { ChangeExecutor, Executors } from './executor.js';
import { foldJournal, type Journal, type JournalEntry, readBaseline, readJournal } from './journal.js';
import { pidAliveUnder } from './archive.js';
import { needsRecovery, undoOrder } from './undo.js';

/** What a rollback would overwrite: the value now, read through the entry's backend. */
export interface LiveValue {
  /** The value now (null: absent); undefined when it could not be read (`unreadable` says why). */
  value?: string | null;
  unreadable?: string;
  /**
   * Whether it differs from what isolate wrote (someone changed it since); null when unknown: the
   * value could not be read, or the entry's write may never have happened (an interrupted apply).
   */
  changedSince: boolean | null;
}

export interface PreviewEntry extends JournalEntry {
  live: LiveValue;
}

export interface RollbackPreview {
  /** The journal the rollback would undo (the baseline's when there is one), null: none. */
  journalId: string | null;
  /** What it would undo, last change first: each change with the value it restores and the one it overwrites. */
  entries: PreviewEntry[];
}

const whyOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The live value of each entry, read now through its backend (readMany where it has one, one by one
 * when that fails, so one unreadable value does not hide the others). A failed read is unknown, never
 * absent; so is an entry of a backend not available here.
 */
async function readLive(entries: readonly JournalEntry[], execs: Executors): Promise<PreviewEntry[]> {
  const byExec = new Map<ChangeExecutor, JournalEntry[]>();
  for (const e of entries) {
    const exec = execs[e.change.backend];
    if (exec) byExec.set(exec, [...(byExec.get(exec) ?? []), e]);
  }
  const live = new Map<JournalEntry, LiveValue>();
  const judged = (exec: ChangeExecutor, e: JournalEntry, value: string | null): LiveValue => ({
    value,
    changedSince: e.status === 'done' ? !exec.satisfied(e.change, value) : null,
  });
  for (const [exec, list] of byExec) {
    const many = exec.readMany ? await exec.readMany(list.map((e) => e.change)).catch(() => null) : null;
    for (const [i, e] of list.entries()) {
      if (many) {
        live.set(e, judged(exec, e, many[i] ?? null));
        continue;
      }
      try {
        live.set(e, judged(exec, e, await exec.read(e.change)));
      } catch (err) {
        live.set(e, { unreadable: whyOf(err), changedSince: null });
      }
    }
  }
  const none: LiveValue = { unreadable: 'no backend for it here', changedSince: null };
  return entries.map((e) => ({ ...e, live: live.get(e) ?? none }));
}

/**
 * What `isolate rollback` would undo now, read from the journal and the baseline as rollbackLast
 * reads them, nothing written and no lock taken (`isolate rollback --dry-run`), in the order the undo
 * takes them with these executors (undoOrder: controllers last), each with the live value it would
 * overwrite, read now through these executors (the value isolate wrote may have been changed since).
 */
export async function previewRollback(root: string, execs: Executors = {}): Promise<RollbackPreview> {
  const j = await readJournal(root);
  const baseline = await readBaseline(root);
  const open = (x: Journal) => {
    const { first, last } = undoOrder(x.entries, execs);
    return [...first, ...last];
  };
  const entries: JournalEntry[] = [];
  if (baseline) {
    // An interrupted apply is finished first, then everything since the last rollback.
    if (j && needsRecovery(j)) entries.push(...open(j));
    const all =
      j?.state === 'applied' ? foldJournal(structuredClone(baseline), j, pidAliveUnder(root)) : baseline;
    return { journalId: all.id, entries: await readLive([...entries, ...open(all)], execs) };
  }
  if (!j || j.state === 'rolled-back') return { journalId: j?.id ?? null, entries: [] };
  return { journalId: j.id, entries: await readLive(open(j), execs) };
}
