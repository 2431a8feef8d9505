// The Debian packages each systemd-guest rootfs variant adds to the base set (harness/rootfs.ts), named
// here so the scenarios that boot them and the background preparation that builds them ahead of the
// guests (harness/prepare.ts) read one list.
export { JVM_ROOTFS_PACKAGES } from './java.js';

/** role-systemd: ansible-core runs the playbook; its apt module installs a .deb through python3-apt. */
export const ROLE_ROOTFS_PACKAGES = ['ansible-core', 'python3-apt'];

/** quiet-cores: irqbalance as Debian ships it, ip and ping for the NICs, modprobe for the driver rebind. */
export const QUIET_CORES_ROOTFS_PACKAGES = ['irqbalance', 'iproute2', 'iputils-ping', 'kmod'];
