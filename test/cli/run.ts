import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

export const CLI = resolve(import.meta.dirname, '../../dist/cli.js');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run the built `isolate` binary as a user would. */
export function isolate(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string>; timeout?: number } = {},
): Run {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    timeout: opts.timeout ?? 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
