// The io controller's root-level state under --root: whether iocost is enabled per device
// (`io.cost.qos`, root cgroup only). Read-only; the file's content is untrusted.
import path from 'node:path';
import type { IoFacts } from '../model/io.js';
import { ReadRefused, readBoundedIfPresent } from '../sys/read.js';

/** One line per configured device: a few KiB on the largest host. */
const QOS_MAX_BYTES = 256 * 1024;

/**
 * Devices with iocost enabled, from `io.cost.qos` text ("MAJ:MIN enable=1 ctrl=auto rpct=… …");
 * null when a line does not read as the kernel writes it.
 */
export function parseIoCostQos(text: string): string[] | null {
  const enabled: string[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const m = /^(\d+:\d+)((?: [a-z]+=\S+)*)$/.exec(line.trim());
    const flag = m ? /(?:^| )enable=([01])(?: |$)/.exec(m[2]!) : null;
    if (!m || !flag) return null;
    if (flag[1] === '1') enabled.push(m[1]!);
  }
  return enabled;
}

/** iocost's state on the cgroup2 root at `mount` (relative to `root`). */
export function readIoCost(root: string, mount: string): Pick<IoFacts, 'iocost' | 'iocostFile'> {
  const iocostFile = `/${mount}/io.cost.qos`;
  try {
    const text = readBoundedIfPresent(path.join(root, mount, 'io.cost.qos'), { maxBytes: QOS_MAX_BYTES });
    if (text === null) return { iocost: 'unsupported', iocostFile };
    const enabled = parseIoCostQos(text);
    return { iocost: enabled ? { enabled } : 'unknown', iocostFile };
  } catch (err) {
    if (err instanceof ReadRefused) return { iocost: 'unknown', iocostFile };
    throw err;
  }
}
