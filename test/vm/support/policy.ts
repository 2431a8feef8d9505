// The policy every real-kernel scenario writes for its stand-ins: one reserved core, Kafka alone on one
// whole core (of one NUMA node, the default), then batch workloads. What differs between scenarios is a
// parameter: strict, how each stand-in is found (its command line, its unit, its cgroup, in v1's cpu
// hierarchy), memory, cpu.weight.
import { stringify } from 'yaml';
import { KAFKA_UNIT, NODEMANAGER_UNIT } from './systemd-guest.js';

/** How the policy finds the Kafka stand-in. */
const KAFKA_MATCH = {
  /** `standin kafka.Kafka ...` started by a busybox scenario, as a broker's java command line. */
  cmdline: { process: { cmdline: 'kafka\\.Kafka' } },
  /** kafka.service of the systemd guests (support/systemd-guest.ts). */
  unit: { systemdUnit: KAFKA_UNIT },
  /** A cgroup made by hand in a busybox guest. */
  slice: { cgroup: '/kafka.slice' },
};

/** How the policy finds a batch workload. */
const BATCH_MATCH = {
  /** `standin flink.TaskManager ...`. */
  cmdline: { process: { cmdline: 'flink\\.TaskManager' } },
  /** YARN's containers, made through cgroupfs outside any unit. */
  yarn: { cgroup: '/hadoop-yarn' },
  /** The same on cgroup v1, in the cpu,cpuacct hierarchy (as LinuxContainerExecutor makes them). */
  'yarn-v1': { cgroup: '/hadoop-yarn', hierarchy: 'cpu' },
  /** The Delegate=yes NodeManager unit of systemdStandins({ nodeManager: true }). */
  nodemanager: { systemdUnit: NODEMANAGER_UNIT },
};

export interface BatchWorkload {
  name: string;
  match: keyof typeof BATCH_MATCH;
  memory?: { high?: string; max?: string };
  /** cpu.weight. */
  weight?: number;
}

export interface StandinPolicyOptions {
  /** Default false. */
  strict?: boolean;
  kafka: keyof typeof KAFKA_MATCH;
  kafkaMemory?: { low?: string; mems?: 'local' };
  batch: BatchWorkload[];
}

/** Policy YAML: workload `kafka` (exclusive, one core) first, then `batch` in order. */
export function standinPolicy(o: StandinPolicyOptions): string {
  // Undefined values are left out; a match used twice is written twice, not as a YAML alias.
  return stringify(
    {
      apiVersion: 'isolate/v1',
      kind: 'HostPolicy',
      reserved: { cores: 1 },
      strict: o.strict ?? false,
      workloads: [
        { name: 'kafka', class: 'exclusive', cores: 1, match: KAFKA_MATCH[o.kafka], memory: o.kafkaMemory },
        ...o.batch.map((b) => ({
          name: b.name,
          class: 'batch',
          match: BATCH_MATCH[b.match],
          memory: b.memory,
          cpu: b.weight === undefined ? undefined : { weight: b.weight },
        })),
      ],
    },
    { aliasDuplicateObjects: false },
  );
}
