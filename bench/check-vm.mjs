// `isolate check` over a large process table versus `ps -eLo pid,tid,psr,comm` on the same table,
// inside a qemu guest (real /proc, real kernel): 2,000 processes × 10 threads by default.
// Target: isolate check ≤ 1× ps. Run after `npm run build`:
//   node bench/check-vm.mjs [procs=2000] [threadsPerProc=10] [runs=5]
import { loadVmKit, runTimed } from './check-vm-kit.mjs';

const procs = Number(process.argv[2] ?? 2000);
const threads = Number(process.argv[3] ?? 10);
const runs = Number(process.argv[4] ?? 5);

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
    memory: { mems: local }
`;

const kit = await loadVmKit();
const script = `
. /harness/lib.sh
echo 200000 > /proc/sys/kernel/threads-max
echo 4194304 > /proc/sys/kernel/pid_max
fake_host
standin kafka.Kafka 8 sleep &
standin --fanout ${procs} ${threads - 1}
isolate apply --yes --policy /etc/isolate/policy.yaml > /dev/null 2>&1 || echo "apply failed"
sleep 2
sec counts; echo "$(ls -d /proc/[0-9]* | wc -l) $(ls -d /proc/[0-9]*/task/[0-9]* | wc -l) $(/opt/procps/bin/ps -eLo pid,tid,psr,comm | wc -l)"; endsec counts
sec check-json; isolate check --json --policy /etc/isolate/policy.yaml | grep -A4 '"stats"'; endsec check-json
sec timing
RUNS=${runs} node /bench/timer.mjs \\
  'ps=/bin/sh|-c|exec /opt/procps/bin/ps -eLo pid,tid,psr,comm </dev/console' \
  'check=node|/opt/isolate/dist/cli.js|check|--policy|/etc/isolate/policy.yaml'
endsec timing
`;
const r = await runTimed(kit, script, { '/etc/isolate/policy.yaml': POLICY });
const [p, t, psLines] = (r.sections.counts ?? '').trim().split(/\s+/).map(Number);
const timing = JSON.parse(r.sections.timing ?? '{}');
console.log(
  `guest process table: ${p} processes, ${t} threads; ps printed ${psLines} lines (qemu TCG, ${kit.layoutName})`,
);
console.log(
  `  ps -eLo pid,tid,psr,comm : median ${timing.ps?.median.toFixed(0)} ms (min ${timing.ps?.min.toFixed(0)})`,
);
console.log(
  `  isolate check            : median ${timing.check?.median.toFixed(0)} ms (min ${timing.check?.min.toFixed(0)})`,
);
console.log(
  `  ratio check/ps (median)  : ${(timing.check?.median / timing.ps?.median).toFixed(2)}× (target ≤ 1×)`,
);
console.log(`  check's own /proc scan   : ${(r.sections['check-json'] ?? '').replace(/\s+/g, ' ').trim()}`);
