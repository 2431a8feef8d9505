// Vitest global setup: tests that run the real `isolate` binary need dist/ built from the current source.
import { execFileSync } from 'node:child_process';

export default function setup(): void {
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
}
