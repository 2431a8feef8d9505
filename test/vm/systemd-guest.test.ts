// Real systemd as PID 1 (Debian bookworm userland, harness/rootfs.ts) on a two-socket SMT2 guest.
// EXPLORATORY VERSION: prints the state after every step.
import { beforeAll, describe, expect, it } from 'vitest';
import { LAYOUTS, runInSystemdVm, type SystemdVmResult } from './harness/index.js';
import { keepConsole } from './support/guest.js';
import { systemdStandins } from './support/systemd-guest.js';

const SCRIPT = String.raw`
CG=/sys/fs/cgroup
K=$CG/system.slice/kafka.service
Y=$CG/hadoop-yarn
sec() { echo "=====BEGIN $1====="; }
endsec() { echo; echo "=====END $1====="; }
val() { if [ -e "$1" ]; then tr '\n' ' ' < "$1" | sed 's/ *$//'; else echo '(absent)'; fi; }
kpid() { systemctl show -P MainPID kafka.service; }
tcpus() { [ -n "$1" ] && awk '/^Cpus_allowed_list/{print $2}' /proc/$1/task/*/status | sort -u | paste -sd' '; }
tmems() { [ -n "$1" ] && awk '/^Mems_allowed_list/{print $2}' /proc/$1/task/*/status | sort -u | paste -sd' '; }
state() {
  sec "$1"
  echo "root.subtree_control=$(val $CG/cgroup.subtree_control)"
  echo "system.slice.subtree_control=$(val $CG/system.slice/cgroup.subtree_control)"
  echo "system.slice.cpuset.cpus=$(val $CG/system.slice/cpuset.cpus)"
  for f in cpuset.cpus cpuset.mems cpuset.cpus.effective memory.low; do echo "kafka.$f=$(val $K/$f)"; done
  p=$(kpid)
  echo "kafka.pid=$p"
  echo "kafka.cgroup=$(sed -n 's/^0:://p' /proc/$p/cgroup)"
  echo "kafka.threads=$(ls /proc/$p/task | wc -l)"
  echo "kafka.threads.cpus=$(tcpus $p)"
  echo "kafka.threads.mems=$(tmems $p)"
  echo "yarn.subtree_control=$(val $Y/cgroup.subtree_control)"
  for f in cpuset.cpus cpuset.mems cpuset.cpus.effective; do echo "yarn.$f=$(val $Y/$f)"; done
  echo "yarn.threads.cpus=$(tcpus $YPID)"
  echo "yarn.cgroup=$( [ -n "$YPID" ] && sed -n 's/^0:://p' /proc/$YPID/cgroup)"
  echo "dropins=$(ls /run/systemd/system.control/kafka.service.d 2>/dev/null | paste -sd' ')"
  endsec "$1"
}
poke() { systemd-run -q --wait /bin/true; }

sec boot
echo "uptime=$(cut -d' ' -f1 /proc/uptime)"
echo "pid1=$(cat /proc/1/comm)"
echo "version=$(systemctl --version | head -1)"
echo "kernel=$(uname -r)"
echo "multi-user=$(systemctl is-active multi-user.target)"
echo "system-running=$(systemctl is-system-running)"
echo "failed=$(systemctl list-units --failed --plain --no-legend | awk '{print $1}' | paste -sd' ')"
echo "kafka=$(systemctl is-active kafka.service)"
echo "cgroupfs=$(stat -fc %T $CG)"
echo "cmdline=$(cat /proc/$(kpid)/cmdline | tr '\0' ' ')"
endsec boot
sec analyze; systemd-analyze time; endsec analyze
YPID=
state s0

# --- 1. raw cgroupfs writes, no unit asked systemd for cpuset
echo +cpuset > $CG/cgroup.subtree_control
echo +cpuset > $CG/system.slice/cgroup.subtree_control
echo 4-7 > $K/cpuset.cpus
echo 1 > $K/cpuset.mems
mkdir -p $Y
echo 0-3 > $Y/cpuset.cpus
echo 0 > $Y/cpuset.mems
YPID=$(yarn-container 1)
sleep 1
state raw-written
systemctl daemon-reload
sleep 1
state raw-reload
poke
sleep 1
state raw-unitstart
echo +cpuset > $CG/cgroup.subtree_control; echo "rc=$?"
echo 0-3 > $Y/cpuset.cpus
state raw-refence
systemctl daemon-reload
sleep 1
state raw-refence-reload
poke
sleep 1
state raw-refence-unitstart

# --- 2. through systemd
systemctl set-property --runtime kafka.service AllowedCPUs=4-7 AllowedMemoryNodes=1
sleep 1
echo 0-3 > $Y/cpuset.cpus
echo 0 > $Y/cpuset.mems
sleep 1
state sp-set
sec dropin; cat /run/systemd/system.control/kafka.service.d/*; endsec dropin
systemctl daemon-reload
sleep 1
state sp-reload
poke
sleep 1
state sp-unitstart
systemctl restart kafka.service
sleep 1
state sp-restart
echo 0-7 > $K/cpuset.cpus
sleep 1
state sp-raw-written
systemctl daemon-reload
sleep 1
state sp-raw-reload
poke
sleep 1
state sp-raw-unitstart

# --- 3. the property removed again
systemctl revert kafka.service
systemctl daemon-reload
sleep 1
state revert-reload
poke
sleep 1
state revert-unitstart
systemctl restart kafka.service
sleep 1
state revert-restart
exit 0
`;

describe('systemd as PID 1 (exploratory)', () => {
  let r: SystemdVmResult;
  beforeAll(async () => {
    const standins = systemdStandins();
    r = await runInSystemdVm({
      layout: LAYOUTS.twoSocketSmt2,
      script: SCRIPT,
      files: standins.files,
      symlinks: standins.symlinks,
    });
    keepConsole('systemd-guest', r.console);
  });

  it('runs', () => {
    console.log(r.console);
    console.log(JSON.stringify(r.rootfs), r.durationMs);
    expect(r.exitStatus).toBe(0);
  });
});
