// Every number in a policy is a safe integer (at most 2^53 − 1) inside its field's range: above that a
// YAML number is rounded (99999999999999999999 reads as 100000000000000000000), so a count or size
// written there is not the one isolate would use. Refused in one line naming file:line:col and field.
import { describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/policy/load.js';
import { policyRefusal } from '../support/policies.js';

const BASE = `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
workloads:
  - name: kafka
    class: exclusive
    cores: 2
    match: { process: { cmdline: kafka, user: kafka } }
    memory: { low: 1G }
  - name: flink
    class: batch
    match: { cgroup: /hadoop-yarn }
    memory: { high: 2G, max: 3G }
    cpu: { weight: 100 }
raid: { timeoutSeconds: 60 }
`;

const edit = (from: string, to: string): string => {
  expect(BASE).toContain(from);
  return BASE.replace(from, to);
};

const refusal = policyRefusal;

const TOO_BIG =
  'got a number above 9007199254740991 \\(2\\^53 − 1\\), the largest whole number a policy holds exactly';

describe('counts beyond 2^53 − 1 are refused, naming file, line:column and field', () => {
  it.each([
    ['workloads[0].cores', 'cores: 2', 'cores: 99999999999999999999', ':7:12: workloads\\[0\\]\\.cores: '],
    ['reserved.cores', '{ cores: 1 }', '{ cores: 99999999999999999999 }', ':3:20: reserved\\.cores: '],
    [
      'workloads[0].match.process.user',
      'user: kafka',
      'user: 99999999999999999999',
      ':8:47: workloads\\[0\\]\\.match\\.process\\.user: ',
    ],
    [
      'workloads[1].cpu.weight',
      'weight: 100',
      'weight: 99999999999999999999',
      ':14:20: workloads\\[1\\]\\.cpu\\.weight: ',
    ],
    [
      'workloads[0].memory.low (bytes)',
      'low: 1G',
      'low: 99999999999999999999',
      ':9:20: workloads\\[0\\]\\.memory\\.low: ',
    ],
  ])('%s', (_field, from, to, where) => {
    expect(refusal(edit(from, to))).toMatch(new RegExp(`^p\\.yaml${where}${TOO_BIG}.*; expected `));
  });

  it('the fix names the field’s range', () => {
    expect(refusal(edit('cores: 2', 'cores: 99999999999999999999'))).toMatch(
      /expected a whole number of physical cores, 1 or more$/,
    );
    expect(refusal(edit('weight: 100', 'weight: 99999999999999999999'))).toMatch(
      /expected a whole number from 1 to 10000 \(cgroup cpu\.weight\)$/,
    );
  });

  it('the first number that is not exact, 2^53, is refused too', () => {
    expect(refusal(edit('cores: 2', 'cores: 9007199254740992'))).toMatch(
      /workloads\[0\]\.cores: got a number above/,
    );
    expect(refusal(edit('{ cores: 1 }', '{ cores: 9007199254740992 }'))).toMatch(
      /reserved\.cores: got a number above/,
    );
    expect(refusal(edit('low: 1G', 'low: 9007199254740992'))).toMatch(/memory\.low: got a number above/);
  });

  it('a uid beyond the kernel’s 32-bit uid_t is refused (4294967295 is (uid_t)-1, no user)', () => {
    expect(refusal(edit('user: kafka', 'user: 4294967295'))).toMatch(
      /workloads\[0\]\.match\.process\.user: expected a user name or numeric uid \(0 to 4294967294\); got number 4294967295$/,
    );
  });
});

describe('sizes beyond 2^53 − 1 bytes are refused, saying how large a size may be', () => {
  it.each([
    ['99999999999999999999G', 'low'],
    ['8192T', 'low'],
    ['8P', 'high'],
    ['8388608G', 'max'],
  ])('%s', (size, key) => {
    const text =
      key === 'low'
        ? edit('low: 1G', `low: ${size}`)
        : edit(`${key}: ${key === 'high' ? '2G' : '3G'}`, `${key}: ${size}`);
    expect(refusal(text)).toMatch(
      new RegExp(
        `workloads\\[\\d\\]\\.memory\\.${key}: size "${size}" is too large: at most 9007199254740991 bytes \\(just under 8P\\); write a smaller size`,
      ),
    );
  });
});

describe('the largest exact values are still accepted', () => {
  it('cores, reserved cores and bytes up to 9007199254740991, sizes up to 8191T, uid 4294967294', () => {
    const p = parsePolicy(
      BASE.replace('cores: 2', 'cores: 9007199254740991')
        .replace('{ cores: 1 }', '{ cores: 9007199254740991 }')
        .replace('low: 1G', 'low: 9007199254740991, min: "9007199254740991"')
        .replace('high: 2G, max: 3G', 'high: 8191T, max: 8191T')
        .replace('user: kafka', 'user: 4294967294')
        .replace('weight: 100', 'weight: 10000')
        .replace('timeoutSeconds: 60', 'timeoutSeconds: 3600'),
      'p.yaml',
    );
    expect(p.workloads[0]!.cores).toEqual({ count: 9007199254740991 });
    expect(p.reserved).toEqual({ cores: 9007199254740991, per: 'package' });
    expect(p.workloads[0]!.memory.low).toEqual({ bytes: 9007199254740991 });
    expect(p.workloads[0]!.memory.min).toEqual({ bytes: 9007199254740991 });
    expect(p.workloads[1]!.memory.high).toEqual({ bytes: 8191 * 1024 ** 4 });
    expect(p.workloads[0]!.match).toMatchObject({ user: 4294967294 });
    expect(p.workloads[1]!.cpu).toEqual({ weight: 10000 });
    expect(p.raid?.timeoutSeconds).toBe(3600);
  });
});
