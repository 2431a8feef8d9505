// Quiet cores on a real kernel (issue 50): real systemd 252, irqbalance installed and running, two
// NICs with real traffic, three Kafka disks, one boot of twoSocketSmt2 (node0 = CPUs 0-3, node1 = 4-7).
//
// The NICs:
// - eth0, virtio-net with 4 queue pairs (`mq=on,vectors=10`: 4 rx + 4 tx + config + control) behind a
//   pxb expander on node 1: Kafka's NIC (`near: [nic:eth0]`), so Kafka gets node 1 and its queues go
//   to node 1's housekeeping CPUs 4-5.
// - eth1, vmxnet3: the emulated NIC the batch side's traffic arrives on. Debian's cloud kernel (the
//   harness's) has no e1000/e1000e driver; vmxnet3 is the emulated NIC it has, a driver of its own
//   to unbind and bind again. It is not single-queue: its driver asks for one rx/tx queue pair per CPU
//   (8, each with an MSI-X vector `eth1-rxtx-N`), and the ICMP flow uses one of them.
// Multiqueue needs a backend with queues: only tap has them (the user-mode backend has one queue).
// qemu therefore runs in a network namespace of its own (`hostNetns`, `unshare --net`), where the two
// taps are made and given link-local addresses (169.254.50.1 for eth0, 169.254.51.1 for eth1): the
// host's own network never sees a device or a packet. The traffic is ICMP echo from the guest to
// those addresses, answered by the namespace's kernel, so no host process is needed and nothing
// outlives qemu: the batch side pings over eth1 from a YARN container's cgroup at ~200 packets/s for
// the whole window, and a light ping over eth0 keeps Kafka's queues interrupting too.
//
// A. isolate alone, irqbalance running (Debian's irqbalance.service, enabled at boot):
//   1. irqbalance has spread the IRQs at boot; every mask is recorded.
//   2. `plan --json` then `apply --plan` of that very plan: every device IRQ's affinity is the plan's
//      (Kafka's NIC exactly, the rest inside it, irqbalance narrowing them), each one that fired is
//      delivered inside it (`/proc/irq/N/effective_affinity_list`), none on Kafka's exclusive CPUs;
//      irqbalance runs with isolate's ban (its drop-in) and was restarted once.
//   3. A traffic window of WINDOW_S seconds (the issue says 60 s; 30 s keeps the file near its CI
//      budget of ~3 minutes under TCG): no device row of /proc/interrupts counts anything on Kafka's
//      CPUs, but the one interrupt a pending move delivers on its old CPU (see below); NET_RX there is
//      reported.
//   4. irqbalance restarted: 24 samples over 12 s (its start and a 10 s rebalance) all quiet.
//   5. irqbalance stopped (so that rollback's try-restart leaves it stopped and nothing else moves an
//      IRQ), rollback: every setting isolate wrote is byte-identical to step 1, the drop-in gone.
// B. The agent (every AGENT_INTERVAL_S s): its first round applies the IRQs and the disks' io
//    settings; two io drifts by hand, each corrected by the agent (its journal names the drifted value
//    it replaced): the batch's caps on one disk rewritten in /hadoop-yarn/io.max, and Kafka's weight on
//    another set through systemd (`systemctl set-property --runtime kafka.service IODeviceWeight=`).
//    Then `ip link set down/up` of both NICs, a stray write of an eth0 queue onto Kafka's CPUs,
//    unbind/bind of the vmxnet3 driver (its MSI-X vectors freed and allocated anew: IRQs renumbered), a
//    stray write on one of the new vectors: each quiet again. Each is polled with a deadline that only
//    catches "never". Then one rollback, exit 0: every mask as before B, but for the vectors the rebind
//    made anew; every io file (cgroup.subtree_control, io.weight, io.bfq.weight, io.max) of every
//    cgroup there before isolate's first apply (A's) and still there, and every io property of
//    kafka.service, system.slice and -.slice, as before that apply, or named by a note of the rollback.
//    A second rollback has nothing to do.
//
// Kafka's disks (issue 60): three virtio-blk disks (sparse files in a temporary directory of this
// host, serials data1-3, one queue on legacy INTx each), ext4 at /data1-3 with Kafka's log dirs, BFQ.
// The policy names them (`disks:`), gives Kafka weight 1000 there (IODeviceWeight= through systemd,
// no latency target: the cloud kernel has no io.latency) and the batch's /hadoop-yarn weight 25 and
// io.max caps (wbps, wiops) on each, written by isolate into cgroupfs. A's plan must plan all three on
// every disk, and A's apply and rollback carry them too.
//
// x86 without interrupt remapping (this guest, most VMs) moves an IRQ only when it next fires: an
// idle queue's effective_affinity_list keeps its old CPU after apply, and its first interrupt lands
// there once (src/irq/executor.ts). The test lists those instead of judging them.
import { closeSync, ftruncateSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { CpuSet } from '../../src/model/cpuset.js';
import { LAYOUTS } from './harness/index.js';
import { parseShow } from '../../src/systemd/systemctl.js';
import { IO_PROPS } from './support/disks.js';
import { LIB, snapDiff, snapLines } from './support/guest.js';
import { QUIET_CORES_ROOTFS_PACKAGES } from './support/rootfs-variants.js';
import { vmScenario } from './support/scenario.js';

/** The traffic window, seconds. */
const WINDOW_S = 30;
/**
 * Interrupts an IRQ whose move is pending may still deliver on its old CPU: the first one moves it
 * (measured: 1, and 2 for an eth1 queue irqbalance moved again right after isolate; the second was
 * likely already raised on the old vector).
 */
const PENDING_MOVE_MAX = 3;
/** The agent's round. */
const AGENT_INTERVAL_S = 2;
/** Kafka's disks: virtio-blk, serials data1..3, ext4 at /data1..3 with Kafka's log dirs, BFQ. */
const DISKS = ['data1', 'data2', 'data3'];
const DISK_BYTES = 32 * 1024 * 1024;
const KAFKA_WEIGHT = 1000;
const BATCH_WEIGHT = 25;
const CAP_WIOPS = 300;
/** The weight the drift writes for Kafka on one disk by hand (set-property), and the cap on another. */
const DRIFT_WEIGHT = 100;
const DRIFT_CAP = 'wbps=max wiops=1000';
/** The unit properties compared before isolate and after the rollback. */
const SHOWN_IO = ['Id', ...IO_PROPS];
const IO_UNITS = ['kafka.service', 'system.slice', '-.slice'];

const POLICY = stringify({
  apiVersion: 'isolate/v1',
  kind: 'HostPolicy',
  reserved: { cores: 1 },
  quiet: { irqs: true, workqueues: true },
  workloads: [
    {
      name: 'kafka',
      class: 'exclusive',
      cores: 1,
      near: ['nic:eth0'],
      match: { systemdUnit: 'kafka.service' },
      disks: { paths: DISKS.map((d) => `/${d}/kafka-logs`) },
      // The cloud kernel has no io.latency: auto would plan none anyway; off says so.
      io: { latency: 'off', weight: KAFKA_WEIGHT },
    },
    {
      name: 'flink',
      class: 'batch',
      match: { cgroup: '/hadoop-yarn' },
      io: { weight: BATCH_WEIGHT, max: { wbps: '50MB/s', wiops: CAP_WIOPS } },
    },
  ],
});

// Made in qemu's namespace before qemu starts; `multi_queue` lets qemu open the tap once per queue.
const HOST_NETNS = [
  'ip link set lo up',
  'ip tuntap add dev qtap0 mode tap multi_queue',
  'ip tuntap add dev qtap1 mode tap',
  'ip addr add 169.254.50.1/24 dev qtap0',
  'ip addr add 169.254.51.1/24 dev qtap1',
  'ip link set qtap0 up',
  'ip link set qtap1 up',
].join('\n');

const QEMU_NICS = [
  '-device',
  'pxb,id=pxb1,bus_nr=4,numa_node=1,bus=pci.0',
  '-netdev',
  'tap,id=n0,ifname=qtap0,script=no,downscript=no,vhost=off,queues=4',
  '-device',
  'virtio-net-pci,netdev=n0,mq=on,vectors=10,bus=pxb1,addr=0x4,mac=52:54:00:50:00:02',
  '-netdev',
  'tap,id=n1,ifname=qtap1,script=no,downscript=no,vhost=off',
  '-device',
  'vmxnet3,netdev=n1,bus=pci.0,mac=52:54:00:51:00:02',
];

const SCRIPT = `
${LIB}
# Every setting quiet cores may write, and the kernel's default for new IRQs: raw bytes, one per line.
masks() {
  local d f
  for d in /proc/irq/[0-9]*; do echo "$d/smp_affinity=$(cat $d/smp_affinity)"; echo "$d/smp_affinity_list=$(cat $d/smp_affinity_list)"; done
  echo "/proc/irq/default_smp_affinity=$(cat /proc/irq/default_smp_affinity)"
  for f in /sys/class/net/*/queues/*/rps_cpus /sys/class/net/*/queues/*/xps_cpus; do echo "$f=$(cat $f 2>&1 | sed 's/^cat: .*: //')"; done
  echo "/sys/devices/virtual/workqueue/cpumask=$(cat /sys/devices/virtual/workqueue/cpumask)"
}
# N smp_affinity_list effective_affinity_list, for every IRQ.
affinities() { local d; for d in /proc/irq/[0-9]*; do echo "$(basename $d) $(cat $d/smp_affinity_list) $(cat $d/effective_affinity_list)"; done; }
counts() { sec "$1-interrupts"; cat /proc/interrupts; endsec "$1-interrupts"; sec "$1-softirqs"; cat /proc/softirqs; endsec "$1-softirqs"; }
# Kafka's CPUs (6-7) and its NIC's housekeeping CPUs (4-5), as the plan says (the test checks).
EXCL=" 6 7 "
# IRQs the kernel refused to move at A's apply (EIO), and those the plan leaves because their handler
# pinned them (IRQF_NOBALANCING: the timer): left where they are, not judged.
pinned() { grep -o 'IRQs [^"]* are pinned by their handler' /var/lib/isolate/plan.json | grep -oE '(IRQs |, )[0-9]+ \\(' | grep -oE '[0-9]+'; }
refused() { REFUSED=" $( (grep -o 'skipped: /proc/irq/[0-9]*' /root/apply.txt | grep -o '[0-9]*$'; pinned) | tr '\n' ' ') "; }
cpus() { local p out=""; for p in \${1//,/ }; do if [[ $p == *-* ]]; then out+=" $(seq -s' ' \${p%-*} \${p#*-})"; else out+=" $p"; fi; done; echo "$out"; }
# The PCI function of a NIC (virtio's netdev hangs off virtioN, one level below it).
pci_of() { local d=$(readlink -f /sys/class/net/$1/device); [ -d $d/msi_irqs ] || d=$(dirname $d); echo $d; }
nic_irqs() { ls -1 $(pci_of $1)/msi_irqs 2>/dev/null | sort -n | tr '\n' ' '; }
# True when no IRQ with a handler (a /proc/interrupts row) has an exclusive CPU in its affinity, and
# eth0's are all 4-5. One awk over /proc/interrupts: under TCG on a loaded host a process per IRQ
# would take seconds a round.
quiet() {
  awk -v excl="$EXCL" -v refused="$REFUSED" -v eth0=" $(nic_irqs eth0) " '
    function has(list, set,   n, parts, i, r, a, b, c) {
      n = split(list, parts, ",")
      for (i = 1; i <= n; i++) {
        if (split(parts[i], r, "-") == 2) { a = r[1] + 0; b = r[2] + 0 } else { a = parts[i] + 0; b = a }
        for (c = a; c <= b; c++) if (index(set, " " c " ")) return 1
      }
      return 0
    }
    $1 ~ /^[0-9]+:$/ {
      n = substr($1, 1, length($1) - 1)
      if (index(refused, " " n " ")) next
      f = "/proc/irq/" n "/smp_affinity_list"; l = ""; getline l < f; close(f)
      if (has(l, excl)) exit 1
      if (index(eth0, " " n " ") && l != "4-5") exit 1
    }' /proc/interrupts
}
# restored NAME [SECONDS]: polls quiet every 0.1 s, at most SECONDS (60) from now; prints how long it took.
restored() {
  local t0=$(date +%s%N) ok=no
  while [ $(( ($(date +%s%N) - t0) / 1000000000 )) -lt \${2:-60} ]; do quiet && { ok=yes; break; }; sleep 0.1; done
  echo "$1 ok=$ok ms=$(( ($(date +%s%N) - t0) / 1000000 ))"
}
nicstate() { sec "$1"; for n in eth0 eth1; do echo "$n irqs=$(nic_irqs $n)"; for i in $(nic_irqs $n); do echo "  $i $(cat /proc/irq/$i/smp_affinity_list) $(cat /proc/irq/$i/effective_affinity_list)"; done; done; endsec "$1"; }
# Every io setting isolate may write, for every cgroup (one line a file, its lines joined by ;), and the
# io properties of the units involved: sections PHASE-io and PHASE-props.
iosnap() {
  ( cd $CG && find . -type d | sort | while read d; do
      for f in cgroup.subtree_control io.weight io.bfq.weight io.max; do [ -f "$d/$f" ] && echo "$d/$f=$(tr '\n' ';' < $d/$f)"; done
    done )
}
iodump() {
  sec "$1-io"; iosnap; endsec "$1-io"
  sec "$1-props"; systemctl show ${SHOWN_IO.map((p) => `-p ${p}`).join(' ')} -- ${IO_UNITS.join(' ')}; endsec "$1-props"
}
# until_ok NAME CONDITION [SECONDS]: polls CONDITION every 0.2 s, at most SECONDS (120) from now.
until_ok() {
  local t0=$(date +%s%N) ok=no
  while [ $(( ($(date +%s%N) - t0) / 1000000000 )) -lt \${3:-120} ]; do eval "$2" >/dev/null 2>&1 && { ok=yes; break; }; sleep 0.2; done
  echo "$1 ok=$ok ms=$(( ($(date +%s%N) - t0) / 1000000 ))"
}
# The batch's caps on disk MAJ:MIN in /hadoop-yarn/io.max; Kafka's weight on it in kafka.service.
capped() { grep -q "^$1 .*wbps=50000000 .*wiops=${CAP_WIOPS}$" $CG/hadoop-yarn/io.max; }
weighted() { systemctl show -P IODeviceWeight kafka.service | grep -q "/dev/block/$1 ${KAFKA_WEIGHT}"; }
all_io() { local d; for d in $DEVS; do capped $d && weighted $d || return 1; done; }

# Kafka's disks, found by serial: /dev/block/MAJ:MIN links (no udev here; systemd resolves IODevice*=
# paths with stat(2)), BFQ (the scheduler whose weights act per cgroup without iocost: this kernel
# has no io.latency), ext4 with Kafka's log dir on each.
for i in $(seq 100); do [ $(cat /sys/block/vd*/serial 2>/dev/null | grep -c '^data') -ge ${DISKS.length} ] && break; sleep 0.1; done
mkdir -p /dev/block
for d in /sys/class/block/*; do ln -sf ../$(basename $d) /dev/block/$(cat $d/dev); done
DEVS=""
sec disks
for b in /sys/block/vd*; do
  n=$(cat $b/serial); v=$(basename $b)
  echo bfq > $b/queue/scheduler
  mkfs.ext4 -q -F -N 64 -E nodiscard,lazy_itable_init=0,lazy_journal_init=1 /dev/$v && mkdir -p /$n && mount -o noatime /dev/$v /$n && mkdir -p /$n/kafka-logs
  echo "$n dev=$(cat $b/dev) name=$v scheduler=$(cat $b/queue/scheduler) mounted=$(grep -c " /$n " /proc/self/mountinfo)"
  DEVS+=" $(cat $b/dev)"
done
endsec disks


sec boot
echo "kernel=$(uname -r)"
for n in /sys/class/net/eth*; do
  echo "nic=$(basename $n) driver=$(basename $(readlink -f $n/device/driver)) pci=$(basename $(readlink -f $n/device/..)) numa=$(cat $n/device/../numa_node 2>/dev/null) rx=$(ls -1 $n/queues | grep -c rx-) tx=$(ls -1 $n/queues | grep -c tx-)"
done
echo "irqbalance=$(systemctl is-active irqbalance.service) pid=$(systemctl show -P MainPID irqbalance.service)"
echo "kafka=$(systemctl is-active kafka.service)"
endsec boot

ip link set lo up
ip addr add 169.254.50.2/24 dev eth0; ip link set eth0 up
ip addr add 169.254.51.2/24 dev eth1; ip link set eth1 up
sec link
for i in $(seq 1 100); do ping -c1 -W1 -q 169.254.50.1 >/dev/null 2>&1 && ping -c1 -W1 -q 169.254.51.1 >/dev/null 2>&1 && break; sleep 0.2; done
echo "eth0=$(ping -c3 -i0.2 -W1 -q 169.254.50.1 | grep -o '[0-9]* received')"
echo "eth1=$(ping -c3 -i0.2 -W1 -q 169.254.51.1 | grep -o '[0-9]* received')"
endsec link

mkdir -p $CG/hadoop-yarn
yarn-container 1 2 sleep >/dev/null
mkdir -p $CG/hadoop-yarn/container_net
# irqbalance has placed the IRQs (it does at start) and keeps running.
sleep 2
sec irqbalance-boot; affinities; endsec irqbalance-boot
sec before; masks; endsec before
iodump before

sec plan; isolate plan --json 2>/root/plan.err; endsec plan
sec plan-err; cat /root/plan.err; endsec plan-err
run apply bash -o pipefail -c 'node /opt/isolate/dist/cli.js apply --plan /var/lib/isolate/plan.json --yes | tee /root/apply.txt'
sleep 1
refused
sec applied; affinities; endsec applied
sec applied-irqbalance
echo "pid=$(systemctl show -P MainPID irqbalance.service) active=$(systemctl is-active irqbalance.service)"
for f in /etc/systemd/system/irqbalance.service.d/*; do echo "== $f"; cat $f; done
echo "== environ"; tr '\\0' '\\n' < /proc/$(systemctl show -P MainPID irqbalance.service)/environ | grep IRQBALANCE
endsec applied-irqbalance
sec applied-masks; masks; endsec applied-masks
iodump applied
counts applied

# The window: batch traffic over eth1 from a YARN container, a light flow over Kafka's eth0.
( echo $BASHPID > $CG/hadoop-yarn/container_net/cgroup.procs; exec ping -q -n -i 0.005 -w ${WINDOW_S} 169.254.51.1 ) > /root/ping-batch.txt 2>&1 &
B=$!
ping -q -n -i 0.05 -w ${WINDOW_S} 169.254.50.1 > /root/ping-kafka.txt 2>&1 &
K=$!
counts w0
sleep ${WINDOW_S}
counts w1
wait $B $K
sec window-ping; echo "batch: $(grep -o '[0-9]* packets transmitted, [0-9]* received' /root/ping-batch.txt)"; echo "kafka: $(grep -o '[0-9]* packets transmitted, [0-9]* received' /root/ping-kafka.txt)"; endsec window-ping
sec window-affinities; affinities; endsec window-affinities

# irqbalance restarted: with isolate's ban it must leave Kafka's CPUs and the pinned IRQs alone,
# through its start and a 10 s rebalance (no agent runs: the ban alone holds).
systemctl restart irqbalance.service
sec irqbalance-restart
echo "irqbalance=$(systemctl is-active irqbalance.service) pid=$(systemctl show -P MainPID irqbalance.service)"
for i in $(seq 1 24); do quiet && echo "sample $i quiet" || echo "sample $i NOT quiet"; sleep 0.5; done
endsec irqbalance-restart
sec irqbalance-restart-affinities; affinities; endsec irqbalance-restart-affinities
# Stopped before the rollback, so that what follows it is isolate's doing alone: rollback restarts
# irqbalance with try-restart, which leaves a stopped one stopped.
systemctl stop irqbalance.service

sec journal-a; cat /var/lib/isolate/journal.json; endsec journal-a
run rollback isolate rollback
sec after; masks; endsec after
sec after-dropins; ls -1 /etc/systemd/system/irqbalance.service.d/ 2>&1; endsec after-dropins
iodump after

# --- B: the agent keeps the IRQs quiet through link flaps, a driver rebind and stray writes -----
sec before-b; masks; endsec before-b
systemctl start isolate.service
# The agent's start (node under TCG) and first round: up to 2 minutes on a loaded host.
sec b-start; restored agent-first-round 120; endsec b-start

# Two io drifts the agent must correct: the batch's caps on one disk rewritten by hand in its io.max,
# and Kafka's weight on another set by hand through systemd.
sec b-io
until_ok io-first-round all_io
D=($DEVS)
echo "\${D[0]} ${DRIFT_CAP}" > $CG/hadoop-yarn/io.max
echo "drifted io.max: $(grep "^\${D[0]} " $CG/hadoop-yarn/io.max)"
until_ok drift-io.max "capped \${D[0]}"
systemctl set-property --runtime -- kafka.service "IODeviceWeight=/dev/block/\${D[1]} ${DRIFT_WEIGHT}"
echo "drifted IODeviceWeight: $(systemctl show -P IODeviceWeight kafka.service | tr '\n' ' ')"
until_ok drift-IODeviceWeight "weighted \${D[1]}"
endsec b-io
iodump b-applied

sec b-flaps
nicstate_line() { for i in $(nic_irqs $1); do echo -n "$i=$(cat /proc/irq/$i/smp_affinity_list) "; done; }
for n in eth1 eth0; do
  ip link set dev $n down; ip link set dev $n up
  echo "after $n down/up: $(nicstate_line $n)"
  restored "flap-$n"
done
# A stray write (another tool, a driver reset) puts one of Kafka's NIC queues on Kafka's own CPUs.
I=$(nic_irqs eth0 | awk '{print $2}'); echo 6-7 > /proc/irq/$I/smp_affinity_list
restored "stray-eth0-$I"
# The driver let go of eth1 and took it again: its MSI-X vectors are freed and allocated anew.
P=$(basename $(pci_of eth1))
echo "eth1 irqs before rebind: $(nic_irqs eth1)"
echo $P > /sys/bus/pci/drivers/vmxnet3/unbind
echo $P > /sys/bus/pci/drivers/vmxnet3/bind
for i in $(seq 1 50); do [ -e /sys/class/net/eth1 ] && break; sleep 0.1; done
ip addr add 169.254.51.2/24 dev eth1; ip link set dev eth1 up
echo "after rebind: $(nicstate_line eth1)"
restored rebind-eth1
# A stray write on one of the new eth1 IRQs: the agent must know them after the rescan.
I=$(nic_irqs eth1 | awk '{print $1}'); echo 6-7 > /proc/irq/$I/smp_affinity_list
restored "stray-eth1-$I"
echo "ping-eth1=$(ping -c3 -i0.2 -W1 -q 169.254.51.1 | grep -o '[0-9]* received')"
endsec b-flaps
nicstate b-nics

systemctl stop isolate.service
sec b-journal; journalctl -u isolate.service -o cat --no-pager | tail -n 60; endsec b-journal
sec b-io-journal; journalctl -u isolate.service -o cat --no-pager | grep '"msg":"corrected"' | grep -E '"setting":"(io.max|io.bfq.weight|IODeviceWeight)"'; endsec b-io-journal
run rollback-b isolate rollback
sec after-b; masks; endsec after-b
iodump after-b
run rollback-b2 isolate rollback
exit 0
`;

interface Interrupts {
  cpus: number[];
  /** Row id (`25`, `NET_RX`) → count per CPU id, and the text after the counts. */
  rows: Map<string, { counts: Map<number, number>; rest: string }>;
}

/** /proc/interrupts or /proc/softirqs as printed by the guest, read independently of src/irq. */
function parseInterrupts(text: string): Interrupts {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const cpus = (lines[0] ?? '')
    .trim()
    .split(/\s+/)
    .map((h) => Number(h.replace(/^CPU/, '')));
  const rows = new Map<string, { counts: Map<number, number>; rest: string }>();
  for (const line of lines.slice(1)) {
    const m = /^\s*(\w+):(.*)$/.exec(line);
    if (!m) continue;
    const f = m[2]!.trim().split(/\s+/);
    const counts = new Map<number, number>();
    cpus.forEach((c, i) => {
      if (f[i] !== undefined && /^\d+$/.test(f[i]!)) counts.set(c, Number(f[i]));
    });
    rows.set(m[1]!, { counts, rest: f.slice(cpus.length).join(' ') });
  }
  return { cpus, rows };
}

/** Per source, per CPU of `on`: how many more it counted in `b` than in `a` (only the sources that did). */
function deltas(a: Interrupts, b: Interrupts, on: CpuSet, numbered: boolean): Map<string, string> {
  const out = new Map<string, string>();
  for (const [id, row] of b.rows) {
    if (numbered !== /^\d+$/.test(id)) continue;
    const was = a.rows.get(id);
    const hits = on
      .toArray()
      .map((c) => [c, (row.counts.get(c) ?? 0) - (was?.counts.get(c) ?? 0)] as const)
      .filter(([, d]) => d !== 0);
    if (hits.length > 0) out.set(`${id} ${row.rest}`, hits.map(([c, d]) => `CPU${c}+${d}`).join(' '));
  }
  return out;
}

/** Total count of the numbered rows whose names match (or row `only`), over `on` (every CPU), from `a` to `b`. */
function total(a: Interrupts, b: Interrupts, name: RegExp, on?: CpuSet, only?: string): number {
  let sum = 0;
  for (const [id, row] of b.rows) {
    if (!/^\d+$/.test(id) || !name.test(row.rest) || (only !== undefined && id !== only)) continue;
    for (const [c, n] of row.counts) if (!on || on.has(c)) sum += n - (a.rows.get(id)?.counts.get(c) ?? 0);
  }
  return sum;
}

function affinityRows(text: string): Map<number, { list: string; effective: string }> {
  const out = new Map<number, { list: string; effective: string }>();
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length === 3 && /^\d+$/.test(f[0]!)) out.set(Number(f[0]), { list: f[1]!, effective: f[2]! });
  }
  return out;
}

interface PlanJsonView {
  allocation: Record<string, { class: string; cpuList: string }>;
  reserved: { cpuList: string };
  changes: {
    backend: string;
    target: string;
    setting: string;
    from: string | null;
    to: string;
    note: string;
  }[];
  warnings: string[];
  notes?: string[];
}

describe('quiet cores on a real kernel: multiqueue virtio-net + vmxnet3, irqbalance, traffic, rollback', () => {
  let diskDir = '';
  afterAll(() => {
    if (diskDir) rmSync(diskDir, { recursive: true, force: true });
  });
  const vm = vmScenario('quiet-cores', () => {
    // Kafka's disks: sparse raw files (only what mkfs writes takes space here), one queue each, on
    // legacy INTx (vectors=0): with MSI-X virtio-blk's request vectors are kernel-managed, which the
    // plan leaves where the kernel puts them (a note says so) and this file's quiet() would count
    // against Kafka's CPUs; an INTx line is an IRQ isolate moves like any other device's.
    diskDir = mkdtempSync(join(tmpdir(), 'isolate-quiet-disks-'));
    const qemuDisks = DISKS.flatMap((d) => {
      const img = join(diskDir, `${d}.img`);
      const fd = openSync(img, 'w');
      ftruncateSync(fd, DISK_BYTES);
      closeSync(fd);
      return [
        '-drive',
        `file=${img},if=none,id=${d},format=raw`,
        '-device',
        `virtio-blk-pci,drive=${d},serial=${d},num-queues=1,vectors=0,bus=pci.0`,
      ];
    });
    return {
      systemd: true as const,
      layout: LAYOUTS.twoSocketSmt2,
      rootfsPackages: QUIET_CORES_ROOTFS_PACKAGES,
      kernelModules: ['virtio_pci', 'virtio_net', 'vmxnet3', 'virtio_blk', 'bfq'],
      hostNetns: HOST_NETNS,
      extraQemuArgs: [...QEMU_NICS, ...qemuDisks],
      standins: { kafkaThreads: 4, kafkaBusy: false },
      policy: POLICY,
      agentInterval: `${AGENT_INTERVAL_S}s`,
      script: SCRIPT,
      timeoutMs: 840_000,
    };
  });
  const { s, need } = vm;

  const plan = (): PlanJsonView => JSON.parse(need('plan')) as PlanJsonView;
  const exclusive = () => CpuSet.parse(plan().allocation.kafka!.cpuList);

  it('boots with eth0 = virtio-net (4 queues, node 1), eth1 = vmxnet3, irqbalance running, both links passing traffic', () => {
    const boot = need('boot');
    expect(boot).toMatch(/^nic=eth0 driver=virtio_net .*numa=1 rx=4 tx=4$/m);
    expect(boot).toMatch(/^nic=eth1 driver=vmxnet3 /m);
    expect(boot).toMatch(/^irqbalance=active pid=[1-9]\d*$/m);
    expect(need('link')).toMatch(/^eth0=3 received$/m);
    expect(need('link')).toMatch(/^eth1=3 received$/m);
  });

  it('plans Kafka on node 1 with its NIC queues on node 1 housekeeping CPUs, and applies that plan', () => {
    const p = plan();
    expect(p.allocation.kafka!.cpuList).toBe('6-7');
    const eth0 = p.changes.filter(
      (c) => c.setting === 'smp_affinity_list' && /virtio\d+-(input|output)/.test(c.note),
    );
    // 4 input + 4 output vectors, each moved to 4-5 (or already there).
    expect(eth0.length, JSON.stringify(p.changes, null, 1)).toBeGreaterThan(0);
    for (const c of eth0) expect(c.to, c.note).toBe('4-5');
    expect(s('apply-rc').trim(), s('apply')).toBe('0');
  });

  /** IRQ number → the affinity the plan gives it (its own, before apply, when the plan leaves it). */
  /** IRQ number → the affinity the plan gives it; refused (EIO: the timer) as a set of its own. */
  const planned = () => {
    const refused = new Set(
      [...s('apply').matchAll(/^\s*skipped: \/proc\/irq\/(\d+) /gm)].map((m) => Number(m[1])),
    );
    // IRQs the plan leaves because their handler pinned them (IRQF_NOBALANCING: the timer).
    for (const note of plan().notes ?? []) {
      const list = /^IRQs (.*) are pinned by their handler/.exec(note)?.[1] ?? '';
      for (const m of list.matchAll(/(?:^|, )(\d+) \(/g)) refused.add(Number(m[1]));
    }
    const to = new Map<number, { cpus: CpuSet; note: string }>();
    for (const c of plan().changes) {
      const n = Number(c.target.replace('/proc/irq/', ''));
      if (c.backend === 'irq' && c.setting === 'smp_affinity_list' && !refused.has(n))
        to.set(n, { cpus: CpuSet.parse(c.to), note: c.note });
    }
    return { to, refused };
  };

  it("sets every device IRQ's affinity as planned, and each one that fired is delivered there, none on Kafka's CPUs", () => {
    const ex = exclusive();
    const { to, refused } = planned();
    const applied = affinityRows(need('applied'));
    const end = affinityRows(need('window-affinities'));
    const a0 = parseInterrupts(need('applied-interrupts'));
    const w1 = parseInterrupts(need('w1-interrupts'));
    const bad: string[] = [];
    const pending: string[] = [];
    for (const [id, row] of w1.rows) {
      if (!/^\d+$/.test(id)) continue;
      const n = Number(id);
      const list = CpuSet.parse(applied.get(n)?.list ?? '');
      const want = to.get(n);
      // Kafka's NIC is pinned (and banned from irqbalance): exactly the plan. irqbalance, banned from
      // Kafka's CPUs, may narrow any other IRQ to one CPU inside what the plan gave it.
      const pinned = want && /eth0 serves kafka/.test(want.note);
      if (want && !(pinned ? list.equals(want.cpus) : !list.isEmpty && list.isSubsetOf(want.cpus)))
        bad.push(`IRQ ${n} (${row.rest}): smp_affinity_list ${list} after apply, plan ${want.cpus}`);
      if (!refused.has(n) && list.overlaps(ex))
        bad.push(`IRQ ${n} (${row.rest}): smp_affinity_list ${list} after apply, on Kafka's ${ex}`);
      const now = CpuSet.parse(end.get(n)?.list ?? '');
      const eff = CpuSet.parse(end.get(n)?.effective ?? '');
      const fired = total(a0, w1, /(?:)/, undefined, id) > PENDING_MOVE_MAX;
      // x86 without interrupt remapping moves an IRQ when it next fires: until then its effective CPU
      // is the old one (src/irq/executor.ts). One that has not fired more than a pending move's first
      // interrupts since apply is listed, not judged.
      if (!fired) {
        if (!eff.isSubsetOf(now)) pending.push(`${n} (${row.rest}) on ${eff}`);
        continue;
      }
      if (eff.isEmpty || !eff.isSubsetOf(now))
        bad.push(`IRQ ${n} (${row.rest}): effective ${eff}, smp_affinity_list ${now}`);
      if (eff.overlaps(ex)) bad.push(`IRQ ${n} (${row.rest}): effective ${eff} on Kafka's ${ex}`);
    }
    console.log(
      `quiet-cores: IRQs not fired since apply, move pending at their next interrupt: ${pending.join(', ') || 'none'}`,
    );
    expect(bad, `${need('applied')}\n${need('window-affinities')}`).toEqual([]);
    expect(w1.rows.size).toBeGreaterThan(10);
  });

  it(`raises no device interrupt on Kafka's CPUs over a ${WINDOW_S} s window of batch traffic over eth1`, () => {
    const ex = exclusive();
    const a0 = parseInterrupts(need('applied-interrupts'));
    const w0 = parseInterrupts(need('w0-interrupts'));
    const w1 = parseInterrupts(need('w1-interrupts'));
    const s0 = parseInterrupts(need('w0-softirqs'));
    const s1 = parseInterrupts(need('w1-softirqs'));
    const applied = affinityRows(need('applied'));
    const batch = total(w0, w1, /eth1/);
    const kafkaNic = total(w0, w1, /virtio\d+-(input|output)/);
    const netRx = deltas(s0, s1, ex, false).get('NET_RX ') ?? 'none';
    const all = deltas(w0, w1, CpuSet.parse('0-7'), true);
    console.log(
      [
        `quiet-cores window ${WINDOW_S} s (${s('window-ping').trim().replace(/\n/g, '; ')}):`,
        `  eth1 (vmxnet3) interrupts ${batch}, eth0 (virtio) queue interrupts ${kafkaNic} (on 4-5: ${total(w0, w1, /virtio\d+-(input|output)/, CpuSet.parse('4-5'))})`,
        `  NET_RX on Kafka's ${ex}: ${netRx}`,
        '  device interrupts per IRQ and CPU over the window:',
        ...[...all].map(([k, v]) => `    ${k}: ${v}`),
        `  guest wall time ${Math.round(vm.wallMs / 1000)} s`,
      ].join('\n'),
    );
    // The traffic really flowed: thousands of interrupts on the batch NIC, some on Kafka's.
    expect(batch, need('w1-interrupts')).toBeGreaterThan(1000);
    expect(kafkaNic).toBeGreaterThan(50);
    // From apply to the window's end, nothing on Kafka's CPUs but the first interrupts an IRQ whose move
    // was pending (effective still on Kafka's CPUs after apply) delivers there before the kernel moves it.
    const onKafka = new Map<string, string>();
    for (const [k, v] of deltas(a0, w1, ex, true)) {
      const n = Number(k.split(' ')[0]);
      const was = CpuSet.parse(applied.get(n)?.effective ?? '');
      const hits = v.split(' ').map((h) => Number(h.split('+')[1]));
      if (was.overlaps(ex) && hits.reduce((a, b) => a + b, 0) <= PENDING_MOVE_MAX) {
        console.log(
          `quiet-cores: IRQ ${k} delivered its first interrupt after apply on ${v} (move pending until then)`,
        );
        continue;
      }
      onKafka.set(k, v);
    }
    expect(Object.fromEntries(onKafka)).toEqual({});
  });

  it("bans irqbalance from Kafka's CPUs and the pinned IRQs (its drop-in), restarted once; a restart keeps the ban", () => {
    const boot = /pid=(\d+)/.exec(need('boot'))![1];
    const ib = need('applied-irqbalance');
    // eth0's vectors are the IRQs isolate pins.
    const pinned = plan()
      .changes.filter(
        (c) => /virtio\d+-(input|output|config)/.test(c.note) && c.setting === 'smp_affinity_list',
      )
      .map((c) => c.target.replace('/proc/irq/', ''));
    expect(ib).toMatch(/^pid=\d+ active=active$/m);
    expect(/^pid=(\d+)/m.exec(ib)![1], 'restarted').not.toBe(boot);
    expect(ib).toMatch(/^IRQBALANCE_BANNED_CPULIST=6-7$/m);
    for (const n of pinned) expect(ib, `--banirq=${n}`).toContain(`--banirq=${n}`);
    const restart = need('irqbalance-restart');
    console.log(`quiet-cores irqbalance:\n${ib}\n${restart}`);
    expect(restart).toMatch(/^irqbalance=active pid=\d+$/m);
    expect(restart).not.toMatch(/NOT quiet/);
    expect(restart.match(/ quiet$/gm)?.length).toBe(24);
  });

  it('rollback puts every affinity isolate changed, RPS/XPS, default_smp_affinity and the workqueue mask back byte for byte, and removes the drop-in', () => {
    expect(s('rollback-rc').trim(), s('rollback')).toBe('0');
    // The apply did change them: the comparison below is not vacuous.
    expect(snapDiff(need('before'), need('applied-masks')).length).toBeGreaterThan(5);
    // irqbalance ran (banned) from apply to before the rollback and may move the IRQs isolate left
    // alone: those differences are its own, listed; everything isolate wrote must be as before.
    const touched = new Set(plan().changes.map((c) => c.target));
    // What isolate found, and journaled, when it wrote each IRQ: irqbalance (unbanned until the
    // apply restarts it) may have moved an IRQ between the "before" snapshot and the plan, or between
    // the plan and the apply's write, and rollback restores the value isolate replaced, not the
    // snapshot's (nor the plan's "from").
    const found = new Map(
      plan()
        .changes.filter((c) => c.backend === 'irq' && c.setting === 'smp_affinity_list')
        .map((c) => [c.target, c.from]),
    );
    const journal = JSON.parse(need('journal-a')) as {
      entries: { change: { target: string; setting: string }; previous: string | null }[];
    };
    for (const e of journal.entries)
      if (e.change.setting === 'smp_affinity_list' && e.previous !== null)
        found.set(e.change.target, e.previous);
    const diff = snapDiff(need('before'), need('after'));
    const afterLists = new Map(
      [...need('after').matchAll(/^(\/proc\/irq\/\d+)\/smp_affinity_list=(.*)$/gm)].map((m) => [
        m[1]!,
        m[2]!,
      ]),
    );
    const irqbalanceMoved = diff.filter((d) => {
      const m = /^(\/proc\/irq\/\d+)\/smp_affinity(_list)?:/.exec(d);
      if (m === null) return false;
      return !touched.has(m[1]!) || afterLists.get(m[1]!) === found.get(m[1]!);
    });
    console.log(
      `quiet-cores rollback: ${diff.length - irqbalanceMoved.length} differences; moved by irqbalance meanwhile: ${irqbalanceMoved.join('; ') || 'none'}`,
    );
    expect(diff.filter((d) => !irqbalanceMoved.includes(d))).toEqual([]);
    expect(need('after-dropins').trim()).not.toMatch(/isolate/);
  });

  it(`the agent (every ${AGENT_INTERVAL_S} s) keeps them quiet through link flaps, a driver rebind and stray writes`, () => {
    const b = need('b-start') + need('b-flaps');
    console.log(`quiet-cores B:\n${b}\n${need('b-nics')}`);
    const runs = [...b.matchAll(/^(\S+) ok=(\w+) ms=(\d+)$/gm)].map((m) => ({
      name: m[1]!,
      ok: m[2],
      ms: Number(m[3]),
    }));
    expect(runs.map((r) => r.name.replace(/-\d+$/, ''))).toEqual([
      'agent-first-round',
      'flap-eth1',
      'flap-eth0',
      'stray-eth0',
      'rebind-eth1',
      'stray-eth1',
    ]);
    for (const r of runs) expect(r.ok, r.name).toBe('yes');
    // For the record, in the agent's rounds (its first round includes its start). A round is the interval
    // plus the round's own work, seconds of node under TCG: its period is read from the journal, the
    // median gap between the rounds' "apply started" lines (each round applies: the timer's IRQ 0,
    // which the kernel refuses, is tried again every round).
    const at = [...need('b-journal').matchAll(/"time":(\d+).*"msg":"apply started"/g)].map((m) =>
      Number(m[1]),
    );
    const gaps = at
      .slice(1)
      .map((t, i) => t - at[i]!)
      .sort((a, b) => a - b);
    const period = Math.max(AGENT_INTERVAL_S * 1000, gaps[Math.floor(gaps.length / 2)] ?? 0);
    console.log(
      `quiet-cores B: agent round period ${period} ms (interval ${AGENT_INTERVAL_S} s); restored in rounds: ${runs
        .slice(1)
        .map((r) => `${r.name} ${(r.ms / period).toFixed(2)}`)
        .join(', ')}`,
    );
    // That each was restored (ok=yes above, within restored()'s deadline that only catches "never"),
    // not how many rounds it took: that is printed, and the agent's latency budget is
    // bench/agent-latency.mjs's (a round under TCG on a busy machine takes what the load gives it).
    expect(need('b-flaps')).toMatch(/^ping-eth1=3 received$/m);
  });

  /** Kafka's disks as the guest found them: serial → MAJ:MIN. */
  const disks = () =>
    new Map(
      [...need('disks').matchAll(/^(data\d) dev=(\d+:\d+) .*scheduler=.*\[bfq\].* mounted=1$/gm)].map((m) => [
        m[1]!,
        m[2]!,
      ]),
    );
  const devs = () => [...disks().values()];
  const io = (phase: string) => snapLines(need(`${phase}-io`));
  const units = (phase: string) =>
    Object.fromEntries(parseShow(need(`${phase}-props`)).map((b) => [b.Id!, b] as const));

  it("plans and applies, on each of Kafka's disks, the batch's io.max caps and BFQ weight, and Kafka's weight through systemd", () => {
    expect(disks().size, need('disks')).toBe(DISKS.length);
    const changes = plan().changes;
    const cap = (d: string) => `${d} wbps=50000000 wiops=${CAP_WIOPS}`;
    for (const d of devs()) {
      const of = (setting: string, to: string) =>
        changes.filter((c) => c.setting === setting && c.to === to).map((c) => c.target);
      expect(of('io.max', cap(d)), `io.max ${d}\n${JSON.stringify(changes, null, 1)}`).toEqual([
        expect.stringMatching(/\/hadoop-yarn$/),
      ]);
      expect(of('io.bfq.weight', `${d} ${BATCH_WEIGHT}`), `io.bfq.weight ${d}`).toEqual([
        expect.stringMatching(/\/hadoop-yarn$/),
      ]);
      expect(of('IODeviceWeight', `/dev/block/${d} ${KAFKA_WEIGHT}`), `IODeviceWeight ${d}`).toEqual([
        'kafka.service',
      ]);
      // Applied: the kernel's files and systemd's entry.
      const max = io('applied').get('./hadoop-yarn/io.max') ?? '';
      expect(max, need('applied-io')).toMatch(
        new RegExp(`(^|;)${d} rbps=max wbps=50000000 riops=max wiops=${CAP_WIOPS};`),
      );
      expect(io('applied').get('./hadoop-yarn/io.bfq.weight')).toMatch(
        new RegExp(`(^|;)${d} ${BATCH_WEIGHT};`),
      );
      expect(units('applied')['kafka.service']!.IODeviceWeight?.split('\n')).toContain(
        `/dev/block/${d} ${KAFKA_WEIGHT}`,
      );
      // Before isolate there was none of it.
      expect(io('before').get('./hadoop-yarn/io.max') ?? '').not.toContain(d);
      expect(units('before')['kafka.service']!.IODeviceWeight ?? '').not.toContain(d);
    }
  });

  it('the agent applies the io settings, and corrects a cap rewritten by hand in io.max and a weight set by hand through systemd', () => {
    const b = need('b-io');
    console.log(`quiet-cores B io:\n${b}\n${s('b-io-journal')}`);
    const [d0, d1] = devs();
    const runs = Object.fromEntries([...b.matchAll(/^(\S+) ok=(\w+) ms=\d+$/gm)].map((m) => [m[1]!, m[2]!]));
    expect(runs).toEqual({ 'io-first-round': 'yes', 'drift-io.max': 'yes', 'drift-IODeviceWeight': 'yes' });
    // The drifts took (the agent may have corrected them before the next line read them: then the
    // journal below is what shows it saw them).
    const journal = need('b-io-journal');
    expect(journal).toMatch(
      new RegExp(`"target":"[^"]*/hadoop-yarn","setting":"io\\.max","from":"${d0} [^"]*wiops=1000"`),
    );
    expect(journal).toMatch(
      new RegExp(
        `"target":"kafka\\.service","setting":"IODeviceWeight","from":"/dev/block/${d1} ${DRIFT_WEIGHT}"`,
      ),
    );
    // And in force again when B's rollback came.
    expect(io('b-applied').get('./hadoop-yarn/io.max')).toMatch(
      new RegExp(`(^|;)${d0} rbps=max wbps=50000000 riops=max wiops=${CAP_WIOPS};`),
    );
    expect(units('b-applied')['kafka.service']!.IODeviceWeight?.split('\n')).toContain(
      `/dev/block/${d1} ${KAFKA_WEIGHT}`,
    );
  });

  it('the rollback after the agent puts every io file and unit io property back as before isolate, or names it; a second rollback has nothing to do', () => {
    const out = s('rollback-b');
    expect(s('rollback-b-rc').trim(), out).toBe('0');
    const notes = out.split('\n').filter((l) => /^\s*note: /.test(l));
    // A difference is allowed only when a note of the rollback names it (its cgroup and file, or its
    // unit and property) with the reason.
    const named = (where: string, what: string) => notes.some((n) => n.includes(where) && n.includes(what));
    // A cgroup made or removed meanwhile (a service started or stopped: irqbalance's) holds no setting
    // of isolate's: only the cgroups of both snapshots are compared.
    const cgroupsOf = (phase: string) => new Set([...io(phase).keys()].map((k) => k.replace(/\/[^/]+$/, '')));
    const both = new Set([...cgroupsOf('before')].filter((c) => cgroupsOf('after-b').has(c)));
    const ioDiff = snapDiff(need('before-io'), need('after-b-io')).filter((d) =>
      both.has(d.replace(/\/[^/]+:.*$/, '')),
    );
    const unnamedIo = ioDiff.filter((d) => {
      const file = /^\.(\/.*)?\/([^/:]+):/.exec(d);
      return !file || !named(file[1] ?? '/', file[2]!);
    });
    const was = units('before');
    const now = units('after-b');
    expect(Object.keys(now).sort()).toEqual(Object.keys(was).sort());
    const unnamedProps: string[] = [];
    for (const [u, props] of Object.entries(was))
      for (const k of new Set([...Object.keys(props), ...Object.keys(now[u]!)]))
        if (props[k] !== now[u]![k] && !named(u, k))
          unnamedProps.push(`${u} ${k}: ${props[k]} → ${now[u]![k]}`);
    console.log(
      `quiet-cores B rollback io: ${ioDiff.length} io differences (${ioDiff.join('; ') || 'none'}), notes:\n${notes.join('\n') || 'none'}`,
    );
    // The comparison is not vacuous: B's apply and corrections did change them.
    expect(snapDiff(need('before-io'), need('b-applied-io')).length).toBeGreaterThan(DISKS.length);
    expect(unnamedIo, `${out}\n${need('after-b-io')}`).toEqual([]);
    expect(unnamedProps, out).toEqual([]);
    expect(s('rollback-b2-rc').trim(), s('rollback-b2')).toBe('0');
    expect(s('rollback-b2').trim()).toBe('Nothing to roll back: no apply to undo.');
  });

  it('a rollback after the agent leaves the host as before, but for the IRQs the rebind made anew', () => {
    expect(s('rollback-b-rc').trim(), s('rollback-b')).toBe('0');
    const eth1 = new Set((/^eth1 irqs=(.*)$/m.exec(need('b-nics'))?.[1] ?? '').trim().split(/\s+/));
    const diff = snapDiff(need('before-b'), need('after-b'));
    const remade = diff.filter((d) => eth1.has(/^\/proc\/irq\/(\d+)\//.exec(d)?.[1] ?? ''));
    console.log(`quiet-cores B rollback: made anew by the rebind: ${remade.join('; ') || 'none'}`);
    expect(diff.filter((d) => !remade.includes(d))).toEqual([]);
  });
});
