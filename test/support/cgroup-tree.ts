// A host root for agent and apply tests, with the cgroup2 stand-in of fake-host.ts: { root, cg }.
import { join } from 'node:path';
import { makeFakeHost } from './fake-host.js';

export function fakeCgroupHost(groups: string[], fixture = 'qemu-2s-smt2'): { root: string; cg: string } {
  const root = makeFakeHost(fixture, groups);
  return { root, cg: join(root, 'sys/fs/cgroup') };
}
