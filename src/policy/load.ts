// Loads a HostPolicy YAML file and validates it field by field. Every error names the file,
// line:column, the field path and what was expected, as one line (exit code 1).
import { isMap, isPair, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import { UserError } from '../model/errors.js';
import { ReadRefused, readTextFile } from '../sys/read.js';
import { parseRaidPolicy } from './raid.js';
import { allowOnly, boolean, exact, mapping, type Obj, object } from './validate.js';
import type { FieldErrors, FieldPath } from '../model/field.js';
import { describe } from './size.js';
import { CollectedErrors, FieldError } from './collected-errors.js';
import { cpuList } from './placement.js';
import { parseWorkload } from './workload.js';
import type { Match, Policy, WorkloadSpec } from '../model/policy.js';

export function loadPolicyFile(file: string): Policy {
  return parsePolicy(readPolicyText(file), file);
}

/** Largest policy file accepted: real ones are a few KiB; a bigger one is a mistake or an attack. */
export const POLICY_MAX_BYTES = 1024 * 1024;
/** Most workloads one policy may hold: a host runs a handful, not thousands. */
export const MAX_WORKLOADS = 256;

/** The policy file's text, or a one-line error naming the file. */
export function readPolicyText(file: string): string {
  try {
    return readTextFile(file, { maxBytes: POLICY_MAX_BYTES });
  } catch (err) {
    if (!(err instanceof ReadRefused)) throw err;
    throw policyReadError(file, err);
  }
}

/** The one-line error for a policy file that could not be read. */
export function policyReadError(file: string, err: ReadRefused): UserError {
  const fix =
    err.code === 'EFBIG' || err.code === 'EENCODING'
      ? 'a policy is a small UTF-8 YAML file'
      : 'pass an existing policy file with --policy';
  return new UserError(`${file}: cannot read policy (${err.reason}); ${fix}`);
}

export function parsePolicy(text: string, source: string): Policy {
  try {
    return parsePolicyUnguarded(text, source);
  } catch (err) {
    if (err instanceof UserError) throw err;
    // The YAML library's own failures (alias bombs, nesting deep enough to exhaust the stack) are
    // about the file, not about isolate: report them as such, in words of our own.
    const msg = err instanceof Error ? err.message : String(err);
    const why =
      err instanceof RangeError || /call stack/i.test(msg)
        ? 'is nested too deeply'
        : /alias/i.test(msg)
          ? 'has too many aliases (*name); alias expansion is limited to 100'
          : 'could not be read as YAML';
    throw new UserError(`${source}: YAML: the document ${why}; write the policy as plain YAML`);
  }
}

function parsePolicyUnguarded(text: string, source: string): Policy {
  const lineCounter = new LineCounter();
  // logLevel 'error': yaml's own warnings (a collection as a key) went to stderr beside ours.
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, logLevel: 'error' });
  const syntax = doc.errors[0];
  if (syntax) {
    const pos = syntax.linePos?.[0] ?? lineCounter.linePos(syntax.pos[0]);
    const where = `${source}:${pos.line}:${pos.col}`;
    if (syntax.code === 'MULTIPLE_DOCS') {
      throw new UserError(
        `${where}: YAML: a second document ("---") starts here; a policy file holds exactly one HostPolicy`,
      );
    }
    if (/call stack/i.test(syntax.message)) {
      throw new UserError(
        `${where}: YAML: the document is nested too deeply; write the policy as plain YAML`,
      );
    }
    const msg = quoteMessage(syntax.message.split('\n')[0]!.replace(/ at line \d+, column \d+.*$/, ''));
    throw new UserError(`${where}: YAML syntax error: ${msg}`);
  }

  const locate = (path: FieldPath, at: 'key' | 'value' = 'value'): string => {
    const node = nodeAt(doc.contents as Node | null, path, at);
    const offset = node?.range?.[0];
    if (offset === undefined) return source;
    const { line, col } = lineCounter.linePos(offset);
    return `${source}:${line}:${col}`;
  };
  const errors = new CollectedErrors(locate);
  const raw = doc.toJS({ maxAliasCount: 100 }) as unknown;
  let policy: Policy | undefined;
  try {
    policy = validatePolicy(raw, source, errors, locate);
  } catch (err) {
    if (!(err instanceof FieldError)) throw err;
    errors.found.push(err.message);
  }
  errors.settle();
  return policy!;
}

/** The YAML library's message, without its advice about its own API and at a bounded length. */
function quoteMessage(message: string): string {
  const short = message.length > 200 ? `${message.slice(0, 200)}…` : message;
  return short.replace(/[\u0000-\u001f\u007f]/g, '?');
}

/** Find the YAML node at a field path; for a missing field, the nearest existing parent. */
function nodeAt(root: Node | null, path: FieldPath, at: 'key' | 'value'): Node | null {
  let node: Node | null = root;
  for (const [i, seg] of path.entries()) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === seg);
      if (!pair) return node;
      const last = i === path.length - 1;
      node = last && at === 'key' ? (pair.key as Node) : ((pair.value as Node | null) ?? (pair.key as Node));
    } else if (isSeq(node) && typeof seg === 'number') {
      const item = node.items[seg] as Node | undefined;
      if (!item) return node;
      node = item;
    } else {
      return node;
    }
  }
  return node;
}

function validatePolicy(
  raw: unknown,
  source: string,
  errors: CollectedErrors,
  locate: Policy['locate'],
): Policy {
  const top = object(raw, [], errors, 'a HostPolicy mapping with apiVersion, kind and workloads');
  // Each part below is read on whatever the others hold: one run names every mistake (settle).
  errors.attempt(
    () =>
      allowOnly(top, [], ['apiVersion', 'kind', 'reserved', 'strict', 'quiet', 'workloads', 'raid'], errors),
    undefined,
  );
  errors.attempt(() => {
    if (top.apiVersion !== 'isolate/v1') {
      errors.fail(['apiVersion'], `expected "isolate/v1"; got ${describe(top.apiVersion)}`);
    }
  }, undefined);
  errors.attempt(() => {
    if (top.kind !== 'HostPolicy') errors.fail(['kind'], `expected "HostPolicy"; got ${describe(top.kind)}`);
  }, undefined);

  const reserved = errors.attempt(() => parseReserved(top.reserved, errors), undefined);
  const strict = errors.attempt(
    () => (top.strict === undefined ? false : boolean(top.strict, ['strict'], errors)),
    false,
  );
  const quiet = errors.attempt(() => parseQuiet(top.quiet, errors), undefined);
  const raid = errors.attempt(
    () => (top.raid === undefined ? undefined : parseRaidPolicy(top.raid, ['raid'], errors)),
    undefined,
  );

  if (!Array.isArray(top.workloads) || top.workloads.length === 0) {
    errors.fail(
      ['workloads'],
      Array.isArray(top.workloads)
        ? 'the list is empty; add at least one workload (an exclusive one for Kafka, e.g. { name: kafka, class: exclusive, cores: 4, match: { systemdUnit: kafka.service } })'
        : `expected a non-empty list of workloads; got ${describe(top.workloads)}`,
    );
  }
  if (top.workloads.length > MAX_WORKLOADS) {
    errors.fail(
      ['workloads'],
      `${top.workloads.length} workloads; a policy holds at most ${MAX_WORKLOADS} (one host runs a handful)`,
    );
  }
  const read = top.workloads.map((w, i) =>
    errors.attempt(() => parseWorkload(w, ['workloads', i], errors), undefined),
  );
  // What follows compares workloads with each other: only once each one has been read whole.
  errors.settle();
  const workloads = read as WorkloadSpec[];

  const names = new Map<string, number>();
  const targets = new Map<string, number>();
  workloads.forEach((w, i) => {
    const prev = names.get(w.name);
    if (prev !== undefined) {
      errors.fail(
        ['workloads', i, 'name'],
        `duplicate workload name "${w.name}" (also workloads[${prev}]); names must be unique`,
      );
    }
    names.set(w.name, i);
    const key = matchKey(w.match);
    const prevTarget = targets.get(key);
    if (prevTarget !== undefined) {
      errors.fail(
        ['workloads', i, 'match'],
        `same target as workloads[${prevTarget}] (${key}); each workload needs its own cgroup, unit or process`,
      );
    }
    targets.set(key, i);
  });
  checkNesting(workloads, errors);
  // A batch workload's io settings act on the exclusive workloads' disks: without any, it has none.
  if (!workloads.some((w) => w.class === 'exclusive' && w.disks)) {
    const i = workloads.findIndex(
      (w, j) => w.class === 'batch' && (top.workloads as Obj[])[j]?.io !== undefined,
    );
    if (i >= 0) {
      errors.fail(
        ['workloads', i, 'io'],
        "a batch workload's io settings act on the exclusive workloads' disks, and none has disks:; add disks: { paths: [...] } to the exclusive workload (e.g. kafka), or remove io:",
      );
    }
    for (const w of workloads) if (w.class === 'batch') delete w.io;
  }
  if (!workloads.some((w) => w.class === 'exclusive')) {
    errors.fail(
      ['workloads'],
      'no workload has class: exclusive; add one (e.g. kafka) or there is nothing to isolate',
    );
  }

  // errors.settle() above returned: every part was read, none fell back to undefined.
  return {
    source,
    apiVersion: 'isolate/v1',
    kind: 'HostPolicy',
    reserved: reserved!,
    strict,
    quiet: quiet!,
    workloads,
    raid: raid || undefined,
    locate,
  };
}

/**
 * Under cgroup v2 a child's cpuset is a subset of its parent's: an exclusive workload's cgroup
 * inside another workload's cgroup (or one inside it) cannot get CPUs of its own.
 */
function checkNesting(workloads: WorkloadSpec[], errors: FieldErrors): void {
  const cgroups = workloads.flatMap((w, i) =>
    w.match.kind === 'cgroup' ? [{ w, i, path: w.match.path }] : [],
  );
  for (const inner of cgroups) {
    for (const outer of cgroups) {
      if (inner === outer || !inner.path.startsWith(`${outer.path}/`)) continue;
      if (inner.w.class !== 'exclusive' && outer.w.class !== 'exclusive') continue;
      errors.fail(
        ['workloads', inner.i, 'match', 'cgroup'],
        `${inner.path} is inside ${outer.path}, the cgroup of workloads[${outer.i}] (${outer.w.name}, ${outer.w.class}); under cgroup v2 a child only gets CPUs its parent has, so ${inner.w.class === 'exclusive' ? `${inner.w.name} cannot be isolated from ${outer.w.name}` : `${outer.w.name}'s cores would be shared with ${inner.w.name}`} — give each workload its own top-level cgroup`,
      );
    }
  }
}

function parseQuiet(value: unknown, errors: FieldErrors): Policy['quiet'] {
  // On by default (issue 50): IRQs and packet steering for exclusive workloads. The workqueue mask,
  // a host-wide kernel setting, is left unset here: absent, it follows strict (planner/irqs.ts).
  if (value === undefined) return { irqs: true };
  const q = mapping(value, ['quiet'], errors, 'a mapping with irqs: true|false and workqueues: true|false', [
    'irqs',
    'workqueues',
  ]);
  return {
    irqs: q.irqs === undefined ? true : boolean(q.irqs, ['quiet', 'irqs'], errors),
    ...(q.workqueues === undefined
      ? {}
      : { workqueues: boolean(q.workqueues, ['quiet', 'workqueues'], errors) }),
  };
}

function parseReserved(value: unknown, errors: FieldErrors): Policy['reserved'] {
  if (value === undefined) return { cores: 1, per: 'package' };
  const r = mapping(value, ['reserved'], errors, 'a mapping with cores: N or cpus: "0,1"', [
    'cores',
    'cpus',
    'per',
  ]);
  if ((r.cores === undefined) === (r.cpus === undefined)) {
    errors.fail(
      ['reserved'],
      'set exactly one of cores (housekeeping cores per package) or cpus (a CPU list like "0,1")',
    );
  }
  if (r.cores !== undefined) {
    const expected = 'a whole number of cores, 0 or more';
    exact(r.cores, ['reserved', 'cores'], errors, expected);
    if (!Number.isSafeInteger(r.cores) || (r.cores as number) < 0) {
      errors.fail(['reserved', 'cores'], `expected ${expected}; got ${describe(r.cores)}`);
    }
    if (r.per === undefined) return { cores: r.cores as number, per: 'package' };
    if (r.per !== 'package' && r.per !== 'node') {
      errors.fail(
        ['reserved', 'per'],
        `expected package (N cores of every socket) or node (N cores of every NUMA node); got ${describe(r.per)}`,
      );
    }
    return { cores: r.cores as number, per: r.per as 'package' | 'node' };
  }
  if (r.per !== undefined) {
    errors.fail(['reserved', 'per'], 'per applies to cores only; remove it, or use cores: N instead of cpus');
  }
  return { cpus: cpuList(r.cpus, ['reserved', 'cpus'], errors) };
}

function matchKey(m: Match): string {
  if (m.kind === 'systemdUnit') return `systemdUnit ${m.unit}`;
  if (m.kind === 'cgroup') return `cgroup ${m.path}`;
  return `process ${m.cmdline ?? ''}|${m.exe ?? ''}|${m.user ?? ''}`;
}
