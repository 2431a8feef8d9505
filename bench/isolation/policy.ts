/**
 * The policies the isolated arms apply: the probe is the exclusive workload, the batch load the batch
 * workload, each matched by the top-level cgroup the arms script starts it in. Top-level because
 * isolate makes only top-level cgroups cpuset partition roots, as it would for kafka.slice.
 */
export const PROBE_CGROUP = '/isolate-bench-probe';
export const BATCH_CGROUP = '/isolate-bench-batch';

/**
 * `quiet` (IRQs, packet steering, workqueues) changes the whole host, not the bench's cgroups: off on a
 * real host unless the operator allowed host-wide changes (--host-wide); on in a guest, as by default.
 */
export function benchPolicy(opts: { strict: boolean; cores: number; quiet: boolean }): string {
  return `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
strict: ${opts.strict}
${opts.quiet ? '' : 'quiet: { irqs: false, workqueues: false }\n'}workloads:
  - name: bench-probe
    class: exclusive
    cores: ${opts.cores}
    numa: single
    match: { cgroup: ${PROBE_CGROUP} }
  - name: bench-batch
    class: batch
    match: { cgroup: ${BATCH_CGROUP} }
`;
}
