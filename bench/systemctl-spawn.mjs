// What asking systemd through `systemctl` costs an agent that does it every round: the agent's own CPU
// for one execa spawn (fork, exec, pipes, the child's output read) and the child's, at the agent's
// 1 s pace (each spawn after a 1 s sleep, as a round comes: caches cold). `systemctl --version` needs
// no running systemd, so this runs anywhere; `systemctl show` of a dozen units costs the child more,
// and systemd (PID 1) its own work to answer, which this does not count.
//   node bench/systemctl-spawn.mjs [spawns]   (after npm ci; under the runtime the executable ships,
//   .cache/node-runtime/<version>/node, for the agent's numbers)
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';

const n = Number(process.argv[2] ?? 20);
const spawnOnce = () =>
  execa('systemctl', ['--version'], { reject: false, stdin: 'ignore', timeout: 10_000 });
/** CPU of the waited-for children so far (cutime + cstime), in ms. */
const childrenMs = () => {
  const f = readFileSync('/proc/self/stat', 'utf8');
  const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
  const hz = 100; // USER_HZ on Linux
  return ((Number(rest[13]) + Number(rest[14])) * 1000) / hz;
};

await spawnOnce(); // execa and the child_process path loaded, as in an agent after its first round
const measure = async (spawn) => {
  const c0 = process.cpuUsage();
  const k0 = childrenMs();
  for (let i = 0; i < n; i++) {
    if (spawn) await spawnOnce();
    await sleep(1000);
  }
  const c = process.cpuUsage(c0);
  return { own: (c.user + c.system) / 1000 / n, children: (childrenMs() - k0) / n };
};
// The same loop without the spawn: what waking once a second costs by itself.
const idle = await measure(false);
const spawning = await measure(true);
console.log(`${n} rounds at 1 s, ${process.version}`);
console.log(
  `own CPU a round: ${spawning.own.toFixed(2)} ms with a systemctl spawn, ${idle.own.toFixed(2)} ms without`,
);
console.log(
  `the spawn alone: ${(spawning.own - idle.own).toFixed(2)} ms of the agent's CPU, ${spawning.children.toFixed(1)} ms of systemctl's (10 ms ticks)`,
);
