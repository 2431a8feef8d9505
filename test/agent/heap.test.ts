// compactHeap against V8's own gc (vitest's workers do not expose one: it is made here with
// setFlagsFromString, the same function --expose-gc gives the packaged executable at start).
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { compactHeap } from '../../src/agent/heap.js';

describe('compactHeap', () => {
  it('is a no-op where the runtime exposes no gc', () => {
    expect(compactHeap(undefined)).toBe(false);
    expect(compactHeap({})).toBe(false);
  });

  it("runs V8's full GC (the flavor this Node takes): 32 MiB that became garbage no longer count in the heap when it returns", () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    let garbage: number[][] | null = Array.from({ length: 64 }, () => new Array(65_536).fill(1.5));
    const held = getHeapStatistics().used_heap_size;
    garbage = null;
    expect(compactHeap(gc)).toBe(true);
    expect(held - getHeapStatistics().used_heap_size).toBeGreaterThan(24 * 2 ** 20);
    expect(garbage).toBeNull();
  });
});
