import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { detectLayout, findUnitCgroup, observeHost } from '../../src/cgroup/observe.js';
import { slicePath } from '../../src/model/systemd.js';

let root: string;

async function put(rel: string, content: string): Promise<void> {
  const f = path.join(root, rel);
  await mkdir(path.dirname(f), { recursive: true });
  await writeFile(f, content);
}

async function cg(rel: string, files: Record<string, string>): Promise<void> {
  for (const [k, v] of Object.entries(files)) await put(path.join('sys/fs/cgroup', rel, k), `${v}\n`);
}

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'isolate-observe-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('slicePath', () => {
  it('maps nested slices', () => {
    expect(slicePath('foo-bar.slice')).toBe('/foo.slice/foo-bar.slice');
    expect(slicePath('kafka.slice')).toBe('/kafka.slice');
    expect(slicePath('-.slice')).toBe('/');
  });
});

describe('observeHost', () => {
  it('reports "none" without a cgroup v2 mount and still matches processes', async () => {
    await put('proc/42/cmdline', 'java\0-cp\0x\0kafka.Kafka\0config\0');
    await put('proc/42/cgroup', '0::/system.slice/kafka.service\n');
    await put('proc/7/cmdline', '');
    const o = await observeHost(root, {
      paths: ['/kafka.slice'],
      units: [],
      processMatchers: { kafka: { cmdline: 'kafka\\.Kafka' } },
    });
    expect(o.cgroup.layout).toBe('none');
    expect(o.cgroup.writable).toBe(false);
    expect(o.cgroup.reason).toContain('is not a cgroup v2 hierarchy');
    expect(o.processes.kafka).toEqual([42]);
    expect(o.processCgroups?.[42]).toBe('/system.slice/kafka.service');
  });

  it('detects legacy and hybrid layouts', async () => {
    await mkdir(path.join(root, 'sys/fs/cgroup/cpuset'), { recursive: true });
    expect(await detectLayout(root)).toBe('legacy');
    await cg('unified', { 'cgroup.controllers': '' });
    expect(await detectLayout(root)).toBe('hybrid');
  });

  it('reads a unified hierarchy', async () => {
    await cg('', {
      'cgroup.controllers': 'cpuset cpu io memory pids',
      'cgroup.subtree_control': 'cpuset cpu memory',
      'cpuset.cpus.effective': '0-7',
    });
    await put('proc/sys/kernel/osrelease', '6.8.0-1-amd64\n');
    await cg('system.slice', {
      'cpuset.cpus': '',
      'cpuset.cpus.partition': 'member',
      'cpuset.cpus.exclusive': '',
      'cpu.weight': '100',
      'cpu.idle': '0',
      'memory.max': 'max',
      'memory.min': '0',
      'cgroup.events': 'populated 1\nfrozen 0',
      'cgroup.procs': '',
    });
    await cg('system.slice/kafka.service', { 'cgroup.events': 'populated 1', 'cgroup.procs': '42' });
    await cg('hadoop-yarn', { 'cpuset.cpus': '0-3', 'cgroup.events': 'populated 0', 'cgroup.procs': '' });
    await cg('foo.slice/foo-bar.slice', { 'cgroup.events': 'populated 0' });
    const o = await observeHost(root, {
      paths: ['/hadoop-yarn', '/isolate-kafka'],
      units: ['kafka.service', 'foo-bar.slice', 'nope.service'],
      processMatchers: {},
    });
    const c = o.cgroup;
    expect(c.layout).toBe('unified');
    expect(c.writable).toBe(true);
    expect(c.kernel).toBe('6.8.0-1-amd64');
    expect(c.features).toEqual({ partition: true, exclusive: true, cpuIdle: true, memoryMin: true });
    expect(c.rootControllers).toContain('cpuset');
    expect(c.rootSubtreeControl).toEqual(['cpuset', 'cpu', 'memory']);
    expect(c.topLevel).toEqual(['foo.slice', 'hadoop-yarn', 'system.slice']);
    expect(c.units).toEqual({
      'kafka.service': '/system.slice/kafka.service',
      'foo-bar.slice': '/foo.slice/foo-bar.slice',
      'nope.service': null,
    });
    expect(c.groups['/hadoop-yarn']).toMatchObject({
      exists: true,
      ownedBySystemd: false,
      values: { 'cpuset.cpus': '0-3' },
    });
    expect(c.groups['/isolate-kafka']).toMatchObject({ exists: false, values: {} });
    expect(c.groups['/system.slice']?.ownedBySystemd).toBe(true);
    // A sibling only (no workload's, no unit's): what a strict fence and a dedicated slice are diffed
    // against, not its other cpuset files, memory or CPU weight.
    expect(c.groups['/system.slice']?.values).toEqual({
      'cpuset.cpus': '',
      'cpuset.cpus.partition': 'member',
    });
    expect(c.groups['/']?.values['cpuset.cpus.effective']).toBe('0-7');
  });

  it('refuses writes when cpuset is not available', async () => {
    await cg('', { 'cgroup.controllers': 'cpu memory', 'cgroup.subtree_control': '' });
    const o = await observeHost(root, { paths: [], units: [], processMatchers: {} });
    expect(o.cgroup.writable).toBe(false);
    expect(o.cgroup.reason).toContain('cpuset controller is not available');
  });

  it('matches on exe and user, all criteria together', async () => {
    await put('etc/passwd', 'root:x:0:0::/root:/bin/sh\nflink:x:1001:1001::/home/flink:/bin/sh\n');
    for (const [pid, uid] of [
      [100, 1001],
      [101, 0],
    ] as const) {
      await put(`proc/${pid}/cmdline`, 'java\0org.apache.flink.runtime.taskexecutor.TaskManagerRunner\0');
      await put(`proc/${pid}/status`, `Name:\tjava\nUid:\t${uid}\t${uid}\t${uid}\t${uid}\n`);
      await symlink('/usr/lib/jvm/bin/java', path.join(root, `proc/${pid}/exe`));
    }
    const o = await observeHost(root, {
      paths: [],
      units: [],
      processMatchers: {
        flink: { cmdline: 'TaskManagerRunner', user: 'flink', exe: 'java' },
        anyjava: { exe: '/usr/lib/jvm/bin/java' },
        nobody: { user: 'nobody' },
      },
    });
    expect(o.processes).toEqual({ flink: [100], anyjava: [100, 101], nobody: [] });
  });

  it('findUnitCgroup searches nested slices', async () => {
    await cg('a.slice/a-b.slice/x.service', { 'cgroup.events': 'populated 0' });
    expect(await findUnitCgroup(root, 'x.service')).toBe('/a.slice/a-b.slice/x.service');
  });
});
