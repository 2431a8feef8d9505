// Devices with a NUMA node: NICs, whole disks and SCSI hosts (with their driver), each placed on
// the node its nearest PCI parent names.
import { existsSync, realpathSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { byNatural } from '../model/order.js';
import type { Device } from '../model/topology.js';
import { type SysfsReader, sysfsText } from './sysfs-reader.js';

/** Walk up from a device directory to the nearest `numa_node` file (PCI parents carry it). */
function deviceNode(fs: SysfsReader, rel: string, sysReal: string): number | null {
  let dir: string;
  try {
    dir = realpathSync.native(fs.path(rel));
  } catch {
    return null;
  }
  for (let i = 0; i < 12 && dir.startsWith(`${sysReal}/`); dir = dirname(dir), i++) {
    const text = sysfsText(`${dir}/numa_node`);
    if (text === null) continue;
    if (!/^-?\d+$/.test(text))
      throw fs.bad(`${relative(fs.root, dir)}/numa_node`, new Error(`expected an integer, found "${text}"`));
    const n = Number(text);
    return n < 0 ? null : n;
  }
  return null;
}

export function readDevices(fs: SysfsReader): Device[] {
  const out: Device[] = [];
  let sysReal: string;
  try {
    sysReal = realpathSync.native(fs.path('sys'));
  } catch {
    return out;
  }
  for (const name of fs.entries('sys/class/net').sort()) {
    if (!existsSync(fs.path(`sys/class/net/${name}/device`))) continue; // lo, bridges, veth: no hardware
    out.push({ kind: 'nic', name, node: deviceNode(fs, `sys/class/net/${name}/device`, sysReal) });
  }
  for (const name of fs.entries('sys/class/block').sort()) {
    const base = `sys/class/block/${name}`;
    if (existsSync(fs.path(`${base}/partition`))) continue;
    if (!existsSync(fs.path(`${base}/device`))) continue; // loop, ram, dm-*: virtual
    out.push({ kind: 'disk', name, node: deviceNode(fs, `${base}/device`, sysReal) });
  }
  for (const name of fs.entries('sys/class/scsi_host').sort(byNatural)) {
    const base = `sys/class/scsi_host/${name}`;
    const driver = fs.text(`${base}/proc_name`) ?? undefined;
    const node = existsSync(fs.path(`${base}/device`)) ? deviceNode(fs, `${base}/device`, sysReal) : null;
    out.push({ kind: 'scsi', name, node, driver: driver || undefined });
  }
  return out;
}
