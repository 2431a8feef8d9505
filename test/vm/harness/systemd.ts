/**
 * Boots the Debian userland of rootfs.ts with systemd as PID 1 and runs a scenario as a oneshot
 * service once multi-user.target is reached. Same contract as runInVm: results come back between
 * `=====BEGIN name=====` / `=====END name=====` on the serial console, then `=====EXIT n=====`,
 * then the guest powers itself off.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { appendFile, copyFile, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CpioWriter } from './cpio.js';
import { aptInstall, ensureVmPrereqs, type KernelInfo } from './ensure.js';
import { moduleFiles, projectArchive } from './initramfs.js';
import type { VmLayout } from './layouts.js';
import { guestPathIn, type RootfsInfo, systemdRootfs } from './rootfs.js';
import {
  bootTwiceOnTimeout,
  guestFileMode,
  qemuArgsFor,
  READY_MARKER,
  spawnQemu,
  type VmResult,
} from './run.js';

export interface RunInSystemdVmOptions {
  layout: VmLayout;
  /** bash, run as root by `harness-scenario.service` (After=multi-user.target), cwd /root. */
  script: string;
  /** node at /usr/bin/node, the built project at /opt/isolate, `isolate` on PATH. Default true. */
  includeProject?: boolean;
  /** Debian packages on top of the base rootfs (a separately cached variant), e.g. `ansible-core`. */
  rootfsPackages?: string[];
  /**
   * Extra files keyed by absolute guest path (ELF, `#!` and bin/ files are made executable). Units go
   * in /etc/systemd/system; not under /run or /tmp, which systemd mounts over at boot.
   */
  files?: Record<string, string | Buffer>;
  /** Symlinks keyed by guest path, e.g. enabling a unit: `/etc/systemd/system/multi-user.target.wants/x.service`. */
  symlinks?: Record<string, string>;
  /** Units of MASKED_UNITS, or generator names, to leave enabled in this guest. */
  keepUnits?: string[];
  /**
   * true (default): the unified layout (cgroup2 only). false: systemd 252's pure legacy layout, v1
   * hierarchies at /sys/fs/cgroup/<controller> with its own tracking in name=systemd and no cgroup2
   * (`unified_cgroup_hierarchy=0` alone would give hybrid, by systemd's default of cgroup2 for its own
   * tracking hierarchy (not booted here), so `legacy_systemd_cgroup_controller=1` is needed too).
   */
  unifiedCgroupHierarchy?: boolean;
  /** Appended to the kernel command line (e.g. `systemd.log_level=debug`). */
  kernelArgs?: string;
  extraQemuArgs?: string[];
  /**
   * Kernel modules loaded (with their dependencies, by the rootfs's `insmod`: add `kmod` to
   * `rootfsPackages`) before the scenario starts, e.g. `virtio_net`: there is no udev to load them.
   */
  kernelModules?: string[];
  /**
   * Shell commands run as root in a network namespace of qemu's own (`unshare --net`) before qemu is
   * started in it, e.g. creating the taps its `-netdev tap` backends open: devices a guest needs on
   * the host side exist only there, and the host's own network is never touched. Needs root.
   */
  hostNetns?: string;
  /** Wall-clock limit per boot; default 420 s (boot to multi-user alone is ~20-40 s of TCG). */
  timeoutMs?: number;
  /**
   * The kernel to boot instead of Debian's cloud kernel (ensureVmPrereqs), e.g. kernel-build.ts's
   * io.latency kernel. Its `config`, when given, is the guest's /boot/config-RELEASE, as a host with
   * that kernel installed has it. `kernelModules` are looked up in its modulesDir.
   */
  kernel?: KernelInfo & { config?: string };
}

export interface SystemdVmResult extends VmResult {
  rootfs: RootfsInfo;
}

/** The unit that runs the scenario; its output goes straight to the serial port, not via journald. */
export const SCENARIO_UNIT = 'harness-scenario.service';

const SCENARIO_SERVICE = `[Unit]
Description=isolate VM harness scenario
After=multi-user.target

[Service]
Type=oneshot
ExecStart=/harness/run-scenario
StandardInput=null
StandardOutput=tty
StandardError=inherit
TTYPath=/dev/ttyS0
`;

// poweroff -ff is reboot(2) without stopping units: the scenario's state is all on the console already,
// and a clean shutdown would cost TCG seconds (and could hang on a unit the scenario broke on purpose).
// It does not wait for the serial port either: stty first, as busybox guests' PID 1 does (initramfs.ts).
const RUN_SCENARIO = `#!/bin/bash
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb
cd /root
echo ${READY_MARKER}
[ -f /harness/modules.sh ] && . /harness/modules.sh
bash /harness/scenario.sh
rc=$?
sync
echo
echo "=====EXIT $rc====="
stty onlcr 0<&1 2>/dev/null
systemctl poweroff -ff || echo o > /proc/sysrq-trigger
sleep infinity
`;

// PID 1, the cgroup layout, no "[ OK ]" lines between the scenario's markers.
const systemdAppend = (unified: boolean) =>
  `rdinit=/lib/systemd/systemd ${
    unified
      ? 'systemd.unified_cgroup_hierarchy=1'
      : 'systemd.unified_cgroup_hierarchy=0 systemd.legacy_systemd_cgroup_controller=1'
  } systemd.show_status=false`;

/**
 * Units masked in every systemd guest unless `keepUnits` names them. Under TCG each unit that runs a
 * program costs a second or more of boot, and none of these matters on a tmpfs root without devices:
 * gettys would also print login prompts between the scenario's markers, and timers only add noise.
 * journald, dbus and systemd-tmpfiles-setup stay: the agent's logs and D-Bus API need them.
 */
export const MASKED_UNITS = [
  'serial-getty@ttyS0.service',
  'getty@tty1.service',
  'console-getty.service',
  'modprobe@.service',
  'systemd-modules-load.service',
  'systemd-remount-fs.service',
  'systemd-random-seed.service',
  'systemd-sysusers.service',
  'systemd-sysctl.service',
  'systemd-tmpfiles-setup-dev.service',
  'systemd-journal-flush.service',
  'systemd-update-utmp.service',
  'systemd-update-utmp-runlevel.service',
  'systemd-logind.service',
  'systemd-user-sessions.service',
  'e2scrub_reap.service',
  'apt-daily.timer',
  'apt-daily-upgrade.timer',
  'dpkg-db-backup.timer',
  'e2scrub_all.timer',
  'fstrim.timer',
  'systemd-tmpfiles-clean.timer',
];

/**
 * Fixed configuration of every systemd guest. A machine-id makes this boot not a "first boot"
 * (Debian's systemd-firstboot.service would otherwise prompt for a locale on the console and wait).
 * Generators are masked (a /dev/null symlink in /etc/systemd/system-generators): there is no fstab,
 * no SysV script and no getty to generate for, and systemd runs every one of them on each daemon-reload.
 */
function guestConfig(
  rootfs: RootfsInfo,
  keep: string[],
): { files: Record<string, string>; symlinks: Record<string, string> } {
  const units = '/etc/systemd/system';
  const masked = MASKED_UNITS.filter((u) => !keep.includes(u));
  const generators = rootfs.generators.filter((g) => !keep.includes(g));
  return {
    files: {
      '/etc/machine-id': '6f0c9a2e4f1b4c3d8e7a5b6c1d2e3f40\n',
      '/etc/hostname': 'isolate-guest\n',
      [`${units}/${SCENARIO_UNIT}`]: SCENARIO_SERVICE,
      '/harness/run-scenario': RUN_SCENARIO,
    },
    symlinks: {
      [`${units}/default.target`]: '/lib/systemd/system/multi-user.target',
      [`${units}/multi-user.target.wants/${SCENARIO_UNIT}`]: `${units}/${SCENARIO_UNIT}`,
      ...Object.fromEntries(masked.map((u) => [`${units}/${u}`, '/dev/null'])),
      ...Object.fromEntries(generators.map((g) => [`/etc/systemd/system-generators/${g}`, '/dev/null'])),
    },
  };
}

export function runInSystemdVm(opts: RunInSystemdVmOptions): Promise<SystemdVmResult> {
  return bootTwiceOnTimeout(`runInSystemdVm: ${opts.layout.name}`, () => runOnce(opts));
}

async function runOnce(opts: RunInSystemdVmOptions): Promise<SystemdVmResult> {
  const pre = opts.kernel ? { ...ensureVmPrereqs(), kernel: opts.kernel } : ensureVmPrereqs();
  if (opts.hostNetns && !existsSync('/usr/sbin/ip')) aptInstall(['iproute2']);
  const rootfs = await systemdRootfs(opts.rootfsPackages);
  const at = (p: string) => guestPathIn(rootfs, p);
  const parts = [...rootfs.layers];
  if (opts.includeProject ?? true) parts.push(projectArchive(at));

  const cfg = guestConfig(rootfs, opts.keepUnits ?? []);
  const layer = new CpioWriter();
  const boot = opts.kernel?.config
    ? { [`/boot/config-${opts.kernel.release}`]: readFileSync(opts.kernel.config, 'utf8') }
    : {};
  const files = { ...cfg.files, ...boot, ...opts.files, '/harness/scenario.sh': opts.script };
  for (const [p, d] of Object.entries(files)) layer.file(at(p), d, guestFileMode(p, d));
  for (const [p, t] of Object.entries({ ...cfg.symlinks, ...opts.symlinks })) layer.symlink(at(p), t);
  if (opts.kernelModules?.length) {
    const mods = moduleFiles(pre, opts.kernelModules);
    for (const [p, d] of Object.entries(mods.files)) layer.file(at(p), d, 0o644);
    layer.file(at('/harness/modules.sh'), mods.script, 0o644);
  }

  const tmp = mkdtempSync(join(tmpdir(), 'isolate-sysvm-'));
  try {
    const initrd = join(tmp, 'initrd.cpio');
    // Later archives win: project files and the scenario land on top of the Debian tree.
    await copyFile(parts[0]!, initrd);
    for (const p of parts.slice(1)) await appendFile(initrd, await readFile(p));
    await appendFile(initrd, layer.finish());

    const layout = {
      ...opts.layout,
      kernelArgs: [
        opts.layout.kernelArgs,
        systemdAppend(opts.unifiedCgroupHierarchy ?? true),
        opts.kernelArgs,
      ]
        .filter(Boolean)
        .join(' '),
    };
    const { args, append } = qemuArgsFor(layout, opts.extraQemuArgs);
    const full = [...args, '-kernel', pre.kernel.vmlinuz, '-initrd', initrd, '-append', append];
    // multi-user.target in 20-40 s under TCG (the rootfs with ansible-core is larger): 5 minutes is
    // for a loaded machine; a guest hung at boot is stopped then instead of at the run's timeout.
    // exec keeps one PID from unshare to qemu, so a timeout's SIGKILL ends qemu and its namespace with it.
    const [cmd, argv] = opts.hostNetns
      ? [
          'unshare',
          ['--net', '--', 'sh', '-ec', `${opts.hostNetns}\nexec "$@"`, 'qemu-netns', pre.qemu, ...full],
        ]
      : [pre.qemu, full];
    const r = await spawnQemu(cmd, argv, opts.timeoutMs ?? 420_000, 300_000);
    return { ...r, rootfs };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
