// Which processes a `process:` workload selects: /proc read under `--root` (command line, executable,
// user), with the agent's memory of earlier scans (proc-scan.ts), and the probe between rounds.
import { readdirSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { parseProcCgroup, readHeadSync, readTrim } from './fsutil.js';
import {
  type ProcessMatcher,
  type ProcessScanMemo,
  type ProcessScanner,
  readLastPid,
  tgidOf,
} from './proc-scan.js';

export type { ProcessMatcher } from './proc-scan.js';

// Long command lines are cut: matchers look at the start.
const MAX_PROC_FILE = 64 * 1024;

export interface ProcScan {
  matched: Record<string, number[]>;
  cgroups: Record<number, string>;
}

/** Resolve a user name to a uid through `<root>/etc/passwd`; numbers pass through. */
async function resolveUid(root: string, user: string | number): Promise<number | null> {
  if (typeof user === 'number') return user;
  if (/^\d+$/.test(user)) return Number(user);
  const passwd = await readTrim(path.join(root, 'etc/passwd'));
  for (const line of passwd?.split('\n') ?? []) {
    const f = line.split(':');
    if (f[0] === user && f[2] !== undefined) return Number(f[2]);
  }
  return null;
}

interface CompiledMatcher {
  name: string;
  re: RegExp | undefined;
  exe: string | undefined;
  uid: number | null | undefined;
  wantsUser: boolean;
}

async function compileMatchers(
  root: string,
  matchers: Record<string, ProcessMatcher>,
): Promise<CompiledMatcher[]> {
  return Promise.all(
    Object.keys(matchers).map(async (n) => {
      const m = matchers[n]!;
      const re = m.cmdline !== undefined ? new RegExp(m.cmdline) : undefined;
      const uid = m.user === undefined ? undefined : await resolveUid(root, m.user);
      return { name: n, re, exe: m.exe, uid, wantsUser: m.user !== undefined };
    }),
  );
}

/**
 * The matchers `/proc/<pid>` satisfies (all criteria of one matcher must hold); null when it cannot be
 * read, is a kernel thread (empty cmdline) or a zombie.
 */
function matchPid(procDir: string, pid: string, compiled: CompiledMatcher[]): string[] | null {
  const base = `${procDir}/${pid}`;
  const raw = readHeadSync(`${base}/cmdline`, MAX_PROC_FILE);
  if (raw === null || raw === '') return null;
  const cmdline = raw.replace(/\0+$/, '').split('\0').join(' ');
  let exe: string | null | undefined;
  let uid: number | null | undefined;
  const names: string[] = [];
  for (const c of compiled) {
    if (c.re && !c.re.test(cmdline)) continue;
    if (c.exe !== undefined) {
      if (exe === undefined) {
        try {
          exe = readlinkSync(`${base}/exe`).replace(/ \(deleted\)$/, '');
        } catch {
          exe = null;
        }
      }
      if (!exe || (exe !== c.exe && path.basename(exe) !== c.exe)) continue;
    }
    if (c.wantsUser) {
      if (uid === undefined) {
        const status = readHeadSync(`${base}/status`, MAX_PROC_FILE);
        const m = status ? /^Uid:\s+(\d+)/m.exec(status) : null;
        uid = m ? Number(m[1]) : null;
      }
      if (c.uid === null || c.uid === undefined || uid !== c.uid) continue;
    }
    names.push(c.name);
  }
  return names;
}

/**
 * Scan `<root>/proc/<pid>` for the processes each matcher selects. Kernel threads (empty cmdline)
 * and isolate itself are never matched. Synchronous reads into one buffer: /proc files are generated
 * in memory, and thousands of async reads cost far more in promise and threadpool overhead than the
 * reads themselves.
 */
export async function matchProcesses(
  root: string,
  matchers: Record<string, ProcessMatcher>,
  memo?: ProcessScanner,
): Promise<ProcScan> {
  const names = Object.keys(matchers);
  const matched: Record<string, number[]> = {};
  const cgroups: Record<number, string> = {};
  for (const n of names) matched[n] = [];
  if (names.length === 0) return { matched, cgroups };
  const compiled = await compileMatchers(root, matchers);
  const procDir = path.join(root, 'proc');
  memo?.begin(root, matchers);
  let entries: Iterable<string>;
  let complete = true;
  try {
    if (memo) ({ names: entries, complete } = memo.list(procDir));
    else entries = readdirSync(procDir);
  } catch {
    return { matched, cgroups };
  }
  const self = root === '/' ? process.pid : -1;
  const present = new Set<number>();
  for (const e of entries) {
    const c0 = e.charCodeAt(0);
    if (c0 < 48 || c0 > 57) continue;
    const pid = Number(e);
    if (pid === self) continue;
    if (complete) present.add(pid);
    if (memo?.skip(pid)) continue;
    const hits = matchPid(procDir, e, compiled);
    memo?.saw(pid, (hits?.length ?? 0) > 0);
    if (!hits?.length) continue;
    for (const n of hits) matched[n]!.push(pid);
    const cg = readHeadSync(`${procDir}/${e}/cgroup`, MAX_PROC_FILE);
    const p = cg ? parseProcCgroup(cg) : null;
    if (p) cgroups[pid] = p;
  }
  // Only a complete listing tells which PIDs are gone.
  if (complete) memo?.end(present);
  for (const n of names) matched[n]!.sort((a, b) => a - b);
  return { matched, cgroups };
}

/**
 * Between rounds, the PIDs to look at: born since the probe's last look (the kernel's PID counter),
 * or seen born but not matching yet. Synchronous, for the agent's timer: nearly every probe finds
 * none, and then costs one read.
 */
export function bornSince(memo: ProcessScanMemo): number[] {
  const target = memo.target();
  return target ? memo.births(readLastPid(target.procDir)) : [];
}

/**
 * The first of `pids` (from bornSince) that a workload's process matcher selects and that is not
 * already known (a new thread of a placed process shows its process's command line too), or null.
 * At most PROBE_MAX_BIRTHS PIDs are born between looks; what it cannot judge is left to the next
 * round, which reads every young PID anyway.
 */
export async function probeBirths(memo: ProcessScanMemo, pids: number[]): Promise<number | null> {
  const target = memo.target();
  if (!target || pids.length === 0) return null;
  const procDir = target.procDir;
  const compiled = await compileMatchers(target.root, target.matchers);
  const self = target.root === '/' ? process.pid : -1;
  for (const pid of pids) {
    if (pid === self) continue;
    const hits = matchPid(procDir, String(pid), compiled);
    if (hits === null) {
      // Not there (a thread that ended, a PID of another namespace) or a kernel thread.
      memo.probed(pid, 'settled');
      continue;
    }
    if (hits.length === 0) {
      memo.probed(pid, 'young'); // may exec into a match in a moment
      continue;
    }
    memo.probed(pid, 'settled');
    const tgid = tgidOf(procDir, pid);
    if (tgid !== null && memo.isMatched(tgid)) continue;
    return pid;
  }
  return null;
}
