import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CpuSet, CpuSetParseError } from '../../src/model/cpuset.js';

describe('CpuSet', () => {
  it.each([
    ['', []],
    ['0', [0]],
    ['0-3,8-11', [0, 1, 2, 3, 8, 9, 10, 11]],
    ['5,1-2', [1, 2, 5]],
    ['0-1\n', [0, 1]],
    ['0\n\0', [0]],
    [' 7 ', [7]],
    ['3,3,2-4', [2, 3, 4]],
  ])('parses %j', (text, ids) => {
    expect(CpuSet.parse(text).toArray()).toEqual(ids);
  });

  it.each(['a', '1-', '-1', '3-1', '1,,2', '1;2', '0x3', '1-2-3', '1 2', '0-15:2/4'])(
    'rejects %j',
    (text) => {
      expect(() => CpuSet.parse(text)).toThrow(CpuSetParseError);
    },
  );

  it('prints canonical ranges', () => {
    expect(CpuSet.of([11, 0, 1, 2, 3, 8, 9, 10]).toString()).toBe('0-3,8-11');
    expect(CpuSet.of([0, 2, 4]).toString()).toBe('0,2,4');
    expect(CpuSet.EMPTY.toString()).toBe('');
  });

  it('parses hex masks, most significant word first', () => {
    expect(CpuSet.parseMask('00000003').toArray()).toEqual([0, 1]);
    expect(CpuSet.parseMask('00000001,00000101').toArray()).toEqual([0, 8, 32]);
    expect(CpuSet.parseMask('ff,00000000').toArray()).toEqual([32, 33, 34, 35, 36, 37, 38, 39]);
    expect(() => CpuSet.parseMask('zz')).toThrow(CpuSetParseError);
  });

  it('round-trips any set through the list format', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 4095 }), { maxLength: 300 }), (ids) => {
        const set = CpuSet.of(ids);
        const again = CpuSet.parse(set.toString());
        expect(again.equals(set)).toBe(true);
        expect(again.toArray()).toEqual([...ids].sort((a, b) => a - b));
      }),
    );
  });

  it('set algebra agrees with plain arrays', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 200 })),
        fc.uniqueArray(fc.integer({ min: 0, max: 200 })),
        (a, b) => {
          const A = CpuSet.of(a);
          const B = CpuSet.of(b);
          const sb = new Set(b);
          expect(A.intersect(B).toArray()).toEqual([...a].filter((x) => sb.has(x)).sort((x, y) => x - y));
          expect(A.minus(B).toArray()).toEqual([...a].filter((x) => !sb.has(x)).sort((x, y) => x - y));
          expect(A.union(B).size).toBe(new Set([...a, ...b]).size);
          expect(A.overlaps(B)).toBe(a.some((x) => sb.has(x)));
          expect(A.isSubsetOf(B)).toBe(a.every((x) => sb.has(x)));
        },
      ),
    );
  });
});
