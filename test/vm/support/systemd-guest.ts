// Stand-ins for the systemd guest (harness/systemd.ts): a kafka.service whose process looks like a
// broker to isolate's matchers, and YARN-like containers in /hadoop-yarn that systemd does not own.
import { standinBinary } from './guest.js';

export const KAFKA_UNIT = 'kafka.service';

export interface SystemdStandinOptions {
  /** Start kafka.service at boot (enabled in multi-user.target); otherwise the scenario starts it. Default true. */
  kafkaAtBoot?: boolean;
  /** Threads of the Kafka stand-in. Default 6. */
  kafkaThreads?: number;
  /**
   * Kafka's threads spin (default) or sleep. Sleeping threads leave TCG's host CPU to a scenario that
   * needs it (ansible-playbook in the guest); their affinity is asserted all the same.
   */
  kafkaBusy?: boolean;
  /**
   * Also a YARN NodeManager laid out as systemd recommends (docs/systemd.md): `NODEMANAGER_UNIT`
   * with `Delegate=yes`, started at boot; the manager moves itself into the leaf `nodemanager/`,
   * enables cpuset/cpu/memory for its subtree (as YARN's cgroups v2 handler does) and runs two busy
   * containers in `<unit cgroup>/hadoop-yarn/container_{1,2}`.
   */
  nodeManager?: boolean;
}

export const NODEMANAGER_UNIT = 'hadoop-yarn-nodemanager.service';

/**
 * Shell function for a systemd scenario: `kafka_up N` waits (up to 30 s) until kafka.service's main
 * process runs N threads. `systemctl start/restart` returns once the process is exec'd; under TCG,
 * with busy stand-ins on every CPU, its threads can come more than a second later, and a scenario
 * that samples them at once sees the main thread alone. Prints `kafka-up-timeout` if they never come.
 */
export const KAFKA_UP = `kafka_up() {
  local i=0 p n t
  while [ $i -lt 300 ]; do
    p=$(systemctl show -P MainPID kafka.service); n=0
    if [ "$p" != 0 ]; then for t in /proc/$p/task/*; do [ -e "$t" ] && n=$((n+1)); done; fi
    [ $n -ge $1 ] && return 0
    i=$((i+1)); sleep 0.1
  done
  echo kafka-up-timeout
}`;

/**
 * Files and symlinks for runInSystemdVm. The Kafka stand-in's command line is
 * `/usr/local/bin/standin kafka.Kafka N busy`, so `kafka.Kafka` matches as in a real broker's java
 * command line. `yarn-container N [THREADS]` starts a busy process in `/hadoop-yarn/container_N`
 * (created as YARN's LinuxContainerExecutor does: plain cgroupfs, outside any unit) and prints its PID;
 * `yarn-container N THREADS sleep` starts one whose threads sleep.
 */
export function systemdStandins(opts: SystemdStandinOptions = {}): {
  files: Record<string, string | Buffer>;
  symlinks: Record<string, string>;
} {
  const units = '/etc/systemd/system';
  const files: Record<string, string | Buffer> = {
    '/usr/local/bin/standin': standinBinary(),
    [`${units}/${KAFKA_UNIT}`]: `[Unit]
Description=Kafka broker stand-in

[Service]
ExecStart=/usr/local/bin/standin kafka.Kafka ${opts.kafkaThreads ?? 6} ${(opts.kafkaBusy ?? true) ? 'busy' : 'sleep'}

[Install]
WantedBy=multi-user.target
`,
    '/usr/local/bin/yarn-container': YARN_CONTAINER,
  };
  const symlinks: Record<string, string> =
    (opts.kafkaAtBoot ?? true)
      ? { [`${units}/multi-user.target.wants/${KAFKA_UNIT}`]: `${units}/${KAFKA_UNIT}` }
      : {};
  if (opts.nodeManager) {
    files[`${units}/${NODEMANAGER_UNIT}`] = `[Unit]
Description=YARN NodeManager stand-in (Delegate=yes: the container hierarchy lives below the unit)

[Service]
Delegate=yes
ExecStart=/usr/local/bin/nodemanager

[Install]
WantedBy=multi-user.target
`;
    files['/usr/local/bin/nodemanager'] = NODEMANAGER;
    symlinks[`${units}/multi-user.target.wants/${NODEMANAGER_UNIT}`] = `${units}/${NODEMANAGER_UNIT}`;
  }
  return { files, symlinks };
}

// The subshell joins the container cgroup before exec, so every thread of the stand-in is born there.
const YARN_CONTAINER = `#!/bin/bash
set -e
n=$1
threads=\${2:-3}
mode=\${3:-busy}
cg=/sys/fs/cgroup/hadoop-yarn/container_$n
mkdir -p "$cg"
(
  echo "$BASHPID" > "$cg/cgroup.procs"
  exec /usr/local/bin/standin "yarn.container_$n" "$threads" "$mode" </dev/null >/dev/null 2>&1
) &
echo $!
`;

// No internal processes: a cgroup that enables controllers for its children holds none itself, so the
// manager leaves the unit's own cgroup first (systemd >= 254 does this with DelegateSubgroup=).
const NODEMANAGER = `#!/bin/bash
U=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
mkdir -p "$U/nodemanager" "$U/hadoop-yarn"
echo $$ > "$U/nodemanager/cgroup.procs"
for c in cpuset cpu memory; do
  echo "+$c" > "$U/cgroup.subtree_control"
  echo "+$c" > "$U/hadoop-yarn/cgroup.subtree_control"
done
for n in 1 2; do
  mkdir -p "$U/hadoop-yarn/container_$n"
  (
    echo "$BASHPID" > "$U/hadoop-yarn/container_$n/cgroup.procs"
    exec /usr/local/bin/standin "yarn.nm_container_$n" 2 busy </dev/null >/dev/null 2>&1
  ) &
done
exec /usr/local/bin/standin nodemanager 1 sleep </dev/null
`;
