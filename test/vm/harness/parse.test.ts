// Pure parsing checks for the console protocol; no guest is booted here.
import { describe, expect, it } from 'vitest';
import { CpioWriter } from './cpio.js';
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
