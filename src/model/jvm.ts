// A JVM sizes its garbage-collector workers and JIT compiler threads once, from the CPUs it may use
// when it starts; a narrower cpuset later does not shrink them. This is the judgement of a running
// JVM's pools against the CPUs it has now, from what /proc shows of it (cgroup/jvm.ts reads it).
// Pure: the check, the plan and the tests judge the same facts alike.

/** The -XX flags that decide the pools (and the hygiene findings), as the JVM will read them. */
export interface JvmFlags {
  activeProcessorCount?: number;
  parallelGCThreads?: number;
  concGCThreads?: number;
  ciCompilerCount?: number;
  /** -XX:+PerfDisableSharedMem: the performance-data file is not a memory-mapped file on disk. */
  perfDisableSharedMem?: boolean;
  /** -XX:-UsePerfData: no performance data at all. */
  usePerfData?: boolean;
}

/**
 * The pools' threads seen in /proc/PID/task/TID/comm: lower bounds, because G1 (and Parallel, from
 * JDK 15) start GC workers only when a collection needs them (UseDynamicNumberOfGCThreads), and JIT
 * compiler threads come and go since JDK 11 (UseDynamicNumberOfCompilerThreads).
 */
export interface JvmThreads {
  /** Parallel GC workers: `GC Thread#N` (JDK 9+), `GC task thread#` (JDK 8's Parallel GC). */
  gc: number;
  /** G1's concurrent marking workers: `G1 Conc#N`. */
  conc: number;
  /** `C1 CompilerThre…` and `C2 CompilerThre…` (a comm is cut at 15 bytes). */
  c1: number;
  c2: number;
}

/** How a process was recognised as a JVM, without attaching to it. */
export type JvmDetection = 'launcher' | 'runtime-image' | 'libjvm';

export interface JvmFacts {
  pid: number;
  /** The executable (the /proc/PID/exe link), for messages. */
  exe: string;
  how: JvmDetection;
  /** When the process started, in seconds since the epoch (/proc/PID/stat field 22 + btime); null: unknown. */
  startedAt: number | null;
  /** How many CPUs it may use now (its main thread's Cpus_allowed_list). */
  cpus: number;
  flags: JvmFlags;
  threads: JvmThreads;
  /** The hsperfdata file it maps from a disk-backed file system (`/tmp/hsperfdata_USER/PID`), if any. */
  perfDataFile: string | null;
}

/**
 * When isolate last changed the CPUs this process may use (its workload's cpuset or AllowedCPUs, or
 * its move into the workload's cgroup), from the apply journal and the baseline. null: isolate has no
 * dated record of a change (it did not make one, or it was recorded before changes were dated): the
 * cgroup files do not say when a change someone else made happened.
 */
export interface CpuChange {
  /** Seconds since the epoch. */
  at: number;
  /** How many CPUs it had before isolate's first change, when the journal's old value is a CPU list. */
  before: number | null;
}

// HotSpot's ergonomics, for `n` active processors (os::active_processor_count(): the affinity
// mask's size, or -XX:ActiveProcessorCount).

/**
 * ParallelGCThreads: WorkerPolicy::nof_parallel_worker_threads(5, 8, 8) (gc/shared/workerPolicy.cpp,
 * JDK 11-21; Abstract_VM_Version::nof_parallel_worker_threads in JDK 8): every CPU up to 8, then 5 of
 * every 8 more.
 */
export function ergoParallelGcThreads(n: number): number {
  return n <= 8 ? n : 8 + Math.floor(((n - 8) * 5) / 8);
}

/**
 * G1's ConcGCThreads: G1ConcurrentMark::scale_concurrent_worker_threads (gc/g1/g1ConcurrentMark.cpp,
 * JDK 10+): MAX2((ParallelGCThreads + 2) / 4, 1).
 */
export function ergoConcGcThreads(parallel: number): number {
  return Math.max(Math.floor((parallel + 2) / 4), 1);
}

/**
 * CICompilerCount with tiered compilation and CICompilerCountPerCPU (the defaults):
 * CompilationPolicy::initialize (compiler/compilationPolicy.cpp, JDK 17; tieredThresholdPolicy.cpp in
 * JDK 11): count = MAX2(log2(n) * log2(MAX2(log2(n), 1)) * 3 / 2, 2); C1 gets MAX2(count / 3, 1),
 * C2 the rest. (A small code cache can lower it further; never raise it.)
 */
export function ergoCompilerThreads(n: number): { c1: number; c2: number } {
  const log = Math.floor(Math.log2(Math.max(n, 1)));
  const loglog = Math.floor(Math.log2(Math.max(log, 1)));
  const count = Math.max(Math.floor((log * loglog * 3) / 2), 2);
  const c1 = Math.max(Math.floor(count / 3), 1);
  return { c1, c2: Math.max(count - c1, 1) };
}

/** The most CPUs anyone sizes for: beyond it a count implies nothing more. */
const MAX_CPUS = 8192;

/** The fewest CPUs whose ergonomics give at least `seen` threads of a pool (monotone in n). */
function fewestCpusFor(seen: number, pool: (n: number) => number): number {
  if (seen <= pool(1)) return 1;
  let lo = 1;
  let hi = MAX_CPUS;
  if (pool(hi) < seen) return hi;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (pool(mid) >= seen) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** Sized for more CPUs than it has (`over`), fewer (`under`), as many (`ok`), or no evidence (`unknown`). */
export type JvmSizing = 'over' | 'under' | 'ok' | 'unknown';

export interface JvmJudgement {
  sizing: JvmSizing;
  /** How many CPUs its pools were sized for (at least, when only thread counts say so); null: unknown. */
  sizedFor: number | null;
  /** `sizedFor` is what the pools' thread counts prove, a lower bound (G1 starts workers lazily). */
  atLeast: boolean;
  /** -XX:ActiveProcessorCount decided it (the threads prove no more than the flag's count). */
  pinned: boolean;
  /** The facts the judgement rests on, each a short phrase for a finding or a plan note. */
  evidence: string[];
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const when = (s: number) => new Date(s * 1000).toISOString().replace(/\.\d+Z$/, 'Z');

/**
 * Judge a JVM's pools against the CPUs it may use now. An explicit -XX:ActiveProcessorCount says what
 * the JVM sized for, unless its threads prove more: a pool with more threads than the ergonomics give
 * for the flag's count (or today's CPUs) proves it was sized for more (a count is a lower bound, so
 * fewer proves nothing), whatever a flag read from the command line or the environment claims (a
 * flag can be misread, or not honoured by this launcher). Without the flag, a start after isolate's
 * last change of its CPUs proves it was sized for them; a start before it, for the CPUs it had then.
 */
export function judgeJvm(j: JvmFacts, change: CpuChange | null): JvmJudgement {
  const evidence: string[] = [];
  const now = j.cpus;
  const apc = j.flags.activeProcessorCount;
  if (apc !== undefined) evidence.push(`-XX:ActiveProcessorCount=${apc}`);
  const atLeast = provenByThreads(j, apc ?? now, evidence);
  // Evidence beats a claimed flag: pools larger than the flag would make are judged as if it were
  // absent (it was misread, or this launcher did not honour it).
  if (apc !== undefined && atLeast <= apc) {
    return {
      sizing: apc > now ? 'over' : apc < now ? 'under' : 'ok',
      sizedFor: apc,
      atLeast: false,
      pinned: true,
      evidence,
    };
  }

  let fromTime: number | null = null;
  if (change && j.startedAt !== null) {
    if (j.startedAt > change.at) {
      evidence.push(`started ${when(j.startedAt)}, after isolate set its CPUs (${when(change.at)})`);
      fromTime = now;
    } else {
      evidence.push(`started ${when(j.startedAt)}, before isolate changed its CPUs (${when(change.at)})`);
      fromTime = change.before;
      if (change.before !== null) evidence.push(`it had ${plural(change.before, 'CPU')} then`);
    }
  } else if (!change) {
    evidence.push('when its CPUs last changed is unknown');
  }

  if (atLeast > now) {
    const sizedFor = Math.max(atLeast, fromTime ?? 0);
    const lower = fromTime === null || fromTime < atLeast;
    return { sizing: 'over', sizedFor, atLeast: lower, pinned: false, evidence };
  }
  if (fromTime === null)
    return { sizing: 'unknown', sizedFor: null, atLeast: false, pinned: false, evidence };
  return {
    sizing: fromTime > now ? 'over' : fromTime < now ? 'under' : 'ok',
    sizedFor: fromTime,
    atLeast: false,
    pinned: false,
    evidence,
  };
}

/**
 * The fewest CPUs the pools' threads (and the counts set by hand) prove the JVM sized for, when that
 * is more than `n` (the CPUs its ergonomics ran with: the flag's count, or today's CPUs); 0 otherwise.
 * Each pool that proves it adds a phrase to `evidence`.
 */
function provenByThreads(j: JvmFacts, n: number, evidence: string[]): number {
  let atLeast = 0;
  const pool = (seen: number, name: string, explicit: number | undefined, ergo: (n: number) => number) => {
    if (explicit !== undefined) {
      // Sized by hand: more than the CPUs would get is the same problem, fixed in the flag.
      if (explicit > ergo(n)) {
        evidence.push(`${name}=${explicit} set by hand, ergonomics give ${ergo(n)} for ${n} CPUs`);
        atLeast = Math.max(atLeast, fewestCpusFor(explicit, ergo));
      }
      return;
    }
    if (seen > ergo(n)) {
      evidence.push(`${plural(seen, `${name} thread`)} (ergonomics give ${ergo(n)} for ${n} CPUs)`);
      atLeast = Math.max(atLeast, fewestCpusFor(seen, ergo));
    }
  };
  const parallel = j.flags.parallelGCThreads;
  pool(j.threads.gc, 'GC worker', parallel, ergoParallelGcThreads);
  pool(j.threads.conc, 'G1 concurrent', j.flags.concGCThreads, (k) =>
    ergoConcGcThreads(parallel ?? ergoParallelGcThreads(k)),
  );
  const cic = j.flags.ciCompilerCount;
  if (cic !== undefined) {
    const ergo = (k: number) => ergoCompilerThreads(k).c1 + ergoCompilerThreads(k).c2;
    pool(0, 'CICompilerCount', cic, ergo);
  } else {
    pool(j.threads.c1, 'C1 compiler', undefined, (k) => ergoCompilerThreads(k).c1);
    pool(j.threads.c2, 'C2 compiler', undefined, (k) => ergoCompilerThreads(k).c2);
  }
  return atLeast;
}

/** The flags the JVM reads from its command line and the launcher's environment variables. */
export function parseJvmFlags(args: readonly string[]): JvmFlags {
  const out: JvmFlags = {};
  // Later wins, as HotSpot reads them.
  for (const a of args) {
    const m = /^-XX:(ActiveProcessorCount|ParallelGCThreads|ConcGCThreads|CICompilerCount)=(\d{1,6})$/.exec(
      a,
    );
    if (m) {
      const n = Number(m[2]);
      if (m[1] === 'ActiveProcessorCount') out.activeProcessorCount = n;
      else if (m[1] === 'ParallelGCThreads') out.parallelGCThreads = n;
      else if (m[1] === 'ConcGCThreads') out.concGCThreads = n;
      else out.ciCompilerCount = n;
      continue;
    }
    const b = /^-XX:([+-])(PerfDisableSharedMem|UsePerfData)$/.exec(a);
    if (b) {
      if (b[2] === 'PerfDisableSharedMem') out.perfDisableSharedMem = b[1] === '+';
      else out.usePerfData = b[1] === '+';
    }
  }
  // ActiveProcessorCount=0 or -1 means "ask the OS" (its default is -1).
  if (out.activeProcessorCount !== undefined && out.activeProcessorCount < 1) delete out.activeProcessorCount;
  return out;
}

/**
 * The java launcher's options whose value is the next argument (`java --help`, JDK 9-21): that word is
 * a class path or a module name, never the main class.
 */
const TAKES_VALUE = new Set([
  '-cp',
  '-classpath',
  '--class-path',
  '-p',
  '--module-path',
  '--upgrade-module-path',
  '--add-modules',
  '--limit-modules',
  '--add-reads',
  '--add-exports',
  '--add-opens',
  '--patch-module',
  '--enable-native-access',
  '--source',
]);

/**
 * The launcher's own options on a command line (argv[0] excluded): every word up to the main class,
 * `-jar FILE`, `-m`/`--module MODULE[/CLASS]` or a source file. The words after those are the
 * application's arguments (an `-XX:` there is not a JVM flag). An `@argfile` (JDK 9+) is skipped: its
 * contents are not read, so a flag in it is not seen (the threads still speak).
 */
export function launcherOptions(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '-jar' || a === '-m' || a === '--module' || a.startsWith('--module=')) break;
    if (a.startsWith('@')) continue;
    if (!a.startsWith('-')) break; // the main class, or --source's file
    out.push(a);
    if (TAKES_VALUE.has(a) && i + 1 < args.length) out.push(args[++i] as string);
  }
  return out;
}

/**
 * The runtime's feature version from its `release` file (`JAVA_VERSION="1.8.0_362"` → 8,
 * `"17.0.9"` → 17, `"21"` → 21); null when the text says none.
 */
export function javaFeatureVersion(release: string | null): number | null {
  const m = /^JAVA_VERSION="(\d{1,3})(?:\.(\d{1,3}))?[^"]*"$/m.exec(release ?? '');
  if (!m) return null;
  const first = Number(m[1]);
  return first === 1 && m[2] !== undefined ? Number(m[2]) : first;
}

/**
 * The JVM's arguments in the order HotSpot applies them, later winning: JAVA_TOOL_OPTIONS, then
 * JDK_JAVA_OPTIONS (the `java` launcher of JDK 9 and later puts it before the command line's own; JDK
 * 8's launcher, and any other program that embeds the JVM, ignores it), the command line's launcher
 * options, then _JAVA_OPTIONS. `launcherVersion` is the feature version of the `java` launcher that
 * started it; null when it is unknown or the process is not a `java` launcher: JDK_JAVA_OPTIONS is then
 * not honoured (a flag the JVM may not have read must not decide the judgement). `env` holds only the
 * option variables (cgroup/jvm.ts reads no others).
 */
export function jvmArgs(
  cmdline: readonly string[],
  env: Record<string, string>,
  launcherVersion: number | null,
): string[] {
  const split = (v: string | undefined) => (v ?? '').split(/\s+/).filter(Boolean);
  const jdk = launcherVersion !== null && launcherVersion >= 9 ? split(env.JDK_JAVA_OPTIONS) : [];
  return [
    ...split(env.JAVA_TOOL_OPTIONS),
    ...jdk,
    ...launcherOptions(cmdline.slice(1)),
    ...split(env._JAVA_OPTIONS),
  ];
}

/** The environment variables a JVM takes options from (the only ones read from /proc/PID/environ). */
export const JVM_OPTION_VARIABLES = ['JAVA_TOOL_OPTIONS', 'JDK_JAVA_OPTIONS', '_JAVA_OPTIONS'] as const;

/** Count a JVM's pool threads from their names (/proc/PID/task/TID/comm). */
export function countPoolThreads(names: Iterable<string>): JvmThreads {
  const t: JvmThreads = { gc: 0, conc: 0, c1: 0, c2: 0 };
  // Workers are numbered from 0 and never exit, so the highest number seen counts the ones before it.
  let gcTop = 0;
  let concTop = 0;
  let gc = 0;
  let conc = 0;
  for (const name of names) {
    let m = /^GC Thread#(\d+)$/.exec(name);
    if (m) {
      gc++;
      gcTop = Math.max(gcTop, Number(m[1]) + 1);
      continue;
    }
    if (name.startsWith('GC task thread#')) {
      gc++; // JDK 8: "GC task thread#N (ParallelGC)", its number cut off
      continue;
    }
    m = /^G1 Conc#(\d+)$/.exec(name);
    if (m) {
      conc++;
      concTop = Math.max(concTop, Number(m[1]) + 1);
      continue;
    }
    if (name.startsWith('C1 CompilerThre')) t.c1++;
    else if (name.startsWith('C2 CompilerThre')) t.c2++;
  }
  t.gc = Math.max(gc, gcTop);
  t.conc = Math.max(conc, concTop);
  return t;
}

/** `kafka's JVM (pid 4242)`, or with its unit: `kafka.service's JVM (pid 4242)`. */
export function jvmName(owner: string, pid: number): string {
  return `${owner}'s JVM (pid ${pid})`;
}

/** The finding's message for a JVM whose pools do not fit its CPUs (sizing 'over' or 'under'). */
export function sizingMessage(owner: string, j: JvmFacts, v: JvmJudgement): string {
  const sized = v.sizedFor === null ? 'an unknown number of' : `${v.atLeast ? 'at least ' : ''}${v.sizedFor}`;
  const fix =
    v.sizing === 'over'
      ? v.pinned
        ? `set -XX:ActiveProcessorCount=${j.cpus} or remove it, then restart it`
        : 'restart it in your rolling-restart window (or pin the count: -XX:ActiveProcessorCount)'
      : 'restart it to use them all';
  return `${jvmName(owner, j.pid)} sized its GC/JIT pools for ${sized} CPUs and may use ${j.cpus} now (${v.evidence.join('; ')}): ${fix}`;
}

/**
 * The plan's word on a JVM whose CPUs a change moves: restarting it is the operator's call (apply
 * never restarts anything), and when is the rolling-restart window's.
 */
export function planNote(owner: string, j: JvmFacts, v: JvmJudgement, after: number): string | null {
  const sizedFor = v.sizedFor ?? (v.sizing === 'unknown' ? j.cpus : null);
  if (sizedFor === null || sizedFor === after) return null;
  if (v.pinned) {
    return `${jvmName(owner, j.pid)} is pinned to ${sizedFor} CPUs by -XX:ActiveProcessorCount; after this change it may use ${after}: change the flag and restart it in your rolling-restart window`;
  }
  const atLeast = v.atLeast ? 'at least ' : '';
  return `${jvmName(owner, j.pid)} sized its GC/JIT pools for ${atLeast}${sizedFor} CPUs; after this change it may use ${after}: restart it in your rolling-restart window`;
}
