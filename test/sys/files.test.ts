// The one safe writer and the bounded reader, on their own: what they refuse and what they leave.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { buildSync } from 'esbuild';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/model/errors.js';
import {
  ReadRefused,
  readBounded,
  readBoundedBytes,
  readBoundedIfPresent,
  isDirLiveSync,
  readHeadSync,
  readLiveSync,
  readTrimSync,
  readTextFile,
  UnreadableError,
} from '../../src/sys/read.js';
import { writeFileAtomic, writeNewFile } from '../../src/sys/write.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'isolate-files-'));

describe('writeFileAtomic', () => {
  it('replaces a regular file and creates a missing name, leaving no temp file', async () => {
    const d = tmp();
    await writeFileAtomic(join(d, 'a.json'), 'one\n');
    await writeFileAtomic(join(d, 'a.json'), 'two\n');
    expect(readFileSync(join(d, 'a.json'), 'utf8')).toBe('two\n');
    expect(readdirSync(d)).toEqual(['a.json']);
  });
  it('never follows a symlink at the final component', async () => {
    const d = tmp();
    writeFileSync(join(d, 'victim'), 'precious\n');
    symlinkSync(join(d, 'victim'), join(d, 'link'));
    await expect(writeFileAtomic(join(d, 'link'), 'x')).rejects.toThrow(
      /refusing to replace a symbolic link/,
    );
    expect(lstatSync(join(d, 'link')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(d, 'victim'), 'utf8')).toBe('precious\n');
    expect(readdirSync(d).sort()).toEqual(['link', 'victim']);
  });
  it('refuses a FIFO and a directory', async () => {
    const d = tmp();
    execFileSync('mkfifo', [join(d, 'fifo')]);
    mkdirSync(join(d, 'dir'));
    await expect(writeFileAtomic(join(d, 'fifo'), 'x')).rejects.toThrow(/a FIFO/);
    await expect(writeFileAtomic(join(d, 'dir'), 'x')).rejects.toThrow(/a directory/);
    expect(lstatSync(join(d, 'fifo')).isFIFO()).toBe(true);
  });
  it('creates missing parents only when asked (isolate’s own state directory)', async () => {
    const d = tmp();
    await expect(writeFileAtomic(join(d, 'x/y/plan.json'), 'x')).rejects.toBeInstanceOf(UserError);
    expect(existsSync(join(d, 'x'))).toBe(false);
    await writeFileAtomic(join(d, 'var/lib/isolate/plan.json'), 'x', { createParents: true });
    expect(readFileSync(join(d, 'var/lib/isolate/plan.json'), 'utf8')).toBe('x');
  });
});

describe('writeNewFile', () => {
  it('creates a missing name with exactly the mode asked, whatever the umask', async () => {
    const d = tmp();
    const old = process.umask(0o077);
    try {
      await writeNewFile(join(d, 'rec'), 'one\n', 0o644);
    } finally {
      process.umask(old);
    }
    expect(readFileSync(join(d, 'rec'), 'utf8')).toBe('one\n');
    expect(lstatSync(join(d, 'rec')).mode & 0o777).toBe(0o644);
  });
  it('fails on anything already at the name, and writes through nothing', async () => {
    const d = tmp();
    writeFileSync(join(d, 'victim'), 'precious\n');
    writeFileSync(join(d, 'file'), 'theirs\n');
    symlinkSync(join(d, 'victim'), join(d, 'link'));
    symlinkSync(join(d, 'nowhere'), join(d, 'dangling'));
    execFileSync('mkfifo', [join(d, 'fifo')]);
    for (const name of ['file', 'link', 'dangling', 'fifo']) {
      await expect(writeNewFile(join(d, name), 'x')).rejects.toMatchObject({ code: 'EEXIST' });
    }
    expect(readFileSync(join(d, 'victim'), 'utf8')).toBe('precious\n');
    expect(readFileSync(join(d, 'file'), 'utf8')).toBe('theirs\n');
    // A dangling link is not followed to create its target.
    expect(existsSync(join(d, 'nowhere'))).toBe(false);
    expect(lstatSync(join(d, 'fifo')).isFIFO()).toBe(true);
  });
});

describe('readBounded / readTextFile', () => {
  const refusal = (f: () => unknown) => {
    try {
      f();
    } catch (err) {
      expect(err).toBeInstanceOf(ReadRefused);
      return err as ReadRefused;
    }
    throw new Error('not refused');
  };
  it('refuses a FIFO without blocking, and a directory', () => {
    const d = tmp();
    execFileSync('mkfifo', [join(d, 'fifo')]);
    expect(refusal(() => readBounded(join(d, 'fifo'), { maxBytes: 10 })).code).toBe('ENOTREG');
    expect(refusal(() => readBounded(d, { maxBytes: 10 })).code).toBe('ENOTREG');
  });
  it('enforces the size limit on the bytes read', () => {
    const d = tmp();
    writeFileSync(join(d, 'f'), 'x'.repeat(11));
    expect(readBounded(join(d, 'f'), { maxBytes: 11 })).toHaveLength(11);
    expect(refusal(() => readBounded(join(d, 'f'), { maxBytes: 10 })).code).toBe('EFBIG');
  });
  it('reports a missing file as ENOENT', () => {
    expect(refusal(() => readBounded('/nonexistent/x', { maxBytes: 10 })).code).toBe('ENOENT');
  });
  it('a file of many read chunks comes back whole and in order; bytes returned stay intact after later reads', () => {
    const d = tmp();
    // Distinct content per 32 KiB read, so a chunk read over another would show.
    const big = Array.from({ length: 12000 }, (_, i) => `line ${i}\n`).join('');
    expect(big.length).toBeGreaterThan(3 * 32 * 1024);
    writeFileSync(join(d, 'big'), big);
    writeFileSync(join(d, 'small'), 'first');
    writeFileSync(join(d, 'other'), 'second file');
    expect(readBounded(join(d, 'big'), { maxBytes: 1024 ** 2 })).toBe(big);
    const first = readBoundedBytes(join(d, 'small'), { maxBytes: 100 });
    readBoundedBytes(join(d, 'other'), { maxBytes: 100 });
    expect(first.toString()).toBe('first');
    writeFileSync(join(d, 'empty'), '');
    expect(readBounded(join(d, 'empty'), { maxBytes: 100 })).toBe('');
  });
  it('readBoundedIfPresent: null for a missing file or parent, refusals as readBounded', () => {
    const d = tmp();
    writeFileSync(join(d, 'f'), 'text');
    expect(readBoundedIfPresent(join(d, 'f'), { maxBytes: 10 })).toBe('text');
    expect(readBoundedIfPresent(join(d, 'missing'), { maxBytes: 10 })).toBeNull();
    expect(readBoundedIfPresent(join(d, 'f', 'below-a-file'), { maxBytes: 10 })).toBeNull();
    expect(refusal(() => readBoundedIfPresent(d, { maxBytes: 10 })).code).toBe('ENOTREG');
    expect(refusal(() => readBoundedIfPresent(join(d, 'f'), { maxBytes: 3 })).code).toBe('EFBIG');
  });
  it('text files: UTF-8 only', () => {
    const d = tmp();
    writeFileSync(join(d, 'bad'), Buffer.from([0x61, 0xc3, 0x28]));
    expect(refusal(() => readTextFile(join(d, 'bad'), { maxBytes: 100 })).code).toBe('EENCODING');
    writeFileSync(join(d, 'ok'), 'naïve\n');
    expect(readTextFile(join(d, 'ok'), { maxBytes: 100 })).toBe('naïve\n');
    // A truncated sequence at the very end, and an overlong encoding of '/', are refused too.
    writeFileSync(join(d, 'cut'), Buffer.from([0x61, 0xe2, 0x82]));
    expect(refusal(() => readTextFile(join(d, 'cut'), { maxBytes: 100 })).code).toBe('EENCODING');
    writeFileSync(join(d, 'overlong'), Buffer.from([0x61, 0xc0, 0xaf]));
    expect(refusal(() => readTextFile(join(d, 'overlong'), { maxBytes: 100 })).code).toBe('EENCODING');
    // An editor's byte order mark is not part of the text (a YAML key would start with U+FEFF).
    writeFileSync(join(d, 'bom'), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('a: 1\n')]));
    expect(readTextFile(join(d, 'bom'), { maxBytes: 100 })).toBe('a: 1\n');
  });
});

describe('readHeadSync, readTrimSync: the agent kernel-file readers', () => {
  it('read a head, a trimmed whole file (also past one 64 KiB buffer), null when absent', () => {
    const d = tmp();
    writeFileSync(join(d, 'procs'), '1\n2\n3\n');
    expect(readHeadSync(join(d, 'procs'), 2)).toBe('1\n');
    expect(readTrimSync(join(d, 'procs'))).toBe('1\n2\n3');
    const long = Array.from({ length: 20_000 }, (_, i) => String(100_000 + i)).join('\n');
    writeFileSync(join(d, 'long'), `${long}\n`);
    expect(readTrimSync(join(d, 'long'))).toBe(long);
    expect(readTrimSync(join(d, 'absent'))).toBeNull();
  });
  it('read a kernel seq_file longer than its page-sized buffer whole: a short read ends a file only when far below a page', () => {
    // A sleeping child's smaps: a seq_file of ~15 KB that the kernel hands out a page at a time, each
    // page cut short at a record boundary. Its mappings stay put while it sleeps (the numbers in them
    // may move: shared pages' Pss), so the lines' names are compared.
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const f = `/proc/${child.pid}/smaps`;
      const names = (text: string) => text.split('\n').map((l) => l.split(/\s/)[0]);
      // Once it has loaded (exec and the dynamic loader map its libraries first): two reads agree.
      let whole = readFileSync(f, 'utf8').trim();
      for (let i = 0; i < 100; i++) {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
        const again = readFileSync(f, 'utf8').trim();
        if (names(again).join() === names(whole).join()) break;
        whole = again;
      }
      expect(whole.length).toBeGreaterThan(3 * 4096);
      expect(names(readTrimSync(f)!)).toEqual(names(whole));
    } finally {
      child.kill();
    }
  });
  it('a FIFO under the root never blocks a round: empty or null, at once', () => {
    const d = tmp();
    execFileSync('mkfifo', [join(d, 'cpuset.cpus')]);
    // In a child process with a deadline: a blocking open would hang this test worker for good (no
    // timer can fire while open(2) waits for a writer), so the readers run from a bundle of the source.
    const bundle = join(d, 'read.cjs');
    buildSync({
      entryPoints: [join(import.meta.dirname, '../../src/sys/read.ts')],
      outfile: bundle,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      logLevel: 'silent',
    });
    const probe = `const r = require(${JSON.stringify(bundle)}); const f = ${JSON.stringify(join(d, 'cpuset.cpus'))};
      console.log(JSON.stringify([r.readHeadSync(f, 64), r.readTrimSync(f)]));`;
    const run = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8', timeout: 10_000 });
    expect(run.signal, 'the reader blocked on the FIFO').toBeNull();
    expect(run.status, run.stderr).toBe(0);
    for (const v of JSON.parse(run.stdout) as (string | null)[]) expect(v || null).toBeNull();
  });
});

describe('readLiveSync, isDirLiveSync: a value about to be changed is absent only when it does not exist', () => {
  it('null for a missing file or directory; any other failure throws, naming the file and errno', () => {
    const d = tmp();
    writeFileSync(join(d, 'cpuset.cpus'), '0-3\n');
    expect(readLiveSync(join(d, 'cpuset.cpus'))).toBe('0-3');
    expect(readLiveSync(join(d, 'gone'))).toBeNull();
    expect(readLiveSync(join(d, 'cpuset.cpus', 'below-a-file'))).toBeNull(); // ENOTDIR: absent too
    expect(() => readLiveSync(d)).toThrow(UnreadableError);
    execFileSync('mkfifo', [join(d, 'fifo')]);
    expect(() => readLiveSync(join(d, 'fifo'))).toThrow(
      /cannot read .*fifo \(EFTYPE\): its value is unknown/,
    );
    expect(isDirLiveSync(d)).toBe(true);
    expect(isDirLiveSync(join(d, 'gone'))).toBe(false);
    expect(isDirLiveSync(join(d, 'cpuset.cpus'))).toBe(false);
  });
});
