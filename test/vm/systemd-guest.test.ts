// Real systemd as PID 1 (Debian bookworm userland, harness/rootfs.ts) on a two-socket SMT2 guest, one
// boot. What systemd 252 (Debian 252.39-1~deb12u2, kernel 6.1) does to cpusets, as asserted below:
//
// - No unit has AllowedCPUs=/AllowedMemoryNodes=: the root's cgroup.subtree_control is "memory pids".
// - Raw cgroupfs writes (+cpuset on the root and system.slice, cpuset.cpus/mems on kafka.service and on
//   a foreign /hadoop-yarn) take effect, until systemd realizes cgroups again:
//   * daemon-reload turns cpuset off in system.slice's subtree_control at once: kafka.service's cpuset
//     files vanish and its threads run on all CPUs and nodes again;
//   * it also writes -cpuset to the root. That fails with EBUSY while a child (system.slice) still has
//     cpuset in its own subtree_control, so whether the root loses cpuset at the reload or only at the
//     next realization (any unit start) depends on the order systemd handles the two: both seen. Once it
//     goes, /hadoop-yarn's cpuset.cpus/mems go with it (they come back empty if cpuset is re-enabled);
//   * a root +cpuset re-enabled by hand with nothing below it enabling cpuset goes at the next reload.
// - systemctl set-property --runtime kafka.service AllowedCPUs=4-7 AllowedMemoryNodes=1 writes
//   /run/systemd/system.control/kafka.service.d/50-AllowedCPUs.conf and 50-AllowedMemoryNodes.conf,
//   enables cpuset in the root's and system.slice's subtree_control and sets the unit's cpuset. That
//   survives daemon-reload, unit starts and restart kafka.service (new PID, same cgroup path, same
//   cpuset), and keeps the root's cpuset on, so /hadoop-yarn's hand-made fence survives too.
// - A hand-made cpuset.cpus on a unit that has AllowedCPUs= is rewritten to the property at the next
//   daemon-reload.
// - systemctl revert kafka.service + daemon-reload: cpuset off from the root down again.
// - A /hadoop-yarn with +cpuset in its own subtree_control pins the root's cpuset (EBUSY every time):
//   its fence survives reloads even with no unit asking for cpuset; system.slice still loses it.
import { describe, expect, it } from 'vitest';
import { LAYOUTS } from './harness/index.js';
import { parseState, SECTIONS } from './support/guest.js';
import { vmScenario } from './support/scenario.js';
import { KAFKA_UP } from './support/systemd-guest.js';

const SCRIPT = String.raw`
CG=/sys/fs/cgroup
K=$CG/system.slice/kafka.service
Y=$CG/hadoop-yarn
YPID=
${SECTIONS}
${KAFKA_UP}
# key=value of a one-line file, "(absent)" when the file does not exist. Builtins only: under TCG every
# fork costs tens of milliseconds and a state dump runs ~20 times.
kv() {
  local v=''
  if [ -e "$2" ]; then read -r v < "$2" || true; else v='(absent)'; fi
  printf '%s=%s\n' "$1" "$v"
}
state() {
  local kp ys= up _
  read -r kp < $K/cgroup.procs || kp=
  read -r up _ < /proc/uptime
  [ -n "$YPID" ] && ys="/proc/$YPID/task/*/status"
  sec "$1"
  echo "uptime=$up"
  kv root.subtree_control $CG/cgroup.subtree_control
  kv system.slice.subtree_control $CG/system.slice/cgroup.subtree_control
  for f in cpuset.cpus cpuset.mems cpuset.cpus.effective; do kv kafka.$f $K/$f; done
  for f in cgroup.subtree_control cpuset.cpus cpuset.mems cpuset.cpus.effective; do kv yarn.$f $Y/$f; done
  echo "kafka.pid=$kp"
  kv kafka.cgroup /proc/$kp/cgroup
  [ -n "$YPID" ] && kv yarn.cgroup /proc/$YPID/cgroup
  # One line per thread: who pid tid Cpus_allowed_list Mems_allowed_list, straight from /proc.
  awk -v k="$kp" 'FNR==1{ split(FILENAME,a,"/"); who=(a[3]==k)?"kafka":"yarn" }
    /^Cpus_allowed_list/{ c=$2 } /^Mems_allowed_list/{ print "task", who, a[3], a[5], c, $2 }' \
    /proc/$kp/task/*/status $ys
  endsec "$1"
}
# Any unit start makes systemd realize cgroups again (the issue saw root's cpuset go at that point).
poke() { systemd-run -q --wait /bin/true; }
# daemon-reload and restart return when the job is done, but systemd realizes cgroups from a queue it
# works through afterwards. (is-system-running --wait cannot be used: this scenario is a boot job.)
settle() { sleep 1; systemctl show -P Version >/dev/null; }

sec boot
echo "scenario-start-uptime=$(cut -d' ' -f1 /proc/uptime)"
echo "multi-user-usec=$(systemctl show -P ActiveEnterTimestampMonotonic multi-user.target)"
echo "userspace-usec=$(systemctl show -P UserspaceTimestampMonotonic)"
echo "pid1=$(cat /proc/1/comm)"
echo "pid1-exe=$(readlink /proc/1/exe)"
echo "version=$(systemctl --version | head -1)"
echo "kernel=$(uname -r)"
echo "multi-user=$(systemctl is-active multi-user.target)"
echo "failed=$(systemctl list-units --failed --plain --no-legend | awk '{print $1}' | paste -sd' ')"
echo "kafka=$(systemctl is-active kafka.service)"
echo "kafka-cmdline=$(tr '\0' ' ' < /proc/$(systemctl show -P MainPID kafka.service)/cmdline)"
echo "cgroupfs=$(stat -fc %T $CG)"
# node --version answers before V8 boots; isolate topology below is the real start-up check.
echo "node=$(node --version)"
endsec boot
sec topology; ISOLATE_LOG=off isolate topology --json; endsec topology
kafka_up 7
state s0

# 1. Raw cgroupfs writes while no unit asked systemd for cpuset (what isolate's cgroupfs backend does).
echo +cpuset > $CG/cgroup.subtree_control
echo +cpuset > $CG/system.slice/cgroup.subtree_control
echo 4-7 > $K/cpuset.cpus
echo 1 > $K/cpuset.mems
mkdir -p $Y
echo 0-3 > $Y/cpuset.cpus
echo 0 > $Y/cpuset.mems
YPID=$(yarn-container 1)
sleep 0.5
state raw-written
systemctl daemon-reload; settle
state raw-reload
poke; settle
state raw-unitstart
# The root re-enabled by hand while no child cgroup has cpuset in its own subtree_control.
echo +cpuset > $CG/cgroup.subtree_control
echo 0-3 > $Y/cpuset.cpus
echo 0 > $Y/cpuset.mems
state raw-refence
systemctl daemon-reload; settle
state raw-refence-reload

# 2. The same fence through systemd.
systemctl set-property --runtime kafka.service AllowedCPUs=4-7 AllowedMemoryNodes=1
settle
echo 0-3 > $Y/cpuset.cpus
echo 0 > $Y/cpuset.mems
state sp-set
sec dropins; for f in /run/systemd/system.control/kafka.service.d/*; do echo "== $f"; cat "$f"; done; endsec dropins
systemctl daemon-reload; settle
state sp-reload
poke; settle
state sp-unitstart
systemctl restart kafka.service; kafka_up 7; settle
state sp-restart
# A wrong value written by hand under a unit that has AllowedCPUs=.
echo 0-7 > $K/cpuset.cpus
state sp-raw-written
systemctl daemon-reload; settle
state sp-raw-reload

# 3. The properties removed again: nothing asks for cpuset any more.
systemctl revert kafka.service >/dev/null 2>&1
systemctl daemon-reload; settle
state revert-reload
systemctl restart kafka.service; kafka_up 7; settle
state revert-restart

# 4. /hadoop-yarn delegating cpuset to its containers (+cpuset in its own subtree_control).
echo +cpuset > $CG/cgroup.subtree_control
echo 0-3 > $Y/cpuset.cpus
echo 0 > $Y/cpuset.mems
echo +cpuset > $Y/cgroup.subtree_control
state yarn-sub
systemctl daemon-reload; settle
state yarn-sub-reload
poke; settle
state yarn-sub-unitstart
sec end; echo "scenario-end-uptime=$(cut -d' ' -f1 /proc/uptime)"; endsec end
exit 0
`;

describe('systemd as PID 1 on twoSocketSmt2: what systemd does to cpusets it did not set', () => {
  const vm = vmScenario('systemd-guest', {
    systemd: true,
    layout: LAYOUTS.twoSocketSmt2,
    script: SCRIPT,
    standins: { kafkaThreads: 6 },
  });
  const st = (name: string) => parseState(vm.need(name));
  const get = (name: string, key: string) => st(name).kv.get(key);
  const controllers = (name: string, key: string) => (get(name, key) ?? '').split(' ');
  /** Distinct "cpus/mems" of every thread of one process, as /proc/<pid>/task/<tid>/status has them. */
  const affinity = (name: string, who: 'kafka' | 'yarn') => {
    const tasks = st(name).tasks.filter((t) => t.who === who);
    expect(tasks.length, `${name}: threads of ${who}`).toBeGreaterThanOrEqual(who === 'kafka' ? 7 : 4);
    return [...new Set(tasks.map((t) => `${t.cpuList}/${t.mems}`))];
  };

  it('boots Debian with systemd as PID 1 into multi-user.target', () => {
    expect(vm.r.exitStatus, vm.r.console.slice(-4000)).toBe(0);
    const boot = parseState(vm.s('boot')).kv;
    expect(boot.get('pid1')).toBe('systemd');
    expect(boot.get('pid1-exe')).toBe('/usr/lib/systemd/systemd');
    expect(boot.get('multi-user')).toBe('active');
    expect(boot.get('failed')).toBe('');
    expect(boot.get('cgroupfs')).toBe('cgroup2fs');
    expect(boot.get('version')).toBe(vm.r.rootfs.systemdVersion);
    const end = parseState(vm.s('end')).kv;
    console.log(
      `systemd guest: ${boot.get('version')}, kernel ${boot.get('kernel')}; multi-user.target after ` +
        `${Number(boot.get('multi-user-usec')) / 1e6} s of guest uptime (systemd started at ` +
        `${Number(boot.get('userspace-usec')) / 1e6} s); scenario ` +
        `${boot.get('scenario-start-uptime')}-${end.get('scenario-end-uptime')} s; qemu ${vm.r.durationMs} ms; ` +
        `rootfs ${(vm.r.rootfs.bytes / 2 ** 20).toFixed(0)} MiB built in ${vm.r.rootfs.buildSeconds} s`,
    );
    const steps = Object.keys(vm.r.sections)
      .map((name) => [name, parseState(vm.r.sections[name]).kv.get('uptime')] as const)
      .filter(([, up]) => up !== undefined);
    console.log(`guest uptime at each step: ${steps.map(([n, up]) => `${n} ${up}`).join(', ')}`);
  });

  it('runs node and the installed isolate CLI from this userland', () => {
    expect(parseState(vm.s('boot')).kv.get('node')).toBe(process.version);
    const topo = JSON.parse(vm.r.sections.topology ?? '{}') as { nodes: { id: number; cpus: number[] }[] };
    expect(topo.nodes?.map((n) => [n.id, n.cpus])).toEqual([
      [0, [0, 1, 2, 3]],
      [1, [4, 5, 6, 7]],
    ]);
  });

  it('runs kafka.service: a kafka.Kafka command line with 7 threads in /system.slice/kafka.service', () => {
    const boot = parseState(vm.s('boot')).kv;
    expect(boot.get('kafka')).toBe('active');
    expect(boot.get('kafka-cmdline')).toContain('kafka.Kafka');
    expect(get('s0', 'kafka.cgroup')).toBe('0::/system.slice/kafka.service');
    expect(affinity('s0', 'kafka')).toEqual(['0-7/0-1']);
    // Nothing asked systemd for cpuset yet, so it keeps the controller off from the root down.
    expect(controllers('s0', 'root.subtree_control')).not.toContain('cpuset');
    expect(get('s0', 'kafka.cpuset.cpus')).toBe('(absent)');
  });

  it('control: raw cgroupfs writes fence Kafka and YARN until systemd looks again', () => {
    expect(affinity('raw-written', 'kafka')).toEqual(['4-7/1']);
    expect(affinity('raw-written', 'yarn')).toEqual(['0-3/0']);
    expect(get('raw-written', 'yarn.cgroup')).toBe('0::/hadoop-yarn/container_1');
  });

  it('daemon-reload drops a raw cpuset on a unit cgroup: system.slice loses the controller', () => {
    expect(controllers('raw-reload', 'system.slice.subtree_control')).not.toContain('cpuset');
    expect(get('raw-reload', 'kafka.cpuset.cpus')).toBe('(absent)');
    expect(affinity('raw-reload', 'kafka')).toEqual(['0-7/0-1']);
    // The root's cpuset goes at the reload or at the next unit start (systemd asks the kernel to drop it
    // from the root while system.slice may still have it enabled below, which fails with EBUSY, and
    // tries again at its next realization). Either way /hadoop-yarn's fence goes with it.
    const rootKept = controllers('raw-reload', 'root.subtree_control').includes('cpuset');
    console.log(
      `raw cpuset, first daemon-reload: root cpuset ${rootKept ? 'kept until the next unit start' : 'dropped'}`,
    );
    if (rootKept) expect(affinity('raw-reload', 'yarn')).toEqual(['0-3/0']);
    else expect(affinity('raw-reload', 'yarn')).toEqual(['0-7/0-1']);
    expect(controllers('raw-unitstart', 'root.subtree_control')).not.toContain('cpuset');
    expect(get('raw-unitstart', 'yarn.cpuset.cpus')).toBe('(absent)');
    expect(affinity('raw-unitstart', 'yarn')).toEqual(['0-7/0-1']);
  });

  it('daemon-reload drops a hand-enabled root cpuset (and a /hadoop-yarn fence) when no unit needs it', () => {
    expect(affinity('raw-refence', 'yarn')).toEqual(['0-3/0']);
    expect(controllers('raw-refence-reload', 'root.subtree_control')).not.toContain('cpuset');
    expect(get('raw-refence-reload', 'yarn.cpuset.cpus')).toBe('(absent)');
    expect(affinity('raw-refence-reload', 'yarn')).toEqual(['0-7/0-1']);
  });

  it('set-property --runtime AllowedCPUs/AllowedMemoryNodes fences the unit and enables cpuset from the root', () => {
    expect(controllers('sp-set', 'root.subtree_control')).toContain('cpuset');
    expect(controllers('sp-set', 'system.slice.subtree_control')).toContain('cpuset');
    expect(get('sp-set', 'kafka.cpuset.cpus')).toBe('4-7');
    expect(get('sp-set', 'kafka.cpuset.mems')).toBe('1');
    expect(affinity('sp-set', 'kafka')).toEqual(['4-7/1']);
    expect(affinity('sp-set', 'yarn')).toEqual(['0-3/0']);
    const dropins = vm.s('dropins');
    expect(dropins).toContain('== /run/systemd/system.control/kafka.service.d/50-AllowedCPUs.conf');
    expect(dropins).toContain('AllowedCPUs=4-7');
    expect(dropins).toContain('== /run/systemd/system.control/kafka.service.d/50-AllowedMemoryNodes.conf');
    expect(dropins).toContain('AllowedMemoryNodes=1');
  });

  it('that fence, and the root cpuset /hadoop-yarn relies on, survive daemon-reload and a unit start', () => {
    for (const name of ['sp-reload', 'sp-unitstart']) {
      expect(controllers(name, 'root.subtree_control'), name).toContain('cpuset');
      expect(controllers(name, 'system.slice.subtree_control'), name).toContain('cpuset');
      expect(get(name, 'kafka.cpuset.cpus'), name).toBe('4-7');
      expect(affinity(name, 'kafka'), name).toEqual(['4-7/1']);
      expect(get(name, 'yarn.cpuset.cpus'), name).toBe('0-3');
      expect(affinity(name, 'yarn'), name).toEqual(['0-3/0']);
    }
  });

  it('and survives systemctl restart kafka.service: a new process in a fresh cgroup, same cpuset', () => {
    expect(get('sp-restart', 'kafka.pid')).not.toBe(get('sp-unitstart', 'kafka.pid'));
    expect(get('sp-restart', 'kafka.cgroup')).toBe('0::/system.slice/kafka.service');
    expect(get('sp-restart', 'kafka.cpuset.cpus')).toBe('4-7');
    expect(get('sp-restart', 'kafka.cpuset.mems')).toBe('1');
    expect(affinity('sp-restart', 'kafka')).toEqual(['4-7/1']);
  });

  it('daemon-reload rewrites a hand-made cpuset.cpus on a unit with AllowedCPUs= back to the property', () => {
    expect(affinity('sp-raw-written', 'kafka')).toEqual(['0-7/1']);
    expect(get('sp-raw-reload', 'kafka.cpuset.cpus')).toBe('4-7');
    expect(affinity('sp-raw-reload', 'kafka')).toEqual(['4-7/1']);
  });

  it('once the properties are reverted, daemon-reload drops cpuset from the root again', () => {
    for (const name of ['revert-reload', 'revert-restart']) {
      expect(controllers(name, 'root.subtree_control'), name).not.toContain('cpuset');
      expect(get(name, 'kafka.cpuset.cpus'), name).toBe('(absent)');
      expect(affinity(name, 'kafka'), name).toEqual(['0-7/0-1']);
      expect(affinity(name, 'yarn'), name).toEqual(['0-7/0-1']);
    }
  });

  it('a /hadoop-yarn with cpuset in its own subtree_control pins the root cpuset: systemd cannot drop it', () => {
    // The kernel refuses to disable a controller in a parent while a child enables it for its own
    // children (EBUSY), so systemd's attempt fails on every realization and the fence stays.
    expect(affinity('yarn-sub', 'yarn')).toEqual(['0-3/0']);
    expect(controllers('yarn-sub', 'yarn.cgroup.subtree_control')).toContain('cpuset');
    for (const name of ['yarn-sub-reload', 'yarn-sub-unitstart']) {
      expect(controllers(name, 'root.subtree_control'), name).toContain('cpuset');
      expect(get(name, 'yarn.cpuset.cpus'), name).toBe('0-3');
      expect(affinity(name, 'yarn'), name).toEqual(['0-3/0']);
      // system.slice is not pinned: nothing below it asks for cpuset.
      expect(controllers(name, 'system.slice.subtree_control'), name).not.toContain('cpuset');
    }
  });
});
