// The CLI's output path (src/cli/output.ts): write(2) on fds 1 and 2, complete on a pipe that another
// program left non-blocking, quiet when the reader has gone, and never process.stdout (whose stream
// modules cost a short command ~5 ms of start-up).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeAll } from '../../src/cli/output.js';
import { CLI } from './run.js';

const TREE = join(import.meta.dirname, '../fixtures/sysfs/qemu-2s-smt2');
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'isolate-output-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A FIFO with a read end held open here (so a non-blocking writer may open it) and a non-blocking write end. */
function fifo(): { path: string; rfd: number; wfd: number } {
  const path = join(dir, 'fifo');
  execFileSync('mkfifo', [path]);
  const rfd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const wfd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
  return { path, rfd, wfd };
}

describe('writeAll', () => {
  it('writes everything to a full non-blocking pipe, waiting while it answers EAGAIN', async () => {
    const { path, rfd, wfd } = fifo();
    const out = join(dir, 'out');
    // The reader starts late: 1 MiB cannot fit the pipe's 64 KiB before it does.
    const reader = spawn('sh', ['-c', 'sleep 0.3; exec cat < "$0" > "$1"', path, out]);
    const done = new Promise<number | null>((r) => reader.on('exit', r));
    const text = `${'0123456789abcdef'.repeat(65_536)}é\n`;
    writeAll(wfd, text);
    closeSync(wfd);
    closeSync(rfd);
    expect(await done).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(text);
  });

  it('ends quietly when the reader has gone (EPIPE), and writes nothing more there', () => {
    const { rfd, wfd } = fifo();
    closeSync(rfd);
    expect(() => writeAll(wfd, 'first\n')).not.toThrow();
    expect(() => writeAll(wfd, 'second\n')).not.toThrow();
    closeSync(wfd);
  });

  it('reports other errors', () => {
    expect(() => writeAll(987_654, 'x')).toThrow(/EBADF/);
  });
});

describe('the CLI prints without process.stdout', () => {
  it('plan --dry-run and --version never touch process.stdout or process.stderr (their streams)', () => {
    const hook = join(dir, 'hook.cjs');
    // Node makes process.stdout a stream on first access: record any access by the program.
    writeFileSync(
      hook,
      `const touched = [];
for (const name of ['stdout', 'stderr']) {
  const d = Object.getOwnPropertyDescriptor(process, name);
  Object.defineProperty(process, name, { configurable: true, get() { touched.push(name); return d.get.call(process); } });
}
process.on('exit', () => require('fs').writeSync(2, '\\nTOUCHED ' + touched.join(',') + '\\n'));`,
    );
    for (const args of [['plan', '--dry-run', '--root', TREE], ['--version']]) {
      const r = spawnSync(process.execPath, ['--require', hook, CLI, ...args], {
        encoding: 'utf8',
        env: { ...process.env, ISOLATE_LOG: 'off' },
      });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout.length).toBeGreaterThan(4);
      expect(r.stderr).toMatch(/^TOUCHED $/m);
    }
  });
});
