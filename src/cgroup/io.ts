// The io controller's root-level state under --root: whether iocost is enabled per device
// (`io.cost.qos`, root cgroup only), and whether the kernel has io.latency at all. Read-only; every
// file's content and name is untrusted.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { IOLATENCY_OPTION, type IoFacts, type IoLatencySupport } from '../model/io.js';
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

/** A kernel config is ~250 KiB; anything far larger is not one. */
const CONFIG_MAX_BYTES = 4 * 1024 * 1024;
/** Top-level cgroups looked at for io files: a few are enough, a host may have thousands. */
const MAX_TOP_LEVEL = 64;
/** Files only a cgroup whose parent enables io has (io.stat is the core's, the others its policies'). */
const IO_ENABLED_FILES = ['io.stat', 'io.max', 'io.weight'];

/**
 * Whether this kernel has io.latency (docs/disks.md). A non-root cgroup with io enabled shows it
 * directly: io.latency is there or not beside its io.stat. Else the running kernel's config
 * (/boot/config-RELEASE): `=y` or `is not set`. Else unknown, never guessed from the distribution.
 */
export function readIoLatencySupport(root: string, mount: string, release: string | null): IoLatencySupport {
  const seen = ioEnabledChild(root, mount);
  if (seen !== null) {
    const where = `/${path.posix.join(mount, seen.name)}`;
    return seen.latency
      ? { state: 'present', evidence: `${where} has io.latency` }
      : { state: 'absent', evidence: `${where} has ${seen.file} but no io.latency` };
  }
  if (release === null || !/^[\w.+~-]{1,128}$/.test(release) || /^\.+$/.test(release)) {
    return { state: 'unknown', evidence: 'no cgroup has io enabled and the kernel release is unknown' };
  }
  const config = `/boot/config-${release}`;
  let text: string | null;
  try {
    text = readBoundedIfPresent(path.join(root, config), { maxBytes: CONFIG_MAX_BYTES });
  } catch (err) {
    if (!(err instanceof ReadRefused)) throw err;
    return {
      state: 'unknown',
      evidence: `no cgroup has io enabled and ${config} is unreadable (${err.reason})`,
    };
  }
  if (text === null)
    return { state: 'unknown', evidence: `no cgroup has io enabled and there is no ${config}` };
  return configSays(text, config);
}

/** io.latency as a kernel config file states it. */
export function configSays(text: string, config: string): IoLatencySupport {
  const lines = new Set(text.split('\n').map((l) => l.trim()));
  if (lines.has(`${IOLATENCY_OPTION}=y`))
    return { state: 'present', evidence: `${IOLATENCY_OPTION}=y in ${config}` };
  if (lines.has(`# ${IOLATENCY_OPTION} is not set`))
    return { state: 'absent', evidence: `${IOLATENCY_OPTION} is not set in ${config}` };
  // Kernels before 4.19 have no such option: a config with the io controller but no line has none.
  if (lines.has('CONFIG_BLK_CGROUP=y'))
    return { state: 'absent', evidence: `${config} has CONFIG_BLK_CGROUP=y but no ${IOLATENCY_OPTION}` };
  return { state: 'unknown', evidence: `${config} does not read as a kernel config with the io controller` };
}

/** The first top-level cgroup (by name) with io enabled by the root, and whether it has io.latency. */
function ioEnabledChild(
  root: string,
  mount: string,
): { name: string; file: string; latency: boolean } | null {
  const top = path.join(root, mount);
  let names: string[];
  try {
    names = readdirSync(top, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
  } catch {
    return null;
  }
  for (const name of names.slice(0, MAX_TOP_LEVEL)) {
    const dir = path.join(top, name);
    const file = IO_ENABLED_FILES.find((f) => existsSync(path.join(dir, f)));
    if (file) return { name, file, latency: existsSync(path.join(dir, 'io.latency')) };
  }
  return null;
}
