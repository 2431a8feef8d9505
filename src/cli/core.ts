import type { Command } from 'commander';

/** `isolate topology`, `policy validate`, `plan`. */
export function registerCore(_program: Command): void {}
