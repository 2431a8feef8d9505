// systemd's view of the units behind the policy's cgroups. Only on the live host with systemd as its
// service manager: under another --root there is no systemd to ask, and cgroupfs is used as before.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { ObservedSystemd } from '../model/observed.js';
import { IO_PROPERTY_SHOWN } from '../model/io.js';
import { SYSTEMD_PROPERTY } from '../model/systemd.js';
import { parseShow, systemctl } from './systemctl.js';

/** What the planner diffs against: the SYSTEMD_PROPERTY ones and the per-device io properties (as shown). */
export const PROPERTIES = [...Object.values(SYSTEMD_PROPERTY), ...Object.values(IO_PROPERTY_SHOWN)];

/** True when `root` is this host and systemd runs it (sd_booted(3): /run/systemd/system exists). */
export function systemdRuns(root: string): boolean {
  return path.resolve(root) === '/' && existsSync('/run/systemd/system');
}

export async function observeSystemd(
  root: string,
  units: readonly string[],
): Promise<ObservedSystemd | undefined> {
  if (!systemdRuns(root)) return undefined;
  const v = await systemctl(['--version'])
    .then((t) => Number(/systemd (\d+)/.exec(t)?.[1] ?? Number.NaN))
    .catch(() => Number.NaN);
  const out: ObservedSystemd = { version: Number.isNaN(v) ? null : v, units: {} };
  const names = [...new Set(units)].sort();
  if (names.length === 0) return out;
  // Slice (configured, effective at the next start) against ControlGroup (where it runs now) tells a
  // pending move into a dedicated slice; Delegate marks a subtree systemd leaves to the unit; ActiveState
  // says whether an anchor slice (model/systemd.ts anchorSliceFor) is started.
  const props = [
    'Id',
    'LoadState',
    'ActiveState',
    'Slice',
    'ControlGroup',
    'Delegate',
    // The JVM options drop-in merges with the unit's own value of the variable (model/jvm-options.ts).
    'Environment',
    'EnvironmentFiles',
    ...PROPERTIES,
  ].flatMap((p) => ['-p', p]);
  for (const block of parseShow(await systemctl(['show', ...props, '--', ...names]))) {
    // A unit systemd cannot load is not one it manages; its cgroup (if any) stays with cgroupfs.
    if (block.Id && block.LoadState === 'loaded') out.units[block.Id] = block;
  }
  return out;
}
