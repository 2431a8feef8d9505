// Real-kernel scenarios over machine shapes: one socket with 4 nodes, a node with CPUs but no
// memory, and an offline SMT sibling. The same contract is asserted on each, from /proc and sysfs
// as the guest kernel reports them: Kafka gets whole online cores of one node and memory from a
// node that has memory, nothing else can run there, check passes, rollback restores every file.
import { beforeAll, describe, expect, it } from 'vitest';
import { CpuSet } from '../../src/model/cpuset.js';
import { LAYOUTS, type VmLayout } from './harness/index.js';
import {
  isKernelThread,
  parsePairs,
  parseThreads,
  pidsMatching,
  snapDiff,
  snapLines,
} from './support/guest.js';
import { standinPolicy } from './support/policy.js';
import { vmScenario } from './support/scenario.js';

const POLICY = standinPolicy({
  strict: true,
  kafka: 'cmdline',
  kafkaMemory: { low: '32M', mems: 'local' },
  batch: [{ name: 'flink', match: 'cmdline', weight: 10 }],
});

const script = (prep: string) => `
. /harness/lib.sh
P=/etc/isolate/policy.yaml
${prep}
fake_host
standin kafka.Kafka 4 busy &
standin flink.TaskManager 2 busy &
sleep 1
sec topo
for c in /sys/devices/system/cpu/cpu[0-9]*; do
  [ -f $c/topology/thread_siblings_list ] && echo "\${c##*/cpu} $(cat $c/topology/thread_siblings_list)"
done
endsec topo
sec nodes; for n in /sys/devices/system/node/node[0-9]*; do echo "\${n##*/node} $(cat $n/cpulist)"; done; endsec nodes
sec has-memory; cat /sys/devices/system/node/has_memory; endsec has-memory
sec online; cat /sys/devices/system/cpu/online; endsec online
state before
run apply isolate apply --yes --policy $P
state after
run check isolate check --policy $P
run rollback isolate rollback
state rolled
`;

interface Case {
  layout: VmLayout;
  prep?: string;
}

const CASES: [string, Case][] = [
  ['one socket, 4 nodes', { layout: LAYOUTS.oneSocket4Nodes }],
  ['a node with CPUs but no memory', { layout: LAYOUTS.memorylessNode }],
  [
    'an offline SMT sibling',
    {
      layout: LAYOUTS.twoSocketSmt2,
      // CPU 7 (sibling of 6) offline: core 6 is half there; core 2 (2-3) is the only whole free core.
      prep: 'echo 0 > /sys/devices/system/cpu/cpu7/online',
    },
  ],
];

describe.each(CASES)('apply on a real kernel: %s', (_name, c) => {
  const { s } = vmScenario(`layout-${c.layout.name}${c.prep ? '-offline' : ''}`, {
    layout: c.layout,
    includeProject: true,
    script: script(c.prep ?? ''),
    standin: true,
    policy: POLICY,
    timeoutMs: 420_000,
  });
  let k: CpuSet;
  beforeAll(() => {
    k = CpuSet.parse(snapLines(s('after-snap')).get('./isolate-kafka/cpuset.cpus') ?? '');
  });

  it('applies', () => {
    expect(s('apply-rc').trim(), s('apply')).toBe('0');
    expect(k.isEmpty).toBe(false);
  });

  it('gives Kafka whole online cores of one node, as a valid partition root', () => {
    const online = CpuSet.parse(s('online').trim());
    expect(k.isSubsetOf(online)).toBe(true);
    const sib = parsePairs(s('topo'));
    for (const cpu of k)
      expect(CpuSet.parse(sib.get(cpu) ?? '').isSubsetOf(k), `siblings of ${cpu}`).toBe(true);
    // Whole physical cores: with an offline sibling, Kafka must not get the half-present core.
    if (c.prep) expect(k.toString()).toBe('2-3');
    const nodes = [...parsePairs(s('nodes')).entries()].filter(([, l]) => CpuSet.parse(l).overlaps(k));
    expect(nodes).toHaveLength(1);
    expect(snapLines(s('after-snap')).get('./isolate-kafka/cpuset.cpus.partition')).toBe('root');
  });

  it('takes memory only from nodes that have memory', () => {
    const mems = CpuSet.parse(snapLines(s('after-snap')).get('./isolate-kafka/cpuset.mems') ?? '');
    expect(mems.isEmpty).toBe(false);
    expect(mems.isSubsetOf(CpuSet.parse(s('has-memory').trim()))).toBe(true);
  });

  it('keeps every Kafka thread on its cores and every other user thread off them', () => {
    const threads = parseThreads(s('after-threads'));
    const kafka = new Set(pidsMatching(parsePairs(s('after-cmdlines')), /^standin kafka\.Kafka/));
    const kt = threads.filter((t) => kafka.has(t.pid));
    expect(kt).toHaveLength(5);
    for (const t of kt) expect(t.cpus.equals(k)).toBe(true);
    const bad = threads.filter((t) => !kafka.has(t.pid) && !isKernelThread(t) && t.cpus.overlaps(k));
    expect(bad.map((t) => `${t.pid}/${t.tid} ${t.name} ${t.cpuList}`)).toEqual([]);
  });

  it('check passes', () => {
    expect(s('check-rc').trim(), s('check')).toBe('0');
  });

  it('rollback restores every file exactly', () => {
    expect(s('rollback-rc').trim(), s('rollback')).toBe('0');
    expect(snapDiff(s('before-snap'), s('rolled-snap'))).toEqual([]);
  });
});
