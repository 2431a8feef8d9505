// Which cgroup layout the host under --root runs: unified (cgroup2 at /sys/fs/cgroup), hybrid (a tmpfs
// there, cgroup2 at /sys/fs/cgroup/unified plus v1 hierarchies) or legacy (v1 hierarchies only). The
// mount table says what the kernel mounted; the directories say what isolate would write to. Both are
// read and must agree: acting on a guess could write v2 files into a v1 tree or the reverse.
import path from 'node:path';
import type { CgroupLayout } from '../model/observed.js';
import { UserError } from '../model/errors.js';
import { cgroupMount, exists, isDir, listDirs, readTrim } from './fsutil.js';

/** Controllers a v1 mount's super options can name (anything else there is a mount option). */
const V1_CONTROLLERS = new Set([
  'cpuset',
  'cpu',
  'cpuacct',
  'memory',
  'blkio',
  'io',
  'devices',
  'freezer',
  'net_cls',
  'net_prio',
  'perf_event',
  'hugetlb',
  'pids',
  'rdma',
  'misc',
]);

export interface CgroupMounts {
  layout: CgroupLayout;
  /** The cgroup2 mount relative to /sys/fs/cgroup: '' (unified), 'unified' (hybrid), null (none). */
  unified: string | null;
  /** v1 controller → its hierarchy, named by the mount directory under /sys/fs/cgroup (`cpu,cpuacct`). */
  v1: Record<string, string>;
  /** Named v1 hierarchies (`name=systemd` → `systemd`): systemd's own tracking on a legacy host. */
  named?: Record<string, string>;
  /** Where the cpuset controller lives: the v2 mount, a v1 hierarchy, or nowhere isolate can use. */
  cpuset: 'unified' | 'v1' | 'none';
  /** Where the layout was read from, for reports and errors. */
  source: 'mountinfo' | 'directories';
}

interface MountLine {
  mountpoint: string;
  fstype: string;
  superOpts: string[];
}

/** mountinfo: "id parent maj:min root mountpoint opts [optional...] - fstype source superopts". */
function parseMountinfo(text: string): MountLine[] {
  const out: MountLine[] = [];
  for (const line of text.split('\n')) {
    const dash = line.indexOf(' - ');
    if (dash < 0) continue;
    const left = line.slice(0, dash).split(' ');
    const right = line.slice(dash + 3).split(' ');
    const mountpoint = left[4]?.replace(/\\040/g, ' ');
    if (!mountpoint || !right[0]) continue;
    out.push({ mountpoint, fstype: right[0], superOpts: (right[2] ?? '').split(',') });
  }
  return out;
}

function refuse(what: string): never {
  throw new UserError(
    `${what}; the cgroup layout cannot be judged, so isolate changes nothing (check the mounts with "findmnt -t cgroup,cgroup2")`,
  );
}

/**
 * The host's cgroup layout. With `<root>/proc/self/mountinfo` the mount table decides and every
 * mount in it must be visible under `<root>/sys/fs/cgroup` (a contradiction is refused, naming both);
 * without one (a fixture tree) the directories decide.
 */
export async function detectCgroupLayout(root: string): Promise<CgroupMounts> {
  const mount = cgroupMount(root);
  const mountinfoFile = path.join(root, 'proc/self/mountinfo');
  const text = await readTrim(mountinfoFile);
  if (text === null) return fromDirectories(mount);
  return fromMountinfo(mount, mountinfoFile, text);
}

async function fromMountinfo(mount: string, mountinfoFile: string, text: string): Promise<CgroupMounts> {
  let unified: string | null = null;
  let v1Seen = false;
  const v1: Record<string, string> = {};
  const named: Record<string, string> = {};
  for (const m of parseMountinfo(text)) {
    if (m.mountpoint !== '/sys/fs/cgroup' && !m.mountpoint.startsWith('/sys/fs/cgroup/')) continue;
    const rel = path.posix.relative('/sys/fs/cgroup', m.mountpoint);
    if (m.fstype === 'cgroup2') {
      unified = rel;
      if (!(await exists(path.join(mount, rel, 'cgroup.controllers')))) {
        refuse(
          `${mountinfoFile} lists cgroup2 at ${m.mountpoint} but ${path.join(mount, rel, 'cgroup.controllers')} does not exist`,
        );
      }
    } else if (m.fstype === 'cgroup') {
      v1Seen = true;
      const dir = path.join(mount, rel);
      if (!(await isDir(dir))) {
        refuse(`${mountinfoFile} lists a cgroup v1 hierarchy at ${m.mountpoint} but ${dir} does not exist`);
      }
      for (const c of m.superOpts.filter((o) => V1_CONTROLLERS.has(o))) {
        // The same hierarchy can be mounted twice; the first mount names it.
        v1[c] ??= rel;
      }
      for (const o of m.superOpts) if (o.startsWith('name=')) named[o.slice(5)] ??= rel;
    }
  }
  if (unified === null && (await exists(path.join(mount, 'cgroup.controllers')))) {
    refuse(
      `${path.join(mount, 'cgroup.controllers')} exists but ${mountinfoFile} lists no cgroup2 mount at /sys/fs/cgroup`,
    );
  }
  if (v1.cpuset !== undefined && !(await exists(path.join(mount, v1.cpuset, 'cpuset.cpus')))) {
    refuse(
      `${mountinfoFile} lists the cpuset controller at /sys/fs/cgroup/${v1.cpuset} but ${path.join(mount, v1.cpuset, 'cpuset.cpus')} does not exist`,
    );
  }
  const layout: CgroupLayout =
    unified === '' && !v1Seen
      ? 'unified'
      : unified !== null && v1Seen
        ? 'hybrid'
        : v1Seen
          ? 'legacy'
          : unified === ''
            ? 'unified'
            : 'none';
  return { layout, unified, v1, named, cpuset: await cpusetHome(mount, unified, v1), source: 'mountinfo' };
}

async function cpusetHome(
  mount: string,
  unified: string | null,
  v1: Record<string, string>,
): Promise<CgroupMounts['cpuset']> {
  if (v1.cpuset !== undefined) return 'v1';
  if (unified === null) return 'none';
  const ctrls = await readTrim(path.join(mount, unified, 'cgroup.controllers'));
  return ctrls?.split(/\s+/).includes('cpuset') ? 'unified' : 'none';
}

/** No mount table (a fixture tree): cgroup.controllers marks cgroup2, `tasks` files v1 hierarchies. */
async function fromDirectories(mount: string): Promise<CgroupMounts> {
  if (await exists(path.join(mount, 'cgroup.controllers'))) {
    return {
      layout: 'unified',
      unified: '',
      v1: {},
      cpuset: await cpusetHome(mount, '', {}),
      source: 'directories',
    };
  }
  const unified = (await exists(path.join(mount, 'unified', 'cgroup.controllers'))) ? 'unified' : null;
  const v1: Record<string, string> = {};
  let v1Seen = false;
  for (const d of await listDirs(mount)) {
    if (d === 'unified') continue;
    const names = d.split(',');
    if (['cpuset', 'memory', 'cpu', 'cpuacct', 'systemd', 'blkio', 'pids'].some((n) => names.includes(n)))
      v1Seen = true;
    if (!(await exists(path.join(mount, d, 'tasks')))) continue;
    for (const c of names.filter((n) => V1_CONTROLLERS.has(n))) v1[c] ??= d;
  }
  if (v1.cpuset !== undefined && !(await exists(path.join(mount, v1.cpuset, 'cpuset.cpus'))))
    delete v1.cpuset;
  const layout: CgroupLayout = v1Seen ? (unified ? 'hybrid' : 'legacy') : 'none';
  return { layout, unified, v1, cpuset: await cpusetHome(mount, unified, v1), source: 'directories' };
}
