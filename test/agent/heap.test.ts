// compactHeap against V8's own gc. vitest's workers run without --expose-gc, as the executable does:
// the gc comes from compactHeap itself (or the global one, if some earlier file exposed it).
import { getHeapStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { compactHeap, v8Gc } from '../../src/agent/heap.js';

describe('compactHeap', () => {
  it('is a no-op when given something that is not a gc', () => {
    expect(compactHeap(null)).toBe(false);
    expect(compactHeap({})).toBe(false);
  });

  it("runs V8's full GC (the flavor this Node takes): 32 MiB that became garbage no longer count in the heap when it returns", () => {
    let garbage: number[][] | null = Array.from({ length: 64 }, () => new Array(65_536).fill(1.5));
    const held = getHeapStatistics().used_heap_size;
    garbage = null;
    expect(compactHeap()).toBe(true);
    expect(held - getHeapStatistics().used_heap_size).toBeGreaterThan(24 * 2 ** 20);
    expect(garbage).toBeNull();
  });

  it('takes the same gc every time: the context it comes from is made once, not garbage after each compaction', () => {
    const gc = v8Gc();
    expect(typeof gc).toBe('function');
    expect(v8Gc()).toBe(gc);
  });
});
