// Pure parsing checks for the console protocol; no guest is booted here.
import { describe, expect, it } from 'vitest';
import { CpioWriter } from './cpio.js';
import { guestPathIn } from './rootfs.js';
import { parseExitStatus, parseSections } from './run.js';

describe('parseSections', () => {
  it('keeps exact section text and strips CR from the serial console', () => {
    const text = 'noise\r\n=====BEGIN a=====\r\n0-1\r\n\r\n=====END a=====\r\n';
    expect(parseSections(text)).toEqual({ a: '0-1\n\n' });
  });

  it('takes text before an END marker on the same line (file without trailing newline)', () => {
    expect(parseSections('=====BEGIN x=====\nab\ncd=====END x=====\n')).toEqual({ x: 'ab\ncd' });
  });

  it('drops printk lines inside a section and finds markers behind interleaved output', () => {
    const text = '[    1.234567] x=====BEGIN s=====\nok\n[   12.000001] rcu: stall\nmore\n=====END s=====\n';
    expect(parseSections(text)).toEqual({ s: 'ok\nmore\n' });
  });

  it('returns the last exit marker, or null without one', () => {
    expect(parseExitStatus('=====EXIT 3=====\n\n=====EXIT 0=====\n')).toBe(0);
    expect(parseExitStatus('Kernel panic')).toBeNull();
  });
});

describe('CpioWriter', () => {
  it('writes 4-byte aligned newc entries with parents first and a trailer', () => {
    const buf = new CpioWriter().file('/a/b.txt', 'hi').finish();
    const names = [...buf.toString('latin1').matchAll(/070701[0-9a-f]{104}([^\0]+)\0/g)].map((m) => m[1]);
    expect(names).toEqual(['a', 'a/b.txt', 'TRAILER!!!']);
    expect(buf.length % 4).toBe(0);
  });
});

describe('CpioWriter owners', () => {
  it('writes uid and gid into the header (a Debian tree has group-owned files)', () => {
    const buf = new CpioWriter().file('/etc/shadow', 'x', 0o640, { uid: 0, gid: 42 }).finish();
    const header = /070701[0-9a-f]{104}etc\/shadow\0/.exec(buf.toString('latin1'))![0];
    expect(header.slice(22, 30)).toBe('00000000');
    expect(header.slice(30, 38)).toBe('0000002a');
    expect(Number.parseInt(header.slice(14, 22), 16) & 0o7777).toBe(0o640);
  });
});

describe('guestPathIn', () => {
  const rootfs = { topSymlinks: { bin: 'usr/bin', lib: 'usr/lib', lib64: 'usr/lib64', abs: '/elsewhere' } };

  it('writes through the merged-/usr symlinks instead of replacing them with directories', () => {
    expect(guestPathIn(rootfs, '/lib/x86_64-linux-gnu/libc.so.6')).toBe(
      '/usr/lib/x86_64-linux-gnu/libc.so.6',
    );
    expect(guestPathIn(rootfs, '/lib64/ld-linux-x86-64.so.2')).toBe('/usr/lib64/ld-linux-x86-64.so.2');
    expect(guestPathIn(rootfs, '/lib/systemd/system/x.service')).toBe('/usr/lib/systemd/system/x.service');
  });

  it('leaves other paths alone, including look-alike names and absolute link targets', () => {
    expect(guestPathIn(rootfs, '/etc/systemd/system/x.service')).toBe('/etc/systemd/system/x.service');
    expect(guestPathIn(rootfs, '/library/x')).toBe('/library/x');
    expect(guestPathIn(rootfs, '/usr/lib/x')).toBe('/usr/lib/x');
    expect(guestPathIn(rootfs, '/abs/x')).toBe('/abs/x');
  });
});
