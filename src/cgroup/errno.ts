// What an errno means for the cgroup file that returned it (from the kernel rules in
// docs/cgroup-v2.md §10), so a failed step can say what happened and how to fix it.

/** Which kind of cgroup file (or operation) failed. */
export function fileKind(setting: string): string {
  if (setting === 'mkdir' || setting === 'rmdir') return setting;
  if (setting === 'cpuset.cpus' || setting === 'cpuset.mems') return 'cpuset.list';
  if (setting.startsWith('memory.')) return 'memory';
  if (setting.startsWith('cpu.')) return 'cpu';
  if (setting.startsWith('io.') || setting.startsWith('blkio.')) return 'io';
  return setting;
}

const TABLE: Record<string, Record<string, string>> = {
  'cpuset.list': {
    EINVAL: 'bad list syntax, or a CPU/node outside the possible set',
    ERANGE: 'a CPU/node id beyond the kernel bitmap size',
    ENOSPC: 'the cgroup has processes and the list would become empty (or an attach is in progress)',
    EBUSY: 'shrinking a load-balanced partition below its SCHED_DEADLINE bandwidth',
  },
  'cpuset.cpus.exclusive': {
    EINVAL:
      "the exclusive CPUs overlap a sibling's cpuset.cpus.exclusive(.effective), or are not in the parent's",
  },
  'cpuset.cpus.partition': {
    EINVAL: 'the keyword is not member, root or isolated',
  },
  'cgroup.subtree_control': {
    EBUSY:
      'the cgroup has processes of its own (no-internal-process rule), or a child still uses a controller being disabled',
    ENOENT: "the controller is not in the cgroup's cgroup.controllers (its parent did not enable it)",
    EOPNOTSUPP: 'invalid domain or threaded-topology violation',
  },
  'cgroup.procs': {
    ENOSPC: "the destination's cpuset.cpus.effective is empty",
    EBUSY: 'the destination has domain controllers in cgroup.subtree_control (no-internal-process rule)',
    ENOENT: "the cgroup is gone, or not reachable from isolate's cgroup namespace",
    EINVAL: 'the PID is a kernel thread that cannot be moved',
    ESRCH: 'the process exited',
    EOPNOTSUPP: 'invalid domain or threaded-topology violation',
  },
  rmdir: {
    EBUSY: 'the cgroup still has child cgroups or live processes',
  },
  mkdir: {
    EAGAIN: 'cgroup.max.descendants or cgroup.max.depth reached',
  },
  cpu: {
    ERANGE: 'cpu.weight outside 1-10000',
    EINVAL: 'cpu.idle not 0/1, cpu.weight written while cpu.idle=1, or a malformed value',
  },
  memory: {
    EINVAL: 'malformed value',
  },
  io: {
    ENODEV: 'no such block device (MAJ:MIN gone: the disk was removed or renumbered; plan again)',
    EOPNOTSUPP:
      'the device does not take this setting: io.weight needs iocost enabled for it (io.cost.qos), io.bfq.weight the BFQ scheduler; plan again after changing the scheduler',
    EINVAL: 'malformed line, or a value out of range (weight 1-10000)',
    ERANGE: 'weight out of range (1-10000)',
  },
};

const GENERIC: Record<string, string> = {
  EACCES:
    'permission denied: not root, no write access to the common ancestor, or (already root) an SELinux/AppArmor denial; see ausearch -m avc / journalctl -k',
  EPERM:
    'operation not permitted: not root with CAP_SYS_ADMIN, an nsdelegate boundary, or a seccomp/security-module denial',
  ENODEV: 'the cgroup is being destroyed',
  ENOENT: 'the file or cgroup does not exist (removed meanwhile?)',
  EROFS: 'the cgroup filesystem is mounted read-only',
  EIO: 'I/O error',
  ETIMEDOUT: 'timed out',
};

/** A short human meaning of `code` (e.g. `ENOSPC`) for the given setting. */
export function errnoMeaning(setting: string, code: string | undefined): string {
  if (!code) return 'unknown error';
  return TABLE[fileKind(setting)]?.[code] ?? GENERIC[code] ?? code;
}

export function errCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err
    ? String((err as { code: unknown }).code)
    : undefined;
}
