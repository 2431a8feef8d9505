import { isatty } from 'node:tty';
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { UserError } from '../model/errors.js';
import { writeErr, writeOut } from './output.js';

/** `--root` must name a directory; resolving here makes every later path absolute. */
export function rootOption(value: string | undefined): string {
  // resolve('') is the current directory: an empty --root (an unset shell variable) must not
  // silently mean "here".
  if (value !== undefined && value.trim() === '') {
    throw new UserError('--root: empty; pass the root of a host or fixture tree (default /)');
  }
  return resolve(value ?? '/');
}

/**
 * The host root of a command: `--root` given before or after the subcommand
 * (`isolate --root R plan` and `isolate plan --root R`), checked to be a directory.
 */
export function hostRoot(cmd: Command): string {
  const root = rootOption(cmd.optsWithGlobals<{ root?: string }>().root);
  requireDir(root);
  return root;
}

/** Whether this run already printed its JSON document (the error handler prints one otherwise). */
export const printed = { json: false };

export function printJson(value: unknown): void {
  printed.json = true;
  writeOut(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * What a slow step waits for, on stderr when it is a terminal: a person sees why nothing moves (a
 * vendor tool may take up to its timeout); a pipe, a service or a play gets nothing extra.
 */
export function progressOnTerminal(): ((message: string) => void) | undefined {
  // isatty(2), not process.stderr.isTTY: touching process.stderr builds the stream the CLI avoids (output.ts).
  return isatty(2) ? (m) => writeErr(`isolate: ${m}\n`) : undefined;
}

export function notice(message: string): void {
  writeErr(`isolate: ${message}\n`);
}

export function requireDir(root: string): void {
  if (!existsSync(root))
    throw new UserError(`--root ${root}: no such directory; pass the root of a host or fixture tree`);
  if (!statSync(root).isDirectory())
    throw new UserError(`--root ${root}: not a directory; pass the root of a host or fixture tree`);
}

/** Every line isolate prints ends with a newline, whatever the renderer returned. */
export function printText(text: string): void {
  writeOut(text.endsWith('\n') ? text : `${text}\n`);
}
