// Types of what tests import from scratch-host.mjs (scripts are plain JavaScript).
export const GROUP_FILES: Readonly<Record<string, string>>;
export const TRY_POLICY: string;
export function buildHost(fixture: string, groups: readonly string[], root: string): string;
export function overlay(root: string, name: string): string;
export interface ScratchProcess {
  pid: number;
  name: string;
  cgroup: string;
  /** Thread ids; each thread's Cpus_allowed_list is `cpus`. */
  threads: number[];
  cpus: string;
  ppid?: number;
}
export function putProcesses(root: string, procs: readonly ScratchProcess[]): void;
export function settleEffective(root: string, online: string): void;
export function settle(root: string): void;
export function newScratchHost(root: string, fixture?: string): string;
