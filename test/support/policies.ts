// The smallest whole policy many tests share: Kafka alone on one core in /kafka.slice, YARN's
// containers in /hadoop-yarn as the batch workload, one reserved core.
export const KAFKA_YARN_POLICY = `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
workloads:
  - { name: kafka, class: exclusive, cores: 1, match: { cgroup: /kafka.slice } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
`;
