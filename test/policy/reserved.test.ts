// reserved: cores per package (the default) or per NUMA node, and the one-line refusals of a bad `per`.
import { describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/policy/load.js';
import { KAFKA_YARN_POLICY, policyRefusal } from '../support/policies.js';

const withReserved = (r: string) => KAFKA_YARN_POLICY.replace('reserved: { cores: 1 }', `reserved: ${r}`);

describe('reserved', () => {
  it('per: node and per: package are kept; no per means package', () => {
    expect(parsePolicy(withReserved('{ cores: 2, per: node }'), 'p.yaml').reserved).toEqual({
      cores: 2,
      per: 'node',
    });
    expect(parsePolicy(withReserved('{ cores: 1, per: package }'), 'p.yaml').reserved).toEqual({
      cores: 1,
      per: 'package',
    });
    expect(parsePolicy(withReserved('{ cores: 1 }'), 'p.yaml').reserved).toEqual({
      cores: 1,
      per: 'package',
    });
  });

  it('refuses an unknown per, naming both values', () => {
    expect(policyRefusal(withReserved('{ cores: 1, per: socket }'))).toMatch(
      /reserved\.per: expected package \(N cores of every socket\) or node \(N cores of every NUMA node\); got "?socket"?/,
    );
  });

  it('refuses per beside a CPU list, which it cannot apply to', () => {
    expect(policyRefusal(withReserved('{ cpus: "0", per: node }'))).toMatch(
      /reserved\.per: per applies to cores only; remove it, or use cores: N instead of cpus/,
    );
  });
});
