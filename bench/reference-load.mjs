// A fixed amount of work shaped like an idle agent's second, run beside the agent by
// bench/agent-idle.mjs (AGENT_REFERENCE, on by default): a small load that no change to isolate can
// make slower, measured in the same window. What it shows and what it does not (2026-12-04, five
// 300-600 s runs on the 2-core VMs): it follows the machine's short bumps in part (a minute where the
// agent went 0.31 -> 0.58 % of a core, it went 0.17 -> 0.25 %), but not the slow rise that the
// agent showed through four of them (0.31-0.37 % in the first minute, 0.44-0.56 % in the last) while
// it stayed at 0.16-0.27 %. That rise is not the agent's age: the same build started 4 minutes
// earlier, side by side (AGENT_COMPARE with AGENT_COMPARE_DELAY_S), measured 0.29-0.37 % against
// 0.31-0.39 % for its younger twin. So the machine slows the agent's kind of work (a large heap and
// code footprint, woken cold twice a second) more than this loop's; the control for a change of
// isolate stays the build before it side by side, places swapped.
//
//   node bench/reference-load.mjs CGROUP_DIR PID...
//
// Every second, as a round does: read every file of CGROUP_DIR and of its child directories through
// descriptors kept open (the agent keeps its cgroup files open), open, read and close the command
// lines of 17 of the given processes (the agent's spread re-reads), turn what was read into an object
// and its JSON text; half a second later, read /proc/loadavg (the agent's probe).
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';

const [dir, ...pids] = process.argv.slice(2);
if (!dir || pids.length === 0) throw new Error('usage: reference-load.mjs CGROUP_DIR PID...');
const buf = Buffer.alloc(65536);
const kept = [];
for (const d of [
  dir,
  ...readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => join(dir, e.name)),
]) {
  for (const e of readdirSync(d, { withFileTypes: true })) {
    if (e.isFile()) kept.push({ name: join(d, e.name), fd: openSync(join(d, e.name), 'r') });
  }
}
const loadavg = openSync('/proc/loadavg', 'r');
const PER_ROUND = 17;
let turn = 0;
let last = '';

function round() {
  const read = {};
  for (const f of kept) read[f.name] = buf.toString('latin1', 0, readSync(f.fd, buf, 0, buf.length, 0));
  for (let k = 0; k < PER_ROUND; k++) {
    const pid = pids[(turn * PER_ROUND + k) % pids.length];
    try {
      const fd = openSync(`/proc/${pid}/cmdline`, 'r');
      try {
        read[pid] = buf.toString('latin1', 0, readSync(fd, buf, 0, buf.length, 0));
      } finally {
        closeSync(fd);
      }
    } catch {}
  }
  turn++;
  last = JSON.stringify(read);
}

function probe() {
  readSync(loadavg, buf, 0, 256, 0);
}

setInterval(round, 1000);
setTimeout(() => setInterval(probe, 1000), 500);
process.on('SIGTERM', () => process.exit(last ? 0 : 1));
