// The systemd backend: a unit's CPUs and memory are changed through systemd (`systemctl
// set-property --runtime`, drop-ins under /run/systemd/system.control/), never by writing the
// unit's cgroup files, which systemd rewrites on every reload. Rollback removes exactly the
// drop-ins isolate created.
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { type ChangeExecutor, StepError } from '../apply/executor.js';
import { CpuSet } from '../model/cpuset.js';
import { UserError } from '../model/errors.js';
import type { Change } from '../model/plan.js';
import { systemdRuns } from './observe.js';
import { parseShow, systemctl } from './systemctl.js';

/** Where `set-property --runtime` writes: systemd's own naming (50-<Property>.conf). */
export function runtimeDropIn(unit: string, property: string): string {
  return path.join('/run/systemd/system.control', `${unit}.d`, `50-${property}.conf`);
}

/** Values as systemd means them: CPU lists as sets, sizes as bytes with `infinity`. */
export function sameProperty(property: string, a: string | null, b: string | null): boolean {
  if (a === null || b === null) return a === b;
  if (property === 'AllowedCPUs' || property === 'AllowedMemoryNodes') {
    try {
      return CpuSet.parse(a).equals(CpuSet.parse(b));
    } catch {
      return a.trim() === b.trim();
    }
  }
  const norm = (v: string) => (v === 'max' ? 'infinity' : v === '[not set]' ? '' : v.trim());
  return norm(a) === norm(b);
}

export class SystemdExecutor implements ChangeExecutor {
  constructor(readonly root: string) {}

  async ready(): Promise<void> {
    if (!systemdRuns(this.root)) {
      throw new UserError(
        'cannot apply: the plan changes systemd units, but systemd does not run this host (or --root is not /); plan again on the host itself',
        1,
      );
    }
  }

  async read(change: Change): Promise<string | null> {
    const [props] = parseShow(
      await systemctl(['show', '-p', change.setting, '-p', 'LoadState', '--', change.target]),
    );
    if (props?.LoadState !== 'loaded') return null;
    return props[change.setting] ?? null;
  }

  satisfied(change: Change, live: string | null): boolean {
    return sameProperty(change.setting, live, change.to);
  }

  same(change: Change, a: string | null, b: string | null): boolean {
    return sameProperty(change.setting, a, b);
  }

  async apply(change: Change): Promise<{ skipped?: string }> {
    await systemctl(['set-property', '--runtime', '--', change.target, `${change.setting}=${change.to}`]);
    const now = await this.read(change);
    if (!this.satisfied(change, now)) {
      throw new StepError(
        `systemctl set-property ${change.target} ${change.setting}=${change.to}: systemd reports "${now ?? '(unit not loaded)'}" afterwards`,
      );
    }
    return {};
  }

  async undo(change: Change, previous: string | null): Promise<{ note?: string }> {
    const dropIn = runtimeDropIn(change.target, change.setting);
    const unset = previous === null || previous === '' || previous === '[not set]';
    if (unset && existsSync(dropIn)) {
      // The property was not set before: remove isolate's drop-in rather than pinning a value.
      rmSync(dropIn, { force: true });
      await systemctl(['daemon-reload']);
      return {};
    }
    if (previous === null) return { note: `${change.target} was not loaded before; left as is` };
    await systemctl(['set-property', '--runtime', '--', change.target, `${change.setting}=${previous}`]);
    return {};
  }
}
