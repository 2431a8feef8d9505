// Shared by the doc tests: a fixture host with a policy and a /proc of running workloads, and a
// shell-transcript view of a CLI run with the fixture's temporary paths taken out, so the samples
// in docs/ read as on a real host and do not change from run to run.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  putProcesses as putScratchProcesses,
  type ScratchProcess,
  settleEffective as settleScratchEffective,
} from '../../scripts/scratch-host.mjs';
import { isolate, type Run } from '../cli/run.js';
import { makeFakeHost } from '../support/fake-host.js';

/** The policy of docs/install.md's first look: one broker, YARN's containers. */
export const KAFKA_FLINK = `apiVersion: isolate/v1
kind: HostPolicy
workloads:
  - {name: kafka, class: exclusive, cores: 1, match: {cgroup: /kafka.slice}}
  - {name: flink, class: batch, match: {cgroup: /hadoop-yarn}}
`;

export function put(root: string, rel: string, content: string): void {
  const f = join(root, rel);
  mkdirSync(dirname(f), { recursive: true });
  writeFileSync(f, content);
}

/** A host of `fixture` with `policy` at /etc/isolate/policy.yaml. */
export function hostWithPolicy(fixture: string, policy = KAFKA_FLINK, groups?: string[]): string {
  const root = groups ? makeFakeHost(fixture, groups) : makeFakeHost(fixture);
  put(root, 'etc/isolate/policy.yaml', policy);
  return root;
}

export type FakeProcess = ScratchProcess;

/** /proc/<pid>/{cgroup,task/<tid>/status} as the kernel shows them (the fields check reads). */
export function putProcesses(root: string, procs: FakeProcess[]): void {
  putScratchProcesses(root, procs);
}

/**
 * The kernel reports cpuset.cpus.effective: a cgroup's own cpuset.cpus, or its parent's effective
 * CPUs while that is empty. The fake host has no kernel, so the tests write it.
 */
export function settleEffective(root: string, online: string): void {
  settleScratchEffective(root, online);
}

/** Fixed values for what changes from run to run (journal ids, pino's time and pid). */
export function normalise(text: string, root: string): string {
  return normaliseRuns(text.replaceAll(` --root ${root}`, '').replaceAll(root, ''));
}

/** Journal ids, pino's time and pid, scan times: what changes from run to run whatever the root. */
export function normaliseRuns(text: string): string {
  return (
    text
      .replace(/\d{8}T\d{9}Z-\d+/g, '20261130T120000000Z-4242')
      .replace(/"time":\d+,"pid":\d+/g, '"time":1764504000000,"pid":4242')
      .replace(/scan_ms=\d+/g, 'scan_ms=2')
      // The interrupt window check measures: 1 s asked, longer on a loaded machine.
      .replace(/(interrupts on exclusive CPUs \S+ in )\d+\.\d s:/g, '$11.0 s:')
      .replace(/"scanMs":\d+/g, '"scanMs":2')
  );
}

export interface Shown {
  /** What the reader types, without the fixture's --root. */
  shown: string[];
  run: Run;
}

/** Run `isolate ARGS --root ROOT` (logs off unless `env` says otherwise). */
export function cli(
  root: string | null,
  args: string[],
  env: Record<string, string> = {},
  cwd?: string,
): Run {
  return isolate(root === null ? args : [...args, '--root', root], {
    env: { ISOLATE_LOG: 'off', ...env },
    ...(cwd ? { cwd } : {}),
  });
}

/**
 * A shell transcript: `$ isolate ARGS`, stdout, stderr, and `$ echo $?` with the exit code when
 * `code` is asked for (always shown when it is not 0).
 */
export function transcript(root: string, shown: string, r: Run, opts: { code?: boolean } = {}): string {
  let t = `$ ${shown}\n${r.stdout}${r.stderr}`;
  if (!t.endsWith('\n')) t += '\n';
  if (opts.code || r.code !== 0) t += `$ echo $?\n${r.code}\n`;
  return normalise(t, root);
}
