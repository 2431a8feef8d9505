// `isolate apply` on an already converged host (the no-op path) versus `isolate plan --dry-run`,
// both whole commands, inside a qemu guest after a first apply. Target: apply ≤ 1.2× plan.
//   node bench/apply-vm.mjs [runs=7]
import { loadVmKit, runTimed } from './check-vm-kit.mjs';

const runs = Number(process.argv[2] ?? 7);
const POLICY = `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
strict: true
workloads:
  - name: kafka
    class: exclusive
    cores: 1
    numa: single
    match: { process: { cmdline: 'kafka\\.Kafka' } }
    memory: { low: 64M, mems: local }
  - name: flink
    class: batch
    match: { process: { cmdline: 'flink\\.TaskManager' } }
    memory: { high: 512M }
    cpu: { weight: 10 }
`;
const kit = await loadVmKit();
const P = '/etc/isolate/policy.yaml';
const script = `
. /harness/lib.sh
fake_host
standin kafka.Kafka 8 sleep &
standin flink.TaskManager 4 sleep &
isolate apply --yes --policy ${P} > /dev/null 2>&1 || echo "apply failed"
sec noop; isolate apply --yes --policy ${P}; endsec noop
sec timing
RUNS=${runs} node /bench/timer.mjs \\
  'plan=node|/opt/isolate/dist/cli.js|plan|--dry-run|--policy|${P}' \\
  'apply=node|/opt/isolate/dist/cli.js|apply|--yes|--policy|${P}'
endsec timing
`;
const r = await runTimed(kit, script, { '/etc/isolate/policy.yaml': POLICY });
const t = JSON.parse(r.sections.timing);
console.log(
  `no-op apply on a converged host (qemu TCG guest, ${kit.layoutName}); apply said: ${(r.sections.noop ?? '').trim()}`,
);
console.log(
  `  isolate plan --dry-run : median ${t.plan.median.toFixed(0)} ms (min ${t.plan.min.toFixed(0)})`,
);
console.log(
  `  isolate apply (no-op)  : median ${t.apply.median.toFixed(0)} ms (min ${t.apply.min.toFixed(0)})`,
);
console.log(`  ratio apply/plan       : ${(t.apply.median / t.plan.median).toFixed(2)}× (target ≤ 1.2×)`);
