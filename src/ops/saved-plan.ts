// What `isolate plan` saves and `isolate apply --plan` takes back. A saved plan is input like any
// other — anyone may have written the file — so:
// - every field is checked against its schema before anything in it is used;
// - it chooses nothing that is executed: tool paths come from the command line, the environment or the
//   vendors' fixed list, and a plan saved with other options is refused;
// - it is applied as verified, not as written: apply plans afresh from the embedded policy, requires
//   the same fingerprint and the same allocation and changes as the file holds, and then carries out
//   the fresh plan's changes, so an edit anywhere in the file is refused with the edit named.
import { cgroupTarget, describeChange } from '../model/describe.js';
import { UserError } from '../model/errors.js';
import type { Change, Plan } from '../model/plan.js';
import {
  arrayOf,
  change,
  type Check,
  executorOptions,
  int,
  matching,
  nullable,
  object,
  oneOf,
  record,
  refuseNewerFormat,
  str,
  sha256Hex,
  timestamp,
  WORKLOAD_NAME,
  either,
} from '../model/shape.js';
import { fingerprintOf, type PlanJson, planToJson } from '../planner/json.js';
import { ReadRefused, readTextFile } from '../sys/read.js';
import { describeUntrusted } from '../sys/trust.js';
import { readTrustedText, TrustRefused } from '../sys/trusted-read.js';
import { writeFileAtomic } from '../sys/write.js';
import type { BuiltPlan, ExecutorOptions } from './built-plan.js';
import { type PolicySource, sha256 } from './policy-source.js';

/** What `isolate plan` saves: the plan, the policy it came from, and how to carry it out. */
/** The saved plan format this isolate writes and the newest it reads (see JOURNAL_FORMAT). */
export const SAVED_PLAN_FORMAT = 1 as const;

export interface SavedPlan extends PlanJson {
  version: typeof SAVED_PLAN_FORMAT;
  createdAt: string;
  root: string;
  policy: PolicySource;
  executorOptions: ExecutorOptions;
}

export function toSavedPlan(
  built: BuiltPlan,
  root: string,
  json: PlanJson = planToJson(built.plan),
): SavedPlan {
  // The disks are facts shown with the plan, not part of what apply carries out.
  const { disks: _shown, ...plan } = json;
  return {
    version: SAVED_PLAN_FORMAT,
    ...plan,
    createdAt: new Date().toISOString(),
    root,
    // The text and its hash only: a getter (policy-source.ts) would not survive JSON.
    policy: { path: built.source.path, text: built.source.text, sha256: built.source.sha256 },
    executorOptions: built.executorOptions,
  };
}

export async function savePlan(file: string, saved: SavedPlan, ownStateDir = false): Promise<void> {
  try {
    await writeFileAtomic(file, `${JSON.stringify(saved, null, 2)}\n`, { createParents: ownStateDir });
  } catch (err) {
    if (err instanceof UserError) throw new UserError(`--out ${err.message}`);
    throw new UserError(
      `cannot save the plan to ${file} (${(err as Error).message}); use --out FILE or --dry-run`,
    );
  }
}

/** A saved plan embeds its policy (at most 1 MiB) and its changes: far below this. */
const SAVED_PLAN_MAX_BYTES = 16 * 1024 * 1024;

const CPU = int(0, 65_535);
const cpuIds = arrayOf(CPU, 65_536);
const bytes = either(int(0, Number.MAX_SAFE_INTEGER), oneOf(['max']));

/** The schema of a saved plan (SavedPlan above and PlanJson in planner/json.ts), field by field. */
const SAVED_PLAN: Check = object(
  {
    version: oneOf([SAVED_PLAN_FORMAT]),
    allocation: record(
      WORKLOAD_NAME,
      object({
        class: oneOf(['exclusive', 'batch']),
        target: matching(/^\/[^\0]*$/, 'a cgroup path'),
        cpus: cpuIds,
        cpuList: str(4096),
        cores: cpuIds,
        nodes: arrayOf(int(0, 65_535), 4096),
        mems: arrayOf(int(0, 65_535), 4096),
        memory: object({}, { min: bytes, low: bytes, high: bytes, max: bytes }),
        reason: str(4096),
      }),
      4096,
    ),
    reserved: object({ cpus: cpuIds, cpuList: str(4096), reason: str(4096) }),
    changes: arrayOf(change, 1_000_000),
    warnings: arrayOf(str(), 10_000),
    fingerprint: sha256Hex,
    createdAt: timestamp,
    root: str(4096),
    policy: object({
      path: str(4096),
      text: str(1024 * 1024),
      sha256: sha256Hex,
    }),
    executorOptions,
  },
  { layout: nullable(str(4096)), notes: arrayOf(str(), 10_000) },
);

/** A saved plan, every field checked; refused with the first field that is wrong. */
export function readSavedPlan(file: string): SavedPlan {
  // Read from the object judged (sys/trusted-read.ts), so a missing file is said as such and a plan
  // another user could have written or swapped in is refused as such a policy file is: a saved plan
  // embeds a policy.
  const data = readJsonDocument(file, 'the saved plan', 'save one with "isolate plan"', true);
  const bad = (what: string) =>
    new UserError(`--plan ${file}: ${what}; save a new plan with "isolate plan" and review it`);
  // Not a state to undo: the fix is the newer isolate, or a plan saved by this one.
  refuseNewerFormat(
    data,
    file,
    'saved plan',
    SAVED_PLAN_FORMAT,
    'upgrade isolate, or apply it with the version that wrote it, or save a new plan with this one ("isolate plan")',
  );
  if (typeof data === 'object' && data !== null && !('policy' in data) && 'changes' in data) {
    throw bad('it does not embed its policy (saved by an older isolate?)');
  }
  const wrong = SAVED_PLAN(data, 'plan');
  if (wrong) throw bad(`not a plan "isolate plan" saves: ${wrong}`);
  const saved = data as SavedPlan;
  if (sha256(saved.policy.text) !== saved.policy.sha256) {
    throw bad('its embedded policy does not match its sha256 (edited by hand?)');
  }
  return saved;
}

/**
 * A JSON document isolate wrote (a plan, a journal): bounded, UTF-8, parsed; a one-line refusal else.
 * `trusted`: one root acts on, read only from an object no other user could have written or swapped.
 */
export function readJsonDocument(file: string, what: string, fix: string, trusted = false): unknown {
  try {
    const opts = { maxBytes: SAVED_PLAN_MAX_BYTES };
    return JSON.parse(trusted ? readTrustedText(file, opts).text : readTextFile(file, opts));
  } catch (err) {
    if (err instanceof TrustRefused) {
      throw new UserError(
        `--plan ${file}: refused, ${describeUntrusted(err.untrusted)} — a saved plan decides where root puts every process, so only one that root alone can change is applied`,
      );
    }
    const why =
      err instanceof ReadRefused
        ? err.reason
        : err instanceof SyntaxError
          ? 'not valid JSON'
          : (err as Error).message;
    throw new UserError(`--plan ${file}: cannot read ${what} (${why}); ${fix}`);
  }
}

/**
 * Refuses a saved plan made for another root than this apply's: its changes were computed from that
 * tree, and a hint pasted without its --root would otherwise carry a fixture's plan to the real host.
 */
export function checkSavedRoot(file: string, saved: SavedPlan, root: string): void {
  if (saved.root === root) return;
  const flag = (r: string) => (r === '/' ? 'the host itself (no --root)' : `--root ${r}`);
  throw new UserError(
    `--plan ${file}: it was made for ${flag(saved.root)}, this apply is for ${flag(root)}; run "isolate apply${saved.root === '/' ? '' : ` --root ${saved.root}`} --plan ${file}", or "isolate plan" for this root`,
  );
}

/**
 * Refuses a saved plan whose executor options (what would be run, and how) differ from the ones this
 * command has: a plan never chooses a binary.
 */
export function checkSavedOptions(file: string, saved: SavedPlan, now: ExecutorOptions): void {
  const a = canonical(saved.executorOptions);
  const b = canonical(now);
  if (a === b) return;
  throw new UserError(
    `--plan ${file}: it was saved to run with ${describeOptions(saved.executorOptions)}, this apply runs with ${describeOptions(now)}; tool paths come only from --tool-path, ISOLATE_RAID_TOOL_PATH or the vendors' install paths, never from a plan: pass the same ones, or run "isolate plan" again`,
  );
}

function describeOptions(o: ExecutorOptions): string {
  if (!o.raid) return 'no RAID tool';
  const paths = Object.entries(o.raid.toolPaths ?? {}).map(([t, p]) => `${t}=${p}`);
  return `RAID tools ${paths.length > 0 ? paths.join(',') : "at the vendors' install paths"} (timeout ${o.raid.timeoutMs} ms)`;
}

/** JSON with object keys sorted, so equal values compare equal whatever order they were written in. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  );
}

/**
 * The changes to carry out for a saved plan: the fresh plan's, once it has the saved fingerprint and
 * the file says exactly what the fresh plan says. The host moving on and the file being edited are
 * refused apart, each with the first value that differs.
 */
export function verifiedChanges(file: string, saved: SavedPlan, now: Plan): Change[] {
  const fresh = planToJson(now);
  const edited = (what: string) =>
    new UserError(
      `--plan ${file}: the plan was edited after it was saved (${what}); only what its embedded policy plans is applied: run "isolate plan" again and review it`,
    );
  // The file's own content against the fingerprint it carries: an edit shows even on a host that moved on.
  if (fingerprintOf(saved) !== saved.fingerprint) {
    throw edited(firstEdit(saved, fresh) ?? 'its allocation and changes do not match its fingerprint');
  }
  if (fresh.fingerprint !== saved.fingerprint) {
    throw new UserError(
      `--plan ${file}: the host changed since the plan was saved (${firstDifference(saved.changes, fresh.changes)}); run "isolate plan" again and review it`,
    );
  }
  const edit = firstEdit(saved, fresh);
  if (edit) throw edited(edit);
  return now.changes;
}

/** Where the file's plan differs from what its own policy plans on this host, or null. */
function firstEdit(saved: SavedPlan, fresh: PlanJson): string | null {
  const count = Math.max(saved.changes.length, fresh.changes.length);
  for (let i = 0; i < count; i++) {
    const a = saved.changes[i];
    const b = fresh.changes[i];
    if (a && b && canonical(a) === canonical(b)) continue;
    if (!a) return `change ${i + 1} (${describeChange(b as Change)}) is missing from the file`;
    if (!b) return `change ${i + 1} (${describeChange(a)}) is not in the plan its policy makes`;
    return `change ${i + 1} reads "${describeChange(a)}", its policy plans "${describeChange(b)}"`;
  }
  const names = new Set([...Object.keys(saved.allocation), ...Object.keys(fresh.allocation)]);
  for (const name of names) {
    if (canonical(saved.allocation[name]) !== canonical(fresh.allocation[name])) {
      return `the allocation of ${name} differs from what its policy plans`;
    }
  }
  if (canonical(saved.reserved) !== canonical(fresh.reserved)) return 'the reserved CPUs differ';
  if ((saved.layout ?? null) !== (fresh.layout ?? null)) return 'the cgroup layout differs';
  return null;
}

/** The first value that differs between a saved plan and the host now, as a person reads it. */
export function firstDifference(saved: Change[], now: Change[]): string {
  const id = (c: Change) =>
    `${c.backend} ${cgroupTarget(c)} ${c.setting}${c.setting === 'cgroup.procs' || c.setting === 'tasks' ? ` ${c.to}` : ''}`;
  const show = (v: string | null) => (v === null ? '(absent)' : `"${v}"`);
  const nowById = new Map(now.map((c) => [id(c), c]));
  for (const [i, a] of saved.entries()) {
    const b = nowById.get(id(a));
    const what = `${cgroupTarget(a)} ${a.setting}`;
    if (!b) return `saved change ${i + 1} (${describeChange(a)}) is no longer needed`;
    if (a.from !== b.from) return `${what} was ${show(a.from)} when planned, is ${show(b.from)} now`;
    if (a.to !== b.to) return `${what} would now be set to ${show(b.to)}, the plan says ${show(a.to)}`;
  }
  const savedIds = new Set(saved.map(id));
  const extra = now.find((c) => !savedIds.has(id(c)));
  return extra ? `the host now also needs: ${describeChange(extra)}` : 'the allocation differs';
}
