// A process as /proc shows it to cgroup/jvm.ts (exe link, stat, status, cmdline, environ, maps,
// mounts, thread names), listed in a cgroup's cgroup.procs: the JVM fixtures of test/audit/jvm.test.ts
// and test/ops/jvm-plan.test.ts.
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface ProcSpec {
  exe: string;
  cmdline?: string[];
  env?: string[];
  /** Seconds after boot. */
  startedAfterBoot?: number;
  cpus?: string;
  threads?: string[];
  maps?: string;
  mounts?: string;
  /** The cgroup (relative to the mount) whose cgroup.procs lists it; default kafka.slice. */
  cgroup?: string;
}

export function putFile(root: string, rel: string, content: string): void {
  const f = path.join(root, rel);
  mkdirSync(path.dirname(f), { recursive: true });
  writeFileSync(f, content);
}

export function fakeProcess(root: string, pid: number, p: ProcSpec): void {
  const put = (rel: string, content: string) => putFile(root, rel, content);
  const base = `proc/${pid}`;
  mkdirSync(path.join(root, base), { recursive: true });
  symlinkSync(p.exe, path.join(root, base, 'exe'));
  const ticks = (p.startedAfterBoot ?? 1000) * 100;
  // Field 22 is the start time; the name holds a space and a parenthesis, as a comm may.
  const after = [
    'S',
    '1',
    String(pid),
    String(pid),
    '0',
    '-1',
    '4194560',
    ...Array(12).fill('0'),
    String(ticks),
    '0',
  ];
  put(`${base}/stat`, `${pid} (java (x) y) ${after.join(' ')}\n`);
  put(`${base}/status`, `Name:\tjava\nTgid:\t${pid}\nCpus_allowed_list:\t${p.cpus ?? '0-7'}\n`);
  put(`${base}/cmdline`, `${(p.cmdline ?? [p.exe]).join('\0')}\0`);
  put(`${base}/environ`, `${(p.env ?? ['PATH=/usr/bin', 'SECRET=x']).join('\0')}\0`);
  put(`${base}/maps`, p.maps ?? '');
  put(`${base}/mounts`, p.mounts ?? 'ext4dev / ext4 rw 0 0\n');
  const names = ['java', ...(p.threads ?? [])];
  for (const [i, n] of names.entries()) put(`${base}/task/${pid + i}/comm`, `${n}\n`);
  const cg = path.join(root, 'sys/fs/cgroup', p.cgroup ?? 'kafka.slice', 'cgroup.procs');
  mkdirSync(path.dirname(cg), { recursive: true });
  writeFileSync(cg, `${existsSync(cg) ? readFileSync(cg, 'utf8') : ''}${pid}\n`);
}

export const gcThreads = (n: number): string[] => Array.from({ length: n }, (_, i) => `GC Thread#${i}`);
