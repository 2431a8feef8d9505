// What one wake-up of an idle process costs on this machine: the CPU time of a main thread that does
// nothing but wait for a 1 s timer, read from /proc/PID/schedstat over a window. The agent wakes twice
// a second (its round, and the probe half an interval later), so on a machine where a wake-up is dear
// this is a floor under bench/agent-idle.mjs's result that no change to the agent's work can lower.
// On the 2-core VMs of 2026-12-04 (PVM: the guest's page tables are shadowed by the host) a Node.js
// wake-up took 0.43-1.4 ms of CPU, Python's 0.16-0.21 ms; Node's varied that much within the hour (six
// 40 s runs: ~0.9-1.4 ms from 03:27 to 03:33 UTC, 0.43-0.48 ms from 04:04 to 04:07; 0.37 ms beside the
// agent in bench/agent-idle.mjs from 03:59 to 04:04). perf record -e cpu-clock of a dear one: no symbol above
// 5 %, the time spread over the whole timer path of Node and V8. --use-largepages=on (Node's text
// remapped to 2 MB pages): 0.63-0.70 ms in the dear phase, 0.70-0.77 ms in the cheap one (worse),
// and 14-23 MB more resident: not a remedy.
// What moves it: this VM's DAMON monitor (bench/damon.mjs). Side by side on 2026-12-04, Node's wake-up
// cost 0.70 ms with the monitor on and 0.21 ms paused (Python 0.31 against 0.09).
//   node bench/wake-cost.mjs [seconds]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EXEC_ARGV, RUNTIME } from '../scripts/bundle-common.mjs';

const seconds = Number(process.argv[2] ?? 40);
const node = join(import.meta.dirname, '../.cache/node-runtime', RUNTIME.version, 'node');
const timer = ['-e', 'setInterval(() => {}, 1000)'];
const subjects = [
  ['python3, time.sleep(1) in a loop', 'python3', ['-c', 'import time\nwhile True: time.sleep(1)']],
  [`node ${RUNTIME.version}, an empty 1 s interval`, node, [...EXEC_ARGV, ...timer]],
  ['the same, --use-largepages=on', node, [...EXEC_ARGV, '--use-largepages=on', ...timer]],
];

const runNs = (pid) => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
const rssMiB = (pid) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

const children = subjects.map(([, cmd, args]) => spawn(cmd, args, { stdio: 'ignore' }));
try {
  await sleep(5000);
  const before = children.map((c) => runNs(c.pid));
  await sleep(seconds * 1000);
  children.forEach((c, i) => {
    const perWake = (runNs(c.pid) - before[i]) / seconds / 1e6;
    console.log(
      `${subjects[i][0].padEnd(44)} ${perWake.toFixed(2).padStart(6)} ms of CPU a wake-up (main thread), ${rssMiB(c.pid).toFixed(1)} MB resident`,
    );
  });
  console.log(`over ${seconds} s, side by side; the agent wakes twice a second at a 1 s interval`);
} finally {
  for (const c of children) c.kill();
}
