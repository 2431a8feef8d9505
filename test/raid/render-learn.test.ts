// raid show for people: a next-learn time without the controller's raw seconds counter (--json keeps it).
import { describe, expect, it } from 'vitest';
import { learnTime } from '../../src/cli/raid-render.js';

describe('learnTime', () => {
  it("drops storcli's seconds counter and the double space, and leaves other spellings as they are", () => {
    expect(learnTime('2026/05/09  20:21:41 (831673301 seconds)')).toBe('2026/05/09 20:21:41');
    expect(learnTime('2024/04/18  18:32:56')).toBe('2024/04/18 18:32:56');
    expect(learnTime('Thu Dec 21 18:32:56 2023')).toBe('Thu Dec 21 18:32:56 2023');
    // Not a trailing counter: kept.
    expect(learnTime('in 28d (2419200 seconds) from now')).toBe('in 28d (2419200 seconds) from now');
  });
});
