// Shared pieces for the real-kernel scenarios: the stand-in binary, a shell library for the guest
// (snapshots of cgroup files, per-thread dumps read straight from /proc), and parsers for them.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CpuSet } from '../../../src/model/cpuset.js';
import { aptInstall } from '../harness/ensure.js';
import { REPO_ROOT, VM_CACHE } from '../harness/paths.js';

/** Keep a scenario's whole console for debugging when ISOLATE_VM_CONSOLE_DIR is set. */
export function keepConsole(name: string, text: string): void {
  const dir = process.env.ISOLATE_VM_CONSOLE_DIR;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.log`), text);
}

/** Static stand-in binary (busy/sleeping threads), compiled once per source hash. */
export function standinBinary(): Buffer {
  return staticCBinary('standin');
}

/**
 * `test/vm/support/NAME.c` compiled static (`gcc -static -O2 -pthread`) once per source hash into
 * .vm-cache/NAME-<hash>: a guest runs it whatever its libc (busybox initramfs or Debian rootfs).
 */
export function staticCBinary(name: string): Buffer {
  const src = join(REPO_ROOT, `test/vm/support/${name}.c`);
  const key = createHash('sha256').update(readFileSync(src)).digest('hex').slice(0, 12);
  const out = join(VM_CACHE, `${name}-${key}`);
  if (!existsSync(out)) {
    mkdirSync(VM_CACHE, { recursive: true });
    const tmp = `${out}.tmp-${process.pid}`;
    try {
      execFileSync('gcc', ['-static', '-O2', '-pthread', '-o', tmp, src], { stdio: 'pipe' });
    } catch (e) {
      if (process.getuid?.() === 0) {
        aptInstall(['gcc', 'libc6-dev']);
        execFileSync('gcc', ['-static', '-O2', '-pthread', '-o', tmp, src], { stdio: 'pipe' });
      } else {
        throw new Error(`cannot build the VM helper ${name} (gcc -static): ${(e as Error).message}`);
      }
    }
    renameSync(tmp, out);
  }
  return readFileSync(out);
}

/** Files for a dynamically linked host binary (e.g. procps `ps`) and its libraries. */
export function hostBinaryFiles(bin: string, guest = bin): Record<string, Buffer> {
  const files: Record<string, Buffer> = { [guest]: readFileSync(bin) };
  const out = execFileSync('ldd', [bin], { encoding: 'utf8' });
  for (const line of out.split('\n')) {
    const m = /=>\s+(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m) files[m[1]!] = readFileSync(m[1]!);
  }
  return files;
}

/** The section markers every scenario prints its results between (busybox ash and bash alike). */
export const SECTIONS = `sec() { echo "=====BEGIN $1====="; }
endsec() { echo; echo "=====END $1====="; }`;

/**
 * A shell function `waitfor COND` (busybox ash and bash alike): evaluates COND every `step` seconds
 * (its output dropped when `quiet`) until it holds, at most `cap` times, then prints `waited=N` — the
 * tries it took, `cap` when it never held — and `held=yes` or `held=no`. The host reads them back with
 * held() (asserted: the condition came about) and waited() (printed, never compared with a budget).
 * The cap is a deadline that only catches "never": under TCG on a busy 2-core machine a round of the
 * agent takes seconds, so how soon something happened is the benches' to measure (bench/README.md),
 * not a test's.
 */
export function waitforShell({ cap = 600, step = 0.1, quiet = false } = {}): string {
  const cond = quiet ? 'eval "$1" >/dev/null 2>&1' : 'eval "$1"';
  return `waitfor() { local i=0 h=no; while [ $i -lt ${cap} ]; do ${cond} && { h=yes; break; }; i=$((i+1)); sleep ${step}; done; echo "waited=$i"; echo "held=$h"; }`;
}

/** The N of the `waited=N` line waitfor printed into a section's text; NaN when it printed none. */
export function waited(section: string): number {
  return Number(/^waited=(\d+)$/m.exec(section)?.[1] ?? Number.NaN);
}

/** Whether waitfor's condition held before its cap, in a section's text (false when it printed none). */
export function held(section: string): boolean {
  return /^held=yes$/m.test(section);
}

/**
 * Shell library sourced by every scenario (busybox ash). Sections are printed between
 * `=====BEGIN name=====` / `=====END name=====` for the host to parse.
 */
export const LIB = String.raw`
CG=/sys/fs/cgroup
export ISOLATE_LOG=off
isolate() { node /opt/isolate/dist/cli.js "$@"; }
${SECTIONS}
# Every setting isolate may write, for every cgroup (root's process list excluded: it churns).
snap() {
  ( cd $CG && find . -type d | sort | while read d; do
      for f in cgroup.subtree_control cpuset.cpus cpuset.mems cpuset.cpus.partition cpuset.cpus.exclusive memory.min memory.low memory.high memory.max cpu.weight cpu.idle; do
        [ -f "$d/$f" ] && echo "$d/$f=$(cat $d/$f)"
      done
      [ "$d" != "." ] && [ -f "$d/cgroup.procs" ] && echo "$d/cgroup.procs=$(sort -n $d/cgroup.procs | tr '\n' ' ')"
    done )
}
# pid tid ppid Cpus_allowed_list name, for every thread, straight from /proc.
threads() {
  awk 'FNR==1{ split(FILENAME,a,"/"); pid=a[3]; tid=a[5]; n=""; pp=""; c="" }
       /^Name:/{ n=$2 } /^PPid:/{ pp=$2 } /^Cpus_allowed_list:/{ c=$2; print pid, tid, pp, c, n }' /proc/[0-9]*/task/[0-9]*/status 2>/dev/null
}
# pid cgroup-path, for every process.
pcgroups() { awk -F'::' '/^0::/{ split(FILENAME,a,"/"); print a[3], $2 }' /proc/[0-9]*/cgroup 2>/dev/null; }
# pid cmdline, for user-space processes.
cmdlines() { for p in /proc/[0-9]*; do c=$(tr '\0' ' ' < $p/cmdline 2>/dev/null); [ -n "$c" ] && echo "$(basename $p) $c"; done; }
# Dump everything a scenario asserts on, under one name.
state() {
  sec "$1-snap"; snap; endsec "$1-snap"
  sec "$1-threads"; threads; endsec "$1-threads"
  sec "$1-cgroups"; pcgroups; endsec "$1-cgroups"
  sec "$1-cmdlines"; cmdlines; endsec "$1-cmdlines"
}
# run NAME cmd...: output in section NAME, exit status in section NAME-rc.
run() { n=$1; shift; t0=$(date +%s); sec "$n"; "$@" 2>&1; rc=$?; endsec "$n"; sec "$n-rc"; echo $rc; endsec "$n-rc"; echo "timing $n $(( $(date +%s) - t0 ))s"; return 0; }
# A systemd-like host: slices and scopes with processes in them, and a YARN hierarchy.
fake_host() {
  for d in init.scope system.slice system.slice/sshd.service user.slice user.slice/user-1000.slice hadoop-yarn hadoop-yarn/container_01; do mkdir -p $CG/$d; done
  sleep 100000 & echo $! > $CG/init.scope/cgroup.procs
  sleep 100000 & echo $! > $CG/system.slice/sshd.service/cgroup.procs
  sleep 100000 & echo $! > $CG/user.slice/user-1000.slice/cgroup.procs
}
`;

export interface ThreadRow {
  pid: number;
  tid: number;
  ppid: number;
  cpus: CpuSet;
  cpuList: string;
  name: string;
}

export function parseThreads(text: string | undefined): ThreadRow[] {
  const rows: ThreadRow[] = [];
  for (const line of (text ?? '').split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 4 || !/^\d+$/.test(f[0]!)) continue;
    rows.push({
      pid: Number(f[0]),
      tid: Number(f[1]),
      ppid: Number(f[2]),
      cpuList: f[3]!,
      cpus: CpuSet.parse(f[3]!),
      name: f.slice(4).join(' '),
    });
  }
  return rows;
}

export function parsePairs(text: string | undefined): Map<number, string> {
  const m = new Map<number, string>();
  for (const line of (text ?? '').split('\n')) {
    const i = line.indexOf(' ');
    if (i > 0 && /^\d+$/.test(line.slice(0, i))) m.set(Number(line.slice(0, i)), line.slice(i + 1).trim());
  }
  return m;
}

export function isKernelThread(t: ThreadRow): boolean {
  return t.pid === 2 || t.ppid === 2;
}

/** PIDs whose cmdline matches. */
export function pidsMatching(cmdlines: Map<number, string>, re: RegExp): number[] {
  return [...cmdlines.entries()].filter(([, c]) => re.test(c) && !c.startsWith('awk')).map(([p]) => p);
}

export function snapLines(text: string | undefined): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of (text ?? '').split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) m.set(line.slice(0, i), line.slice(i + 1));
  }
  return m;
}

/** Differences between two snapshots, as readable lines (empty when identical). */
export function snapDiff(a: string | undefined, b: string | undefined): string[] {
  const x = snapLines(a);
  const y = snapLines(b);
  const out: string[] = [];
  for (const k of new Set([...x.keys(), ...y.keys()])) {
    if (x.get(k) !== y.get(k)) out.push(`${k}: ${x.get(k) ?? '(absent)'} → ${y.get(k) ?? '(absent)'}`);
  }
  return out.sort();
}

/**
 * Shell function `tasks WHO PID...` (bash and busybox ash): `task WHO PID TID Cpus_allowed_list` for every
 * thread of each process, straight from /proc/<pid>/task/<tid>/status; parseState reads them back.
 */
export const TASKS = `tasks() {
  local w=$1 p s; shift
  for p in "$@"; do
    for s in /proc/$p/task/*/status; do
      awk -v w=$w -v p=$p '/^Pid:/{t=$2} /^Cpus_allowed_list/{print "task", w, p, t, $2}' $s
    done
  done
}`;

export interface TaskLine {
  who: string;
  pid: number;
  tid: number;
  cpus: CpuSet;
  cpuList: string;
  /** Mems_allowed_list, when the line has it. */
  mems?: string;
}

/**
 * A section of `key=value` lines (value trimmed) and `task WHO PID TID CPUS [MEMS]` lines (TASKS);
 * other lines are skipped.
 */
export function parseState(text: string | undefined): { kv: Map<string, string>; tasks: TaskLine[] } {
  const kv = new Map<string, string>();
  const tasks: TaskLine[] = [];
  for (const line of (text ?? '').split('\n')) {
    const t = /^task (\w+) (\d+) (\d+) (\S+)(?: (\S+))?$/.exec(line.trim());
    const i = line.indexOf('=');
    if (t) {
      tasks.push({
        who: t[1]!,
        pid: Number(t[2]),
        tid: Number(t[3]),
        cpus: CpuSet.parse(t[4]!),
        cpuList: t[4]!,
        ...(t[5] === undefined ? {} : { mems: t[5] }),
      });
    } else if (i > 0) kv.set(line.slice(0, i), line.slice(i + 1).trim());
  }
  return { kv, tasks };
}
