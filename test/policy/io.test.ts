// `io:` in the policy: defaults that follow from `disks:`, and one-line errors naming the field and the fix.
import { describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/policy/load.js';

const doc = (kafka: string, flink = '') => `apiVersion: isolate/v1
kind: HostPolicy
workloads:
  - { name: kafka, class: exclusive, cores: 2, match: { cgroup: /kafka.slice }${kafka} }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn }${flink} }
`;
const load = (kafka: string, flink = '') => parsePolicy(doc(kafka, flink), 'p.yaml').workloads;
const refusal = (kafka: string, flink = '') => {
  try {
    load(kafka, flink);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('accepted');
};
const DISKS = ', disks: { paths: [/data1/kafka-logs] }';

describe('policy io:', () => {
  it('disks: alone gives Kafka a latency target by disk kind and weight 1000, batch weight 25', () => {
    const [k, f] = load(DISKS);
    expect(k!.io).toEqual({ latency: 'auto', weight: 1000, max: {} });
    expect(f!.io).toEqual({ latency: 'off', weight: 25, max: {} });
  });

  it('no disks anywhere: no io at all', () => {
    const [k, f] = load('');
    expect(k!.io).toBeUndefined();
    expect(f!.io).toBeUndefined();
  });

  it('reads latencies, weights, off and caps as SREs write them', () => {
    const [k, f] = load(
      `${DISKS}, io: { latency: 10ms, weight: off }`,
      ', io: { max: { rbps: 80MB/s, wiops: 300 } }',
    );
    expect(k!.io).toEqual({ latency: { usec: 10000 }, weight: 'off', max: {} });
    expect(f!.io).toEqual({ latency: 'off', weight: 25, max: { rbps: 80 * 1024 ** 2, wiops: 300 } });
  });

  it.each([
    [
      `${DISKS}, io: { latency: 10 }`,
      '',
      /workloads\[0\]\.io\.latency: expected a latency target from 100us to 10s like 25ms/,
    ],
    [
      `${DISKS}, io: { latency: 50us }`,
      '',
      /workloads\[0\]\.io\.latency: expected a latency target from 100us/,
    ],
    [
      `${DISKS}, io: { weight: 0 }`,
      '',
      /workloads\[0\]\.io\.weight: expected a whole number from 1 to 10000/,
    ],
    [
      `${DISKS}, io: { max: { wbps: 1M } }`,
      '',
      /workloads\[0\]\.io\.max: unknown field "max".*allowed: latency, weight/,
    ],
    [
      DISKS,
      ', io: { latency: 5ms }',
      /workloads\[1\]\.io\.latency: unknown field "latency".*allowed: weight, max/,
    ],
    [
      DISKS,
      ', io: { max: { wbps: fast } }',
      /workloads\[1\]\.io\.max\.wbps: expected a rate in bytes per second like 80MB\/s/,
    ],
    [
      DISKS,
      ', io: { max: { riops: 1.5 } }',
      /workloads\[1\]\.io\.max\.riops: expected a whole number of I\/Os per second/,
    ],
    [
      ', io: { weight: 500 }',
      '',
      /workloads\[0\]\.io: io acts on the disks under the workload's data; add disks:/,
    ],
    [
      '',
      ', io: { weight: 10 }',
      /workloads\[1\]\.io: a batch workload's io settings act on the exclusive workloads' disks, and none has disks:; add disks:/,
    ],
  ])('refuses %s %s in one line', (kafka, flink, re) => {
    const m = refusal(kafka, flink);
    expect(m).toMatch(/^p\.yaml:\d+:\d+: /);
    expect(m).toMatch(re);
    expect(m.split('\n')).toHaveLength(1);
  });
});
