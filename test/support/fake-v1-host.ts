/**
 * A cgroup v1 host under one directory: a captured sysfs tree, a mount table, and writable stand-ins
 * for the v1 hierarchies (legacy: cpuset, cpu,cpuacct, memory, name=systemd; hybrid: the same plus
 * cgroup2 at /sys/fs/cgroup/unified). As with fake-host.ts, cgroupfs semantics are not emulated:
 * isolate's cpusets can be made to exist already, with v1's defaults in their files, so the executor
 * writes values into existing files and reads them back. Kernel behaviour is proven in test/vm.
 */
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const FIXTURES = join(import.meta.dirname, '../fixtures/sysfs');

export interface FakeV1Options {
  layout: 'legacy' | 'hybrid';
  /** Online CPUs / memory nodes of the cpuset root. */
  cpus: string;
  mems: string;
  /** Cpuset cgroups to create (`isolate-kafka`, `docker`), with optional cpus/mems. */
  cpusets?: Record<string, { cpus?: string; mems?: string; cpuExclusive?: string }>;
  /** Cgroups in `cpu,cpuacct` and `memory` (e.g. `hadoop-yarn`). */
  cpuGroups?: string[];
  memoryGroups?: string[];
  swapAccounting?: boolean;
  /** Processes: pid → cmdline and their cgroup lines by hierarchy. */
  procs?: Record<
    number,
    {
      cmdline: string;
      cpuset?: string;
      cpu?: string;
      memory?: string;
      systemd?: string;
      threads?: Record<number, string>;
    }
  >;
  /** Leave the mount table out (layout judged from directories) or make it lie. */
  mountinfo?: string | null;
}

const HIER = { cpuset: 2, 'cpu,cpuacct': 3, memory: 4 } as const;

export function mountinfoFor(layout: 'legacy' | 'hybrid'): string {
  const lines = [
    '22 1 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw',
    '25 22 0:24 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755',
  ];
  if (layout === 'hybrid')
    lines.push(
      '26 25 0:25 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate',
    );
  lines.push(
    '27 25 0:26 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup rw,xattr,name=systemd',
    '30 25 0:29 / /sys/fs/cgroup/cpuset rw,nosuid,nodev,noexec,relatime shared:14 - cgroup cgroup rw,cpuset',
    '31 25 0:30 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:15 - cgroup cgroup rw,cpu,cpuacct',
    '32 25 0:31 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:16 - cgroup cgroup rw,memory',
  );
  return `${lines.join('\n')}\n`;
}

function files(dir: string, values: Record<string, string>): void {
  mkdirSync(dir, { recursive: true });
  for (const [name, value] of Object.entries(values)) writeFileSync(join(dir, name), `${value}\n`);
}

export function makeFakeV1Host(fixture: string, o: FakeV1Options): string {
  const root = mkdtempSync(join(tmpdir(), 'isolate-v1-'));
  cpSync(join(FIXTURES, fixture, 'sys'), join(root, 'sys'), { recursive: true, verbatimSymlinks: true });
  const cg = join(root, 'sys/fs/cgroup');
  const base = { 'cgroup.procs': '', tasks: '', notify_on_release: '0' };
  files(join(cg, 'systemd'), base);
  files(join(cg, 'cpuset'), {
    ...base,
    'cpuset.cpus': o.cpus,
    'cpuset.mems': o.mems,
    'cpuset.effective_cpus': o.cpus,
    'cpuset.cpu_exclusive': '1',
    'cpuset.mem_exclusive': '1',
    'cpuset.memory_migrate': '0',
  });
  for (const [name, c] of Object.entries(o.cpusets ?? {})) {
    files(join(cg, 'cpuset', name), {
      ...base,
      'cpuset.cpus': c.cpus ?? '',
      'cpuset.mems': c.mems ?? '',
      'cpuset.effective_cpus': c.cpus ?? '',
      'cpuset.cpu_exclusive': c.cpuExclusive ?? '0',
      'cpuset.mem_exclusive': '0',
      'cpuset.memory_migrate': '0',
    });
  }
  const mem = (swap: boolean) => ({
    ...base,
    'memory.limit_in_bytes': '9223372036854771712',
    'memory.soft_limit_in_bytes': '9223372036854771712',
    'memory.usage_in_bytes': '0',
    ...(swap ? { 'memory.memsw.limit_in_bytes': '9223372036854771712' } : {}),
  });
  files(join(cg, 'cpu,cpuacct'), { ...base, 'cpu.shares': '1024' });
  for (const g of o.cpuGroups ?? []) files(join(cg, 'cpu,cpuacct', g), { ...base, 'cpu.shares': '1024' });
  files(join(cg, 'memory'), mem(!!o.swapAccounting));
  for (const g of o.memoryGroups ?? []) files(join(cg, 'memory', g), mem(!!o.swapAccounting));
  if (o.layout === 'hybrid') files(join(cg, 'unified'), { 'cgroup.controllers': '', 'cgroup.procs': '' });
  mkdirSync(join(root, 'proc/self'), { recursive: true });
  if (o.mountinfo !== null)
    writeFileSync(join(root, 'proc/self/mountinfo'), o.mountinfo ?? mountinfoFor(o.layout));
  for (const [pid, p] of Object.entries(o.procs ?? {})) {
    const lines = (cpuset: string) =>
      [
        `${HIER.memory}:memory:${p.memory ?? '/'}`,
        `${HIER['cpu,cpuacct']}:cpu,cpuacct:${p.cpu ?? '/'}`,
        `${HIER.cpuset}:cpuset:${cpuset}`,
        `1:name=systemd:${p.systemd ?? '/'}`,
        ...(o.layout === 'hybrid' ? [`0::${p.systemd ?? '/'}`] : []),
      ].join('\n');
    files(join(root, 'proc', pid), {
      cmdline: `${p.cmdline.split(' ').join('\0')}\0`,
      cgroup: lines(p.cpuset ?? '/'),
    });
    files(join(root, 'proc', pid, 'task', pid), { cgroup: lines(p.cpuset ?? '/') });
    for (const [tid, cs] of Object.entries(p.threads ?? {}))
      files(join(root, 'proc', pid, 'task', tid), { cgroup: lines(cs) });
  }
  // Each hierarchy's cgroup.procs lists the processes /proc/<pid>/cgroup places there (v1: a process
  // is listed wherever one of its threads is), as the kernel keeps them. systemd's tracking cgroups
  // are made as needed; the other hierarchies list a process only in cgroups the options created.
  const list = (h: string, p: string, pid: string, make: boolean) => {
    const dir = join(cg, h, p);
    if (!existsSync(dir)) {
      if (!make) return;
      files(dir, base);
    }
    appendFileSync(join(dir, 'cgroup.procs'), `${pid}\n`);
  };
  for (const [pid, p] of Object.entries(o.procs ?? {})) {
    list('systemd', p.systemd ?? '/', pid, true);
    if (o.layout === 'hybrid') list('unified', p.systemd ?? '/', pid, true);
    list('cpu,cpuacct', p.cpu ?? '/', pid, false);
    list('memory', p.memory ?? '/', pid, false);
    for (const cs of new Set([p.cpuset ?? '/', ...Object.values(p.threads ?? {})]))
      list('cpuset', cs, pid, false);
  }
  return root;
}
