/**
 * Captures the parts of /sys the topology reader looks at from a qemu guest, byte for byte, and writes
 * them as a fixture tree. sysfs files all claim a size of 4096, so tar would pad or truncate them; each
 * file is instead base64-encoded over the serial console and rebuilt here.
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** Guest shell code: defines `capture`, which prints every wanted file between section markers. */
export const CAPTURE_FUNCTIONS = `
emit() {
  for f in "$@"; do
    [ -f "$f" ] || continue
    if b=$(base64 "$f" 2>/dev/null); then
      echo "@@FILE $f"
      [ -n "$b" ] && echo "$b"
      echo "@@END"
    else
      echo "@@UNREADABLE $f"
    fi
  done
}
# Device entries are kept as the guest's own symlinks into sys/devices, with numa_node and proc_name
# files at their physical paths: a reader has to be able to walk from a virtio device (which has no
# numa_node) up to the PCI function that has one, and plain copies would hide that.
devices() {
  for e in "$@"; do
    [ -L "$e" ] || continue
    [ "$e" = sys/class/net/lo ] && continue
    echo "@@LINK $e $(readlink "$e")"
    p=$(cd -P "$e" && pwd -P); p=\${p#/}
    emit "$p/proc_name"
    [ -L "$p/device" ] || continue
    echo "@@LINK $p/device $(readlink "$p/device")"
    d=$(cd -P "$p/device" && pwd -P); d=\${d#/}
    emit "$d/numa_node"
    # ...and the nearest ancestor (normally the PCI function) that has a numa_node.
    a=\${d%/*}
    while [ "$a" != sys/devices ] && [ "$a" != sys ]; do
      if [ -f "$a/numa_node" ]; then emit "$a/numa_node"; break; fi
      a=\${a%/*}
    done
  done
}
links() {
  for l in "$@"; do [ -L "$l" ] && echo "$l -> $(readlink "$l")"; done
}
capture() {
  cd /
  # -a: without it lscpu -p lists online CPUs only, and the offline ones are part of the answer.
  lscpu -a -p=CPU,CORE,SOCKET,NODE,ONLINE > /tmp/lscpu.txt 2>/tmp/lscpu.err
  echo =====BEGIN uname=====
  uname -r
  echo =====END uname=====
  echo =====BEGIN lscpu-stderr=====
  cat /tmp/lscpu.err
  echo =====END lscpu-stderr=====
  echo =====BEGIN files=====
  emit tmp/lscpu.txt
  C=sys/devices/system/cpu
  emit $C/online $C/offline $C/possible $C/present $C/isolated $C/kernel_max
  emit $C/cpu[0-9]*/online $C/cpu[0-9]*/topology/*
  for i in $C/cpu[0-9]*/cache/index*; do
    emit $i/level $i/type $i/shared_cpu_list $i/shared_cpu_map $i/id
  done
  N=sys/devices/system/node
  emit $N/online $N/possible $N/has_cpu $N/has_memory $N/has_normal_memory
  emit $N/node[0-9]*/cpulist $N/node[0-9]*/cpumap $N/node[0-9]*/meminfo $N/node[0-9]*/distance
  devices sys/class/net/* sys/class/block/* sys/class/scsi_host/*
  emit sys/devices/cpu_core/cpus sys/devices/cpu_atom/cpus
  echo =====END files=====
  # Where the device links point, and the numa_node of the PCI function above each virtio device
  # (virtio devices have no numa_node of their own), for SOURCE.md.
  echo =====BEGIN links=====
  links sys/class/net/* sys/class/net/*/device sys/class/block/* sys/class/block/*/device sys/class/scsi_host/*
  for d in sys/class/net/*/device sys/class/block/*/device; do
    [ -e "$d" ] || continue
    p=$(cd -P "$d/.." && pwd -P)
    [ -f "$p/numa_node" ] && echo "$d/.. = $p, numa_node $(cat "$p/numa_node")"
  done
  echo =====END links=====
}
`;

export interface CapturedTree {
  /** Guest path relative to / (e.g. `sys/devices/system/cpu/online`) to exact content. */
  files: Map<string, Buffer>;
  /** Symlink path relative to / to its target, exactly as readlink printed it (relative). */
  links: Map<string, string>;
  lscpu: Buffer;
  unreadable: string[];
}

export function decodeCapture(section: string): CapturedTree {
  const files = new Map<string, Buffer>();
  const links = new Map<string, string>();
  const unreadable: string[] = [];
  let current: string | undefined;
  let b64: string[] = [];
  for (const line of section.split('\n')) {
    if (current === undefined) {
      if (line.startsWith('@@FILE ')) {
        current = line.slice('@@FILE '.length).trim();
        b64 = [];
      } else if (line.startsWith('@@LINK ')) {
        const [path, target] = line.slice('@@LINK '.length).trim().split(' ');
        if (path && target) links.set(path, target);
      } else if (line.startsWith('@@UNREADABLE ')) {
        unreadable.push(line.slice('@@UNREADABLE '.length).trim());
      }
      continue;
    }
    if (line === '@@END') {
      files.set(current, Buffer.from(b64.join(''), 'base64'));
      current = undefined;
      continue;
    }
    b64.push(line.trim());
  }
  if (current !== undefined) throw new Error(`capture truncated inside ${current}`);
  const lscpu = files.get('tmp/lscpu.txt');
  if (!lscpu) throw new Error('capture has no lscpu output');
  files.delete('tmp/lscpu.txt');
  return { files, links, lscpu, unreadable };
}

/** Replaces `<dir>/sys` and `<dir>/lscpu.txt`; SOURCE.md is written by the caller. Links stay relative. */
export function writeTree(dir: string, tree: CapturedTree): void {
  rmSync(join(dir, 'sys'), { recursive: true, force: true });
  for (const [path, data] of tree.files) {
    const out = join(dir, path);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, data);
  }
  for (const [path, target] of tree.links) {
    if (target.startsWith('/') || !resolve(dir, dirname(path), target).startsWith(resolve(dir, 'sys'))) {
      throw new Error(`refusing link ${path} -> ${target}: it leaves the fixture's sys/`);
    }
    const out = join(dir, path);
    mkdirSync(dirname(out), { recursive: true });
    symlinkSync(target, out);
  }
  writeFileSync(join(dir, 'lscpu.txt'), tree.lscpu);
}
