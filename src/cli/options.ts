import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { UserError } from '../errors.js';

/** `--root` must name a directory; resolving here makes every later path absolute. */
export function rootOption(value: string | undefined): string {
  return resolve(value ?? '/');
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function notice(message: string): void {
  process.stderr.write(`isolate: ${message}\n`);
}

export function requireDir(root: string): void {
  if (!existsSync(root))
    throw new UserError(`--root ${root}: no such directory; pass the root of a host or fixture tree`);
}
