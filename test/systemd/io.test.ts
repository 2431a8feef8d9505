// systemd's per-device io properties against a stand-in `systemctl` on PATH (a real process) that keeps
// each unit's lists as systemd 252 does: set-property replaces the entry of the device it names (an
// empty value clears the list, except IODeviceLatencyTargetSec=, which 252's systemctl refuses, the
// whole call with it) and rewrites the runtime drop-in with the whole list; show prints one line per
// entry, skipping unlimited caps. A stand-in `busctl` takes SetUnitProperties for the latency list as
// systemd 252 did in the guest (the list replaced whole). Real systemd and the kernel: test/vm/kafka-disks.
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyChanges, rollbackLast } from '../../src/apply/engine.js';
import type { Change, SystemdChange } from '../../src/model/plan.js';
import { ioUnitChanges } from '../../src/planner/io.js';
import { ioFileMissing } from '../../src/systemd/executor.js';
import { fakeSystemctl, TmpRootSystemd } from '../support/fake-systemctl.js';

const FAKE = String.raw`#!/bin/bash
echo "$*" >> "$FAKE_LOG"
S=$FAKE_STATE
case "$1" in
  set-property)
    shift; [ "$1" = --runtime ] && shift; [ "$1" = -- ] && shift
    unit=$1; shift
    # A later drop-in of the operator's holds the unit's lists: systemd answers and changes nothing.
    [ -f "$S/$unit/held" ] && exit 0
    for kv in "$@"; do
      if [ "$kv" = IODeviceLatencyTargetSec= ]; then
        echo "Failed to set unit properties on $unit: Path 'IODeviceLatencyTargetUSec' specified in = is not normalized." >&2
        exit 1
      fi
    done
    for kv in "$@"; do
      n=$(printf %s "$kv" | cut -d= -f1); v=$(printf %s "$kv" | cut -d= -f2-); p=$n
      [ "$p" = IODeviceLatencyTargetSec ] && p=IODeviceLatencyTargetUSec
      f="$S/$unit/$p"; mkdir -p "$S/$unit"; touch "$f"
      dev=
      if [ -z "$v" ]; then : > "$f"; else
        dev=$(printf %s "$v" | cut -d' ' -f1); grep -v "^$dev " "$f" > "$f.new"; echo "$v" >> "$f.new"; mv "$f.new" "$f"
      fi
      # Like systemd: the entry set is written into the unit's cgroup (an entry dropped is not).
      cg="$FAKE_ROOT/sys/fs/cgroup/$unit"; mm=$(printf %s "$dev" | sed -n 's|^/dev/block/||p')
      val=$(printf %s "$v" | cut -d' ' -f2)
      if [ -n "$v" ] && [ -n "$mm" ] && [ -d "$cg" ]; then
        case $p in
          IODeviceLatencyTargetUSec) key=target
            case $val in infinity) val=max ;; *ms) val=$(( $(printf %s "$val" | sed 's/ms$//') * 1000 )) ;; esac ;;
          IOReadBandwidthMax) key=rbps ;; IOWriteBandwidthMax) key=wbps ;;
          IOReadIOPSMax) key=riops ;; IOWriteIOPSMax) key=wiops ;; *) key= ;;
        esac
        [ "$val" = infinity ] && val=max
        if [ "$key" = target ]; then kf="$cg/io.latency"; else kf="$cg/io.max"; fi
        if [ -n "$key" ]; then
          touch "$kf"; old=$(grep "^$mm " "$kf"); grep -v "^$mm " "$kf" > "$kf.new"
          if [ "$key" = target ]; then line="$mm target=$val"; [ "$val" = max ] && line=
          else line=$(printf %s "$mm rbps=max wbps=max riops=max wiops=max" | sed "s/$key=[^ ]*/$key=$val/")
            [ -n "$old" ] && line=$(printf %s "$old" | sed "s/$key=[^ ]*/$key=$val/")
          fi
          [ -n "$line" ] && echo "$line" >> "$kf.new"; mv "$kf.new" "$kf"
        fi
      fi
      d="$FAKE_ROOT/run/systemd/system.control/$unit.d"; mkdir -p "$d"
      { echo '[Slice]'; echo "$n="; sed "s|^|$n=|" "$f"; } > "$d/50-$p.conf"
    done; exit 0 ;;
  show)
    shift; props=; while [ "$1" = -p ]; do props="$props $2"; shift 2; done; [ "$1" = -- ] && shift
    first=1
    for unit in "$@"; do
      [ $first = 1 ] || echo; first=0
      for p in $props; do
        case $p in
          LoadState) echo LoadState=loaded ;;
          ControlGroup) echo "ControlGroup=/$unit" ;;
          *) f="$S/$unit/$p"; [ -f "$f" ] || continue
             while IFS= read -r e; do
               case "$p:$e" in IODeviceLatencyTargetUSec:*) ;; *" infinity") continue ;; esac
               echo "$p=$e"
             done < "$f" ;;
        esac
      done
    done; exit 0 ;;
esac
echo "fake systemctl: unexpected $*" >&2; exit 1
`;

// SetUnitProperties with one a(st) property, IODeviceLatencyTargetUSec: the list is replaced whole
// (systemd writes the entries it holds into io.latency; one dropped stays there, as with systemctl).
const FAKE_BUSCTL = String.raw`#!/bin/bash
echo "busctl $*" >> "$FAKE_LOG"
S=$FAKE_STATE
[ "$1 $2 $3 $4 $5 $6 $7" = "call -- org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager SetUnitProperties sba(sv)" ] || { echo "fake busctl: unexpected $*" >&2; exit 1; }
shift 7; unit=$1 runtime=$2 n=$3 p=$4 sig=$5 count=$6; shift 6
[ -f "$S/$unit/held" ] && exit 0
[ "$runtime $n $p $sig" = "true 1 IODeviceLatencyTargetUSec a(st)" ] && [ $# = $((count * 2)) ] || { echo "fake busctl: unexpected arguments" >&2; exit 1; }
mkdir -p "$S/$unit"; : > "$S/$unit/$p"
d="$FAKE_ROOT/run/systemd/system.control/$unit.d"; mkdir -p "$d"
{ echo '[Slice]'; echo 'IODeviceLatencyTargetSec='; } > "$d/50-$p.conf"
cg="$FAKE_ROOT/sys/fs/cgroup/$unit"
while [ $# -gt 0 ]; do
  dev=$1 us=$2; shift 2
  if [ "$us" = 18446744073709551615 ]; then shown=infinity; elif [ $((us % 1000)) = 0 ]; then shown=$((us / 1000))ms; else shown=${'$'}{us}us; fi
  echo "$dev $shown" >> "$S/$unit/$p"; echo "IODeviceLatencyTargetSec=$dev $shown" >> "$d/50-$p.conf"
  mm=$(printf %s "$dev" | sed -n 's|^/dev/block/||p')
  if [ -n "$mm" ] && [ -d "$cg" ]; then
    touch "$cg/io.latency"; grep -v "^$mm " "$cg/io.latency" > "$cg/io.latency.new"
    [ "$shown" = infinity ] || echo "$mm target=$us" >> "$cg/io.latency.new"; mv "$cg/io.latency.new" "$cg/io.latency"
  fi
done
exit 0
`;

let root: string;
let restore: () => Promise<void>;
const state = (unit: string, p: string) =>
  readFile(path.join(root, 'state', unit, p), 'utf8').catch(() => null);
const sd = (target: string, setting: string, from: string, to: string): Change =>
  ({ backend: 'systemd', target, setting, from, to }) as SystemdChange;

beforeEach(async () => {
  ({ root, restore } = await fakeSystemctl(FAKE, 'isolate-sdio-'));
  // systemd 252 refuses clearing the latency list through systemctl; isolate goes through D-Bus.
  await writeFile(path.join(root, 'bin', 'busctl'), FAKE_BUSCTL);
  await chmod(path.join(root, 'bin', 'busctl'), 0o755);
  // The operator's own entries: a target on another disk, a cap Flink already had on Kafka's disk.
  await mkdir(path.join(root, 'state/kafka.slice'), { recursive: true });
  await mkdir(path.join(root, 'state/yarn.slice'), { recursive: true });
  await writeFile(path.join(root, 'state/kafka.slice/IODeviceLatencyTargetUSec'), '/dev/sdc 50ms\n');
  await writeFile(path.join(root, 'state/yarn.slice/IOWriteBandwidthMax'), '/dev/block/8:16 1048576\n');
  // The unit's cgroup, as systemd wrote it for IODeviceWeight= (kernel files are plain files here).
  await mkdir(path.join(root, 'sys/fs/cgroup/kafka.slice'), { recursive: true });
  await mkdir(path.join(root, 'sys/fs/cgroup/yarn.slice'), { recursive: true });
  await writeFile(
    path.join(root, 'sys/fs/cgroup/yarn.slice/io.max'),
    '8:16 rbps=max wbps=1048576 riops=max wiops=max\n',
  );
  await writeFile(path.join(root, 'sys/fs/cgroup/kafka.slice/io.bfq.weight'), 'default 100\n8:16 100\n');
});

afterEach(() => restore());

describe('systemd io properties: one device entry each', () => {
  it('the planner diffs the unit entry for the device, by the name systemctl show prints', () => {
    const props = { IODeviceLatencyTargetUSec: '/dev/sdc 50ms\n/dev/block/8:16 25ms', IODeviceWeight: '' };
    const want = { file: 'io.latency' as const, dev: '8:16', disk: 'sdb', value: '8:16 target=25000' };
    expect(ioUnitChanges('kafka.slice', want, props)).toEqual([]);
    const w2 = { ...want, value: '8:16 target=10000' };
    expect(ioUnitChanges('kafka.slice', w2, props)).toMatchObject([
      { setting: 'IODeviceLatencyTargetSec', from: '/dev/block/8:16 25ms', to: '/dev/block/8:16 10ms' },
    ]);
    const caps = { file: 'io.max' as const, dev: '8:16', disk: 'sdb', value: '8:16 wbps=83886080 riops=300' };
    expect(ioUnitChanges('yarn.slice', caps, {}).map((c) => [c.setting, c.from, c.to])).toEqual([
      ['IOWriteBandwidthMax', '', '/dev/block/8:16 83886080'],
      ['IOReadIOPSMax', '', '/dev/block/8:16 300'],
    ]);
    const weight = { file: 'io.bfq.weight' as const, dev: '8:16', disk: 'sdb', value: '8:16 25' };
    expect(ioUnitChanges('yarn.slice', weight, {})[0]).toMatchObject({
      setting: 'IODeviceWeight',
      to: '/dev/block/8:16 25',
    });
  });

  it('apply sets and reads back each entry; rollback gives every list back and clears the weight systemd cannot', async () => {
    const changes = [
      sd('kafka.slice', 'IODeviceLatencyTargetSec', '', '/dev/block/8:16 25ms'),
      sd('kafka.slice', 'IODeviceWeight', '', '/dev/block/8:16 1000'),
      sd('yarn.slice', 'IOWriteBandwidthMax', '/dev/block/8:16 1048576', '/dev/block/8:16 83886080'),
    ];
    const exec = new TmpRootSystemd(root);
    const r = await applyChanges({ root, changes, executors: { systemd: exec } });
    expect(r.changed).toBe(3);
    expect(await state('kafka.slice', 'IODeviceLatencyTargetUSec')).toBe(
      '/dev/sdc 50ms\n/dev/block/8:16 25ms\n',
    );
    expect(await state('yarn.slice', 'IOWriteBandwidthMax')).toBe('/dev/block/8:16 83886080\n');
    expect(await readFile(path.join(root, 'sys/fs/cgroup/kafka.slice/io.latency'), 'utf8')).toBe(
      '8:16 target=25000\n',
    );
    // A second apply finds every entry in place.
    expect((await applyChanges({ root, changes, executors: { systemd: exec } })).changed).toBe(0);

    await rollbackLast({ root, executors: { systemd: new TmpRootSystemd(root) } });
    // The latency target went through infinity (systemd writes target=max), then the list without it.
    const log = await readFile(path.join(root, 'systemctl.log'), 'utf8');
    expect(log).toContain(
      'set-property --runtime -- kafka.slice IODeviceLatencyTargetSec=/dev/block/8:16 infinity\n',
    );
    // systemd 252's systemctl refuses IODeviceLatencyTargetSec=: the list left goes whole over D-Bus.
    expect(log).not.toContain('IODeviceLatencyTargetSec=\n');
    expect(log).toContain(
      'busctl call -- org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager SetUnitProperties sba(sv) kafka.slice true 1 IODeviceLatencyTargetUSec a(st) 1 /dev/sdc 50000\n',
    );
    expect(await state('kafka.slice', 'IODeviceLatencyTargetUSec')).toBe('/dev/sdc 50ms\n');
    expect(await readFile(path.join(root, 'sys/fs/cgroup/kafka.slice/io.latency'), 'utf8')).toBe('');
    expect(await state('kafka.slice', 'IODeviceWeight')).toBe('');
    expect(
      existsSync(path.join(root, 'run/systemd/system.control/kafka.slice.d/50-IODeviceWeight.conf')),
    ).toBe(false);
    expect(await state('yarn.slice', 'IOWriteBandwidthMax')).toBe('/dev/block/8:16 1048576\n');
    expect(await readFile(path.join(root, 'sys/fs/cgroup/kafka.slice/io.bfq.weight'), 'utf8')).toBe(
      '8:16 default',
    );
  });

  it('a latency target on a unit that had none rolls back to no list at all, its drop-in removed', async () => {
    await mkdir(path.join(root, 'sys/fs/cgroup/solo.service'), { recursive: true });
    const changes = [sd('solo.service', 'IODeviceLatencyTargetSec', '', '/dev/block/8:16 25ms')];
    await applyChanges({ root, changes, executors: { systemd: new TmpRootSystemd(root) } });
    const kernel = path.join(root, 'sys/fs/cgroup/solo.service/io.latency');
    expect(await readFile(kernel, 'utf8')).toBe('8:16 target=25000\n');
    await rollbackLast({ root, executors: { systemd: new TmpRootSystemd(root) } });
    const log = await readFile(path.join(root, 'systemctl.log'), 'utf8');
    expect(log).toContain(
      'SetUnitProperties sba(sv) solo.service true 1 IODeviceLatencyTargetUSec a(st) 0\n',
    );
    expect(await state('solo.service', 'IODeviceLatencyTargetUSec')).toBe('');
    expect(await readFile(kernel, 'utf8')).toBe('');
    const dropIns = path.join(root, 'run/systemd/system.control/solo.service.d');
    expect(existsSync(path.join(dropIns, '50-IODeviceLatencyTargetUSec.conf'))).toBe(false);
  });

  it('an io restore systemd does not put in force fails, naming unit, property, device, wanted and seen', async () => {
    const changes = [
      sd('yarn.slice', 'IOWriteBandwidthMax', '/dev/block/8:16 1048576', '/dev/block/8:16 83886080'),
    ];
    await applyChanges({ root, changes, executors: { systemd: new TmpRootSystemd(root) } });
    await writeFile(path.join(root, 'state/yarn.slice/held'), '');
    const err = await rollbackLast({ root, executors: { systemd: new TmpRootSystemd(root) } }).catch(
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain(
      'yarn.slice IOWriteBandwidthMax for /dev/block/8:16: wanted "/dev/block/8:16 1048576", systemd shows "/dev/block/8:16 83886080"',
    );
    const j = JSON.parse(await readFile(path.join(root, 'var/lib/isolate/journal.json'), 'utf8'));
    expect(j.state).toBe('rollback-failed');
  });

  it('a cleared latency target systemd keeps (the D-Bus path) fails the undo with what systemd shows', async () => {
    const changes = [sd('kafka.slice', 'IODeviceLatencyTargetSec', '', '/dev/block/8:16 25ms')];
    await applyChanges({ root, changes, executors: { systemd: new TmpRootSystemd(root) } });
    await writeFile(path.join(root, 'state/kafka.slice/held'), '');
    const err = await rollbackLast({ root, executors: { systemd: new TmpRootSystemd(root) } }).catch(
      (e: unknown) => e as Error,
    );
    expect((err as Error).message).toContain(
      'kafka.slice IODeviceLatencyTargetSec for /dev/block/8:16: wanted no entry, systemd shows "/dev/block/8:16 25ms"',
    );
  });

  it('a target systemd could not put in force says what is missing: io in the parent, or io.latency in the kernel', async () => {
    const dir = path.join(root, 'sys/fs/cgroup/kafka.slice');
    expect(ioFileMissing(dir, 'io.latency')).toBe(
      `io is not enabled in ${path.join(root, 'sys/fs/cgroup')}'s cgroup.subtree_control`,
    );
    await writeFile(path.join(dir, 'io.stat'), '');
    expect(ioFileMissing(dir, 'io.latency')).toBe(
      'io is enabled there (io.stat exists) but this kernel has no io.latency: it is built without CONFIG_BLK_CGROUP_IOLATENCY',
    );
  });
});
