// A systemd host's top level of cgroups, as bench/agent-idle.mjs models it (AGENT_TREE=systemd): a
// Debian 12 host (systemd 252, kernel 6.1), unfenced, with every file the agent reads in a cgroup where
// the cpuset, cpu, memory, io and pids controllers are on.
export const SYSTEMD_TOP_LEVEL = [
  'init.scope',
  'system.slice',
  'user.slice',
  'dev-hugepages.mount',
  'dev-mqueue.mount',
  'proc-sys-fs-binfmt_misc.mount',
  'sys-fs-fuse-connections.mount',
  'sys-kernel-config.mount',
  'sys-kernel-debug.mount',
  'sys-kernel-tracing.mount',
];

/** The files of one of them and their values (each written with a trailing newline). */
export function systemdUnitFiles(name) {
  return {
    'cpuset.cpus': '',
    'cpuset.mems': '',
    'cpuset.cpus.effective': '0-7',
    'cpuset.mems.effective': '0-1',
    'cpuset.cpus.partition': 'member',
    'memory.min': '0',
    'memory.low': '0',
    'memory.high': 'max',
    'memory.max': 'max',
    'memory.current': '52183040',
    'cpu.weight': '100',
    'cpu.idle': '0',
    'cgroup.subtree_control': name.endsWith('.slice') ? 'cpuset cpu io memory pids' : '',
    'cgroup.controllers': 'cpuset cpu io memory pids',
    'cgroup.type': 'domain',
    'cgroup.events': 'populated 1\nfrozen 0',
    'cgroup.procs': '',
  };
}
