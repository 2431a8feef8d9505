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
}

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
