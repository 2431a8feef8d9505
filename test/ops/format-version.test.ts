// Across an upgrade and back, one isolate reads another's state files: the journal, the baseline,
// the assignment checkpoint and saved plans. This version reads what it writes today (the format
// N+1 inherits from N), and a file in a newer format is refused with one line naming the file, its
// version and the fix, by every command that would read it: never misread, never overwritten.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  JOURNAL_FORMAT,
  baselinePath,
  journalPath,
  readBaseline,
  readJournal,
} from '../../src/apply/journal.js';
import { oneLine } from '../../src/model/errors.js';
import { NewerFormatError } from '../../src/model/shape.js';
import { apply, rollback } from '../../src/ops/apply.js';
import { ASSIGNMENT_FORMAT, assignmentPath } from '../../src/ops/assignment.js';
import { check } from '../../src/ops/check.js';
import { buildPlan, plan } from '../../src/ops/plan.js';
import { readSavedPlan, SAVED_PLAN_FORMAT } from '../../src/ops/saved-plan.js';
import { fakeCgroupHost } from '../support/cgroup-tree.js';
import { KAFKA_YARN_POLICY } from '../support/policies.js';

const POLICY = KAFKA_YARN_POLICY;

function host() {
  const { root, cg } = fakeCgroupHost(['kafka.slice', 'hadoop-yarn']);
  mkdirSync(join(root, 'etc/isolate'), { recursive: true });
  const policyPath = join(root, 'etc/isolate/policy.yaml');
  writeFileSync(policyPath, POLICY);
  return { root, cg, policyPath };
}

/** A host after two applies (the second corrects drift): a journal, a baseline and an assignment. */
async function appliedTwice() {
  const h = host();
  await apply({ root: h.root, policyPath: h.policyPath });
  writeFileSync(join(h.cg, 'hadoop-yarn/cpuset.cpus'), '0-7\n');
  const second = await apply({ root: h.root, policyPath: h.policyPath });
  expect(second.changed).toBeGreaterThan(0);
  for (const f of [journalPath(h.root), baselinePath(h.root), assignmentPath(h.root)]) {
    expect(existsSync(f), f).toBe(true);
  }
  return h;
}

/** The file as a newer isolate would write it: its format version raised, the rest unchanged. */
function fromTheFuture(file: string, version: number): void {
  const data = JSON.parse(readFileSync(file, 'utf8'));
  data.version = version;
  writeFileSync(file, `${JSON.stringify(data, null, 1)}\n`);
}

const refusal = (file: string, what: string, version: number, known: number) =>
  new RegExp(
    `^${what} ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} was written in format version ${version}, this isolate reads up to version ${known}: upgrade isolate, or run the rollback with the version that wrote it$`,
  );

async function refusedWith(p: Promise<unknown>, pattern: RegExp): Promise<void> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'expected a refusal').toBeInstanceOf(NewerFormatError);
  const message = (err as Error).message;
  expect(oneLine(message)).toBe(message);
  expect(message).toMatch(pattern);
}

describe("today's state files are read back", () => {
  it('journal, baseline and assignment written by apply carry their format version and read', async () => {
    const h = await appliedTwice();
    const j = await readJournal(h.root);
    const b = await readBaseline(h.root);
    expect(j?.version).toBe(JOURNAL_FORMAT);
    expect(b?.version).toBe(JOURNAL_FORMAT);
    expect(JSON.parse(readFileSync(assignmentPath(h.root), 'utf8')).version).toBe(ASSIGNMENT_FORMAT);
    // The next isolate plans from the assignment and reports from the journals without a word.
    const { plan: p } = await buildPlan({ root: h.root, policyPath: h.policyPath });
    expect(p.changes).toEqual([]);
    expect(p.warnings.join('\n')).not.toMatch(/assignment/);
    const report = await check({ root: h.root, policyPath: h.policyPath });
    expect(report.findings.filter((f) => f.severity === 'critical')).toEqual([]);
    const r = await rollback({ root: h.root });
    expect(r.undone).toBeGreaterThan(0);
  });

  it('a saved plan carries its format version and is taken back', async () => {
    const h = host();
    const file = join(h.root, 'plan.json');
    await plan({ root: h.root, policyPath: h.policyPath, saveTo: file });
    expect(readSavedPlan(file).version).toBe(SAVED_PLAN_FORMAT);
    const applied = await apply({ root: h.root, planFile: file });
    expect(applied.changed).toBeGreaterThan(0);
  });
});

describe('a state file from a newer format is refused, naming the file, its version and the fix', () => {
  it('journal: rollback, apply, plan and check refuse; the host and the file are left as they were', async () => {
    const h = await appliedTwice();
    const file = journalPath(h.root);
    fromTheFuture(file, JOURNAL_FORMAT + 1);
    const text = readFileSync(file, 'utf8');
    writeFileSync(join(h.cg, 'hadoop-yarn/cpuset.cpus'), '0-7\n');
    const want = refusal(file, 'journal', JOURNAL_FORMAT + 1, JOURNAL_FORMAT);
    await refusedWith(rollback({ root: h.root }), want);
    await refusedWith(apply({ root: h.root, policyPath: h.policyPath }), want);
    await refusedWith(check({ root: h.root, policyPath: h.policyPath }), want);
    await refusedWith(readJournal(h.root), want);
    // Nothing was undone or corrected, and the newer isolate finds its journal as it left it.
    expect(readFileSync(join(h.cg, 'hadoop-yarn/cpuset.cpus'), 'utf8')).toBe('0-7\n');
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  it('baseline: rollback and an apply with changes to make refuse before any write', async () => {
    const h = await appliedTwice();
    const file = baselinePath(h.root);
    fromTheFuture(file, 7);
    const text = readFileSync(file, 'utf8');
    const want = refusal(file, 'baseline', 7, JOURNAL_FORMAT);
    await refusedWith(rollback({ root: h.root }), want);
    writeFileSync(join(h.cg, 'hadoop-yarn/cpuset.cpus'), '0-7\n');
    const journalBefore = readFileSync(journalPath(h.root), 'utf8');
    await refusedWith(apply({ root: h.root, policyPath: h.policyPath }), want);
    await refusedWith(check({ root: h.root, policyPath: h.policyPath }), want);
    expect(readFileSync(join(h.cg, 'hadoop-yarn/cpuset.cpus'), 'utf8')).toBe('0-7\n');
    expect(readFileSync(journalPath(h.root), 'utf8')).toBe(journalBefore);
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  it('assignment: planning refuses instead of choosing cores afresh and overwriting it', async () => {
    const h = await appliedTwice();
    const file = assignmentPath(h.root);
    fromTheFuture(file, ASSIGNMENT_FORMAT + 1);
    const text = readFileSync(file, 'utf8');
    const want = refusal(file, 'assignment', ASSIGNMENT_FORMAT + 1, ASSIGNMENT_FORMAT);
    await refusedWith(buildPlan({ root: h.root, policyPath: h.policyPath }), want);
    await refusedWith(apply({ root: h.root, policyPath: h.policyPath }), want);
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  it('saved plan: apply --plan refuses it with its own fix', async () => {
    const h = host();
    const file = join(h.root, 'plan.json');
    await plan({ root: h.root, policyPath: h.policyPath, saveTo: file });
    fromTheFuture(file, SAVED_PLAN_FORMAT + 1);
    await refusedWith(
      apply({ root: h.root, planFile: file }),
      new RegExp(
        `^saved plan ${file.replace(/[.]/g, '\\.')} was written in format version ${SAVED_PLAN_FORMAT + 1}, this isolate reads up to version ${SAVED_PLAN_FORMAT}: upgrade isolate, or apply it with the version that wrote it, or save a new plan with this one \\("isolate plan"\\)$`,
      ),
    );
    expect(existsSync(journalPath(h.root))).toBe(false);
  });

  it('an older or malformed version is left to the schema: unreadable, not "newer"', async () => {
    const h = await appliedTwice();
    for (const version of [0, '2', 1.5]) {
      const data = JSON.parse(readFileSync(journalPath(h.root), 'utf8'));
      data.version = version;
      writeFileSync(journalPath(h.root), JSON.stringify(data));
      const err = await readJournal(h.root).catch((e: unknown) => e);
      expect(err).not.toBeInstanceOf(NewerFormatError);
      expect((err as Error).message).toMatch(
        /journal .* is unreadable \(journal\.version: .* is not one of 1, 2\)/,
      );
    }
  });
});
