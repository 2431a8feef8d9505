// How fast the agent notices and corrects, on a real kernel (the busybox qemu guest):
//   drift      a wrong cpuset.cpus written by hand into /hadoop-yarn → the agent's value is back;
//   placement  a new process matching Kafka's workload starts in the root cgroup → it is in Kafka's
//              cgroup (the kernel then keeps its threads on Kafka's cores).
// Each trial starts at a random point of the agent's interval, so the numbers include the wait for
// the next round. Targets (issue 10): drift p99 ≤ 2 intervals, placement p99 ≤ 1 interval.
//   node bench/agent-latency.mjs [trials=30] [interval=1s]
// Under TCG (no KVM here) every round is several times slower than on hardware; the report says so.
import { loadVmKit, runTimed } from './check-vm-kit.mjs';

const trials = Number(process.argv[2] ?? 30);
const interval = process.argv[3] ?? '1s';
const POLICY = `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
strict: false
workloads:
  - { name: kafka, class: exclusive, cores: 1, match: { process: { cmdline: 'kafka\\.Kafka' } } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
`;

// Runs in the guest next to the agent; prints one JSON line of latencies in ms.
const PROBE = `
import { readFileSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
const CG = '/sys/fs/cgroup';
const trials = Number(process.argv[2]);
const intervalMs = Number(process.argv[3]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const read = (f) => { try { return readFileSync(f, 'utf8').trim(); } catch { return ''; } };
async function until(cond, limitMs) {
  const t0 = performance.now();
  while (!cond()) { if (performance.now() - t0 > limitMs) return null; await sleep(5); }
  return performance.now() - t0;
}
const out = { drift: [], placement: [], timedOut: 0 };
const yarn = read(CG + '/hadoop-yarn/cpuset.cpus');
for (let i = 0; i < trials; i++) {
  await sleep(Math.random() * intervalMs);
  writeFileSync(CG + '/hadoop-yarn/cpuset.cpus', '0-7');
  const t = await until(() => read(CG + '/hadoop-yarn/cpuset.cpus') === yarn, 20 * intervalMs);
  if (t === null) out.timedOut++; else out.drift.push(t);
}
for (let i = 0; i < trials; i++) {
  await sleep(Math.random() * intervalMs);
  const p = spawn('/usr/local/bin/standin', ['kafka.Kafka', '2', 'sleep'], { stdio: 'ignore' });
  const t = await until(() => read('/proc/' + p.pid + '/cgroup') === '0::/isolate-kafka', 20 * intervalMs);
  if (t === null) out.timedOut++; else out.placement.push(t);
  p.kill('SIGKILL');
  await sleep(50);
}
console.log(JSON.stringify(out));
`;

const ms = (d) => {
  const m = /^(\d+(?:\.\d+)?)(ms|s)$/.exec(d);
  if (!m) throw new Error(`interval ${d}: write it like 1s or 500ms`);
  return Number(m[1]) * (m[2] === 's' ? 1000 : 1);
};
const intervalMs = ms(interval);
const kit = await loadVmKit();
const script = `
. /harness/lib.sh
ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
fake_host
standin kafka.Kafka 4 sleep &
sh -c "echo \\$\\$ > $CG/hadoop-yarn/container_01/cgroup.procs; exec standin yarn.c1 2 sleep" &
ISOLATE_LOG=off isolate agent --policy /etc/isolate/policy.yaml --interval ${interval} --check-interval 1h --metrics-address 127.0.0.1:9464 &
i=0; while [ $i -lt 600 ] && [ "$(cat $CG/isolate-kafka/cpuset.cpus.partition 2>/dev/null)" != root ]; do i=$((i+1)); sleep 0.1; done
sleep 2
sec timing; node /bench/latency.mjs ${trials} ${intervalMs}; endsec timing
sec rounds; wget -q -O - http://127.0.0.1:9464/metrics | grep '^isolate_reconcile_duration_seconds_[sc]'; endsec rounds
`;
const r = await runTimed(kit, script, { '/etc/isolate/policy.yaml': POLICY, '/bench/latency.mjs': PROBE });
const res = JSON.parse(r.sections.timing.trim().split('\n').pop());
const metric = (name) =>
  Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(r.sections.rounds ?? '')?.[1]);
const roundMs =
  (1000 * metric('isolate_reconcile_duration_seconds_sum')) /
  metric('isolate_reconcile_duration_seconds_count');
const pct = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)];
};
const line = (name, xs, target) => {
  if (xs.length === 0) return `  ${name.padEnd(10)} no trial was corrected`;
  const p50 = pct(xs, 0.5);
  const p99 = pct(xs, 0.99);
  return `  ${name.padEnd(10)} n=${xs.length}  p50 ${p50.toFixed(0)} ms  p99 ${p99.toFixed(0)} ms (${(p99 / intervalMs).toFixed(2)} intervals; target ≤ ${target})  max ${Math.max(...xs).toFixed(0)} ms`;
};
console.log(`agent at --interval ${interval} in a qemu guest (${kit.layoutName}; TCG unless KVM is usable)`);
console.log(`  one agent round took ${roundMs.toFixed(0)} ms on average in the guest`);
console.log(line('drift', res.drift, 2));
console.log(line('placement', res.placement, 1));
if (res.timedOut > 0) console.log(`  ${res.timedOut} trial(s) not corrected within 20 intervals`);
