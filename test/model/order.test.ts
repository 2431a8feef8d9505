// Locale-free orderings: the same result on every host, numbers inside names compared as numbers.
import { describe, expect, it } from 'vitest';
import { byNatural, byText } from '../../src/model/order.js';

describe('orderings', () => {
  it('byText is code-point order (a hyphen sorts before a dot, upper case before lower case)', () => {
    expect(['system.slice', 'b', 'system-x.slice', 'B'].sort(byText)).toEqual([
      'B',
      'b',
      'system-x.slice',
      'system.slice',
    ]);
  });

  it('byNatural compares runs of digits as numbers', () => {
    expect(['host10', 'host2', 'host1', 'host', 'host02', 'hosta'].sort(byNatural)).toEqual([
      'host',
      'host1',
      'host2',
      'host02',
      'host10',
      'hosta',
    ]);
  });
});
