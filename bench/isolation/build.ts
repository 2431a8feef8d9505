/**
 * Compiles the probe and the batch load with gcc, statically so the same binary runs in the qemu
 * guest (whose initramfs has no libc) and on a host; cached by source hash like the VM stand-in.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, VM_CACHE } from '../../test/vm/harness/paths.js';

export type BenchProgram = 'probe' | 'batch' | 'appender' | 'iobatch';

export function benchBinary(name: BenchProgram): string {
  const src = join(REPO_ROOT, 'bench/isolation', `${name}.c`);
  // bench.h is #included by every program: a change there must rebuild them too.
  const header = join(REPO_ROOT, 'bench/isolation/bench.h');
  const key = createHash('sha256')
    .update(readFileSync(src))
    .update(readFileSync(header))
    .digest('hex')
    .slice(0, 12);
  const dir = join(VM_CACHE, 'bench');
  const out = join(dir, `${name}-${key}`);
  if (existsSync(out)) return out;
  mkdirSync(dir, { recursive: true });
  const tmp = `${out}.tmp-${process.pid}`;
  const args = ['-static', '-O2', '-pthread', '-Wall', '-o', tmp, src];
  try {
    execFileSync('gcc', args, { stdio: 'pipe' });
  } catch (e) {
    if (process.getuid?.() !== 0)
      throw new Error(`cannot build bench/isolation/${name}.c (gcc -static): ${(e as Error).message}`);
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'gcc', 'libc6-dev'], {
      stdio: 'pipe',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    execFileSync('gcc', args, { stdio: 'pipe' });
  }
  renameSync(tmp, out);
  return out;
}
