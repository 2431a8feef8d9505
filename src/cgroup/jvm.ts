// The JVMs among a workload's processes, as /proc shows them: recognised by their executable (a
// `java` launcher, or a Java runtime image's binary as jlink and jpackage make them) or by the
// libjvm.so they map, never by attaching (no jcmd, no attach socket, nothing written into the JVM's
// namespace). What is read here is judged by model/jvm.ts.
import { readdirSync, readlinkSync, statSync } from 'node:fs';
import path from 'node:path';
import { CpuSet } from '../model/cpuset.js';
import {
  countPoolThreads,
  type JvmDetection,
  type JvmFacts,
  JVM_OPTION_VARIABLES,
  javaFeatureVersion,
  jvmArgs,
  parseJvmFlags,
} from '../model/jvm.js';
import { procStatFields, readTrimSync } from '../sys/read.js';

/**
 * Clock ticks per second of /proc/PID/stat's start time: USER_HZ, 100 on every architecture Linux
 * exports to user space (sysconf(_SC_CLK_TCK), which Node does not expose).
 */
export const CLOCK_TICKS = 100;

/** A workload's JVMs judged per audit at most: each costs a read of every thread's name. */
export const JVM_CAP = 32;

/** The processes in a cgroup and every cgroup below it (its `cgroup.procs` files), in PID order. */
export function processesUnder(dir: string, cap = 100_000): number[] {
  const out = new Set<number>();
  const walk = (d: string) => {
    if (out.size >= cap) return;
    const text = readTrimSync(path.join(d, 'cgroup.procs'));
    if (text === null) return;
    for (const line of text.split('\n')) if (/^\d{1,10}$/.test(line)) out.add(Number(line));
    let subs: string[] = [];
    try {
      subs = readdirSync(d, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
    } catch {}
    for (const s of subs) walk(path.join(d, s));
  };
  walk(dir);
  return [...out].sort((a, b) => a - b);
}

/** The boot time in seconds since the epoch (/proc/stat's btime); null when unreadable. */
export function bootTime(procDir: string): number | null {
  const m = /^btime (\d{1,12})$/m.exec(readTrimSync(`${procDir}/stat`) ?? '');
  return m ? Number(m[1]) : null;
}

/** `/proc/PID/exe`'s target, without the " (deleted)" the kernel adds to a replaced binary. */
function exeOf(base: string): string | null {
  try {
    return readlinkSync(`${base}/exe`).replace(/ \(deleted\)$/, '');
  } catch {
    return null; // gone, a kernel thread, or not ours to read
  }
}

/** A Java runtime image's binary: `<image>/bin/X` beside `<image>/lib/modules` and `<image>/release`. */
function inRuntimeImage(root: string, exe: string): boolean {
  const image = path.join(root, path.dirname(path.dirname(exe)));
  const isFile = (p: string) => statSync(p, { throwIfNoEntry: false })?.isFile() ?? false;
  return (
    path.basename(path.dirname(exe)) === 'bin' &&
    isFile(path.join(image, 'lib/modules')) &&
    isFile(path.join(image, 'release'))
  );
}

/** How `pid` is a JVM, or null when it is not one (or is gone). `maps` is read only when needed. */
export function detectJvm(
  root: string,
  pid: number,
  maps: () => string | null,
): { how: JvmDetection; exe: string } | null {
  const base = path.join(root, 'proc', String(pid));
  const exe = exeOf(base);
  if (exe !== null && path.basename(exe) === 'java') return { how: 'launcher', exe };
  if (exe !== null && inRuntimeImage(root, exe)) return { how: 'runtime-image', exe };
  // Any other binary that embeds HotSpot (a renamed launcher, a JNI host, jpackage's launcher).
  if (/\/libjvm\.so(?: \(deleted\))?$/m.test(maps() ?? '')) return { how: 'libjvm', exe: exe ?? '?' };
  return null;
}

/** The disk-backed hsperfdata file the process maps, or null (none, or on a tmpfs: no writeback). */
export function perfDataFileOf(maps: string | null, mounts: string | null): string | null {
  const m = /\s(\/\S*\/hsperfdata_[^/\s]+\/\d+)$/m.exec(maps ?? '');
  if (!m) return null;
  const file = m[1]!;
  // The longest mount point that holds it decides (mount points are octal-escaped in mounts).
  let best = '';
  let fsType = '';
  for (const line of (mounts ?? '').split('\n')) {
    const [, at, type] = line.split(' ');
    if (!at || !type) continue;
    const dir = at.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));
    const under = dir === '/' || file === dir || file.startsWith(`${dir}/`);
    if (under && dir.length >= best.length) {
      best = dir;
      fsType = type;
    }
  }
  return fsType === 'tmpfs' || fsType === 'ramfs' ? null : file;
}

/**
 * The feature version of a `java` launcher, from its runtime's `release` file: `<home>/bin/java`
 * beside `<home>/release`; JDK 8's JRE launcher is `<jdk>/jre/bin/java` with `<jdk>/release`. null:
 * no such file or no version in it (/proc/PID/exe is the resolved path, so /usr/bin/java's
 * alternatives link does not hide the home).
 */
export function launcherVersion(root: string, exe: string): number | null {
  const home = path.dirname(path.dirname(exe));
  const homes = path.basename(home) === 'jre' ? [home, path.dirname(home)] : [home];
  for (const h of homes) {
    const v = javaFeatureVersion(readTrimSync(path.join(root, h, 'release')));
    if (v !== null) return v;
  }
  return null;
}

/** The JVM options in the process's environment: only the variables a JVM reads options from. */
function optionVariables(base: string): Record<string, string> {
  const env: Record<string, string> = {};
  const text = readTrimSync(`${base}/environ`);
  for (const kv of text?.split('\0') ?? []) {
    const eq = kv.indexOf('=');
    const name = kv.slice(0, eq);
    if (eq > 0 && (JVM_OPTION_VARIABLES as readonly string[]).includes(name)) env[name] = kv.slice(eq + 1);
  }
  return env;
}

export interface ReadJvmOptions {
  /** Seconds since the epoch at boot (bootTime); null: start times are unknown. */
  btime: number | null;
  /** Look for the hsperfdata file (reads /proc/PID/maps and mounts): the exclusive workloads' JVMs. */
  perfData?: boolean;
}

/** The facts about `pid` if it is a JVM; null when it is not one or exited meanwhile. */
export function readJvm(root: string, pid: number, opts: ReadJvmOptions): JvmFacts | null {
  const procDir = path.join(root, 'proc');
  const base = `${procDir}/${pid}`;
  let mapsText: string | null | undefined;
  const maps = () => {
    if (mapsText === undefined) mapsText = readTrimSync(`${base}/maps`);
    return mapsText;
  };
  const found = detectJvm(root, pid, maps);
  if (!found) return null;
  const allowed = /^Cpus_allowed_list:\s*(\S+)$/m.exec(readTrimSync(`${base}/status`) ?? '')?.[1];
  let cpus: number;
  try {
    cpus = CpuSet.parse(allowed ?? '').size;
  } catch {
    return null; // gone between the reads, or no CPU list: nothing to judge against
  }
  if (cpus === 0) return null;
  const ticks = procStatFields(procDir, pid)?.[19];
  const startedAt =
    opts.btime !== null && ticks && /^\d+$/.test(ticks) ? opts.btime + Number(ticks) / CLOCK_TICKS : null;
  const cmdline = (readTrimSync(`${base}/cmdline`) ?? '').split('\0').filter(Boolean);
  const names: string[] = [];
  let tids: string[] = [];
  try {
    tids = readdirSync(`${base}/task`);
  } catch {}
  for (const t of tids) {
    const comm = readTrimSync(`${base}/task/${t}/comm`);
    if (comm !== null) names.push(comm);
  }
  const version = found.how === 'launcher' ? launcherVersion(root, found.exe) : null;
  const flags = parseJvmFlags(jvmArgs(cmdline, optionVariables(base), version));
  const perfOff = flags.perfDisableSharedMem === true || flags.usePerfData === false;
  return {
    pid,
    exe: found.exe.slice(0, 256),
    how: found.how,
    startedAt,
    cpus,
    flags,
    threads: countPoolThreads(names),
    perfDataFile: opts.perfData && !perfOff ? perfDataFileOf(maps(), readTrimSync(`${base}/mounts`)) : null,
  };
}

/** The JVMs among `pids` (the first JVM_CAP of them), and how many processes were looked at. */
export function readJvms(root: string, pids: readonly number[], opts: ReadJvmOptions): JvmFacts[] {
  const out: JvmFacts[] = [];
  for (const pid of pids) {
    if (out.length >= JVM_CAP) break;
    const j = readJvm(root, pid, opts);
    if (j) out.push(j);
  }
  return out;
}
