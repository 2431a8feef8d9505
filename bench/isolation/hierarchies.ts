/**
 * Where a real-host run puts its own cgroups: the CPU bench in the hierarchy that holds the cpuset
 * controller (the cgroup2 mount, or v1's cpuset on a hybrid or legacy host, as isolate's backends
 * choose), the I/O bench in the one that holds the io controller (v1's blkio, or cgroup2's io). The
 * layout is read the way isolate reads it (src/cgroup/layout.ts), so a fixture tree under a root
 * stands for a host in the tests.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type CgroupMounts, detectCgroupLayout } from '../../src/cgroup/layout.js';
import type { Bench } from './params.js';

export interface Hierarchy {
  kind: 'v1' | 'v2';
  /** The hierarchy's root directory (under the host root). */
  dir: string;
}

export interface BenchHierarchies {
  layout: CgroupMounts['layout'];
  cpu: Hierarchy | null;
  io: Hierarchy | null;
  /** Every reason a bench that was asked for cannot run on this layout. */
  problems: string[];
}

function words(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').trim().split(/\s+/);
  } catch {
    return [];
  }
}

export async function benchHierarchies(root: string, benches: readonly Bench[]): Promise<BenchHierarchies> {
  let mounts: CgroupMounts;
  try {
    mounts = await detectCgroupLayout(root);
  } catch (e) {
    return { layout: 'none', cpu: null, io: null, problems: [(e as Error).message] };
  }
  const mount = join(root, 'sys/fs/cgroup');
  const problems: string[] = [];
  const unified = mounts.unified === null ? null : join(mount, mounts.unified);

  let cpu: Hierarchy | null = null;
  if (mounts.cpuset === 'v1' && mounts.v1.cpuset !== undefined)
    cpu = { kind: 'v1', dir: join(mount, mounts.v1.cpuset) };
  else if (mounts.cpuset === 'unified' && unified !== null) cpu = { kind: 'v2', dir: unified };
  if (benches.includes('cpu') && cpu === null)
    problems.push(
      `no cpuset controller on this host (cgroup layout ${mounts.layout}): neither a v1 cpuset hierarchy nor cpuset in ${unified ?? mount}/cgroup.controllers`,
    );

  let io: Hierarchy | null = null;
  if (mounts.v1.blkio !== undefined) io = { kind: 'v1', dir: join(mount, mounts.v1.blkio) };
  else if (unified !== null && words(join(unified, 'cgroup.controllers')).includes('io'))
    io = { kind: 'v2', dir: unified };
  if (benches.includes('io')) {
    if (io === null)
      problems.push(
        `no io controller on this host (cgroup layout ${mounts.layout}): neither a v1 blkio hierarchy nor io in ${unified ?? mount}/cgroup.controllers`,
      );
    else if (io.kind === 'v2' && !words(join(io.dir, 'cgroup.subtree_control')).includes('io'))
      // Enabling it would change every cgroup of the host, not only the bench's.
      problems.push(
        `${io.dir}/cgroup.subtree_control lacks io: the bench's cgroups get no io files; enable it first (echo +io > ${io.dir}/cgroup.subtree_control), or run without the I/O bench`,
      );
  }
  return { layout: mounts.layout, cpu, io, problems };
}

/** The hierarchy directories a run makes its cgroups in, without duplicates (v2: one). */
export function benchDirs(h: BenchHierarchies, benches: readonly Bench[]): string[] {
  const dirs: string[] = [];
  if (benches.includes('cpu') && h.cpu) dirs.push(h.cpu.dir);
  if (benches.includes('io') && h.io && !dirs.includes(h.io.dir)) dirs.push(h.io.dir);
  return dirs;
}

/** Bench cgroups left by another run (or a killed one), in any of the hierarchies it would use. */
export function existingBenchCgroups(dirs: readonly string[], cgroups: readonly string[]): string[] {
  return dirs.flatMap((d) => cgroups.map((c) => join(d, c)).filter((p) => existsSync(p)));
}
