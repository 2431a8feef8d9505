// argv prefix shared by the benchmarks that read the live /proc through `--root`: run the rest under
// `unshare` in a mount namespace of its own whose /sys/fs/cgroup is a cgroup2 mount alone. isolate's
// layout check reads the live /proc/self/mountinfo, and on a v1 or hybrid bench host that table would
// contradict the unified fixture tree (check: UNKNOWN). Nothing is mounted or unmounted outside it.
export const PRIVATE_CGROUP2 = [
  'unshare',
  '--mount',
  '--propagation',
  'private',
  'sh',
  '-c',
  'umount -R /sys/fs/cgroup 2>/dev/null; mount -t cgroup2 cgroup2 /sys/fs/cgroup && exec "$@"',
  'sh',
];
