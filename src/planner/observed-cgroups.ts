// What the kernel and systemd hold for a cgroup of a cgroup v2 host, as the planner diffs against it
// (changes.ts): a cgroup's files, its unit, and whether systemd owns it or hands it on. A unit's CPU
// list systemd holds but the kernel lacks is judged in held-not-in-force.ts, as its io entries are.
import type { ObservedGroup, ObservedState } from '../model/observed.js';
import type { CgroupSetting } from '../model/plan.js';
import {
  fromSystemdValue,
  SYSTEMD_PROPERTY,
  type SystemdManagedFile,
  unitOfCgroup,
} from '../model/systemd.js';
import { cpusetNotInForce } from './held-not-in-force.js';
import { ancestors } from './targets.js';

export class ObservedCgroups {
  /** False when the cgroup tree cannot be read here: nothing is known, so every write is planned. */
  readonly known: boolean;
  // Unit properties systemd holds but could not write into the unit's running cgroup: not in force.
  private readonly unrealised = new Map<string, string>();

  constructor(readonly observed: ObservedState) {
    this.known = observed.cgroup.layout === 'unified';
  }

  get systemd(): ObservedState['systemd'] {
    return this.observed.systemd;
  }

  group(path: string): ObservedGroup | undefined {
    return this.observed.cgroup.groups[path];
  }

  exists(path: string): boolean {
    return !this.known || this.group(path)?.exists === true;
  }

  // Where systemd runs the host, the cgroups of its units are changed through their unit
  // properties (systemd rewrites their files on every reload); diff against what systemd holds.
  unitFor(path: string): string | null {
    const unit = path === '/' ? null : unitOfCgroup(path);
    return unit && this.systemd?.units[unit] ? unit : null;
  }

  /** A file's value now: systemd's property for a unit's managed file, else the kernel's file. */
  value(path: string, file: string): string | null {
    if (!this.known) return null;
    const unit = this.unitFor(path);
    if (unit && file in SYSTEMD_PROPERTY) return this.held(path, unit, file as SystemdManagedFile);
    if (path === '/' && file === 'cgroup.subtree_control')
      return this.observed.cgroup.rootSubtreeControl.join(' ');
    return this.group(path)?.values[file] ?? null;
  }

  /** What systemd holds for a unit's file; null (and noted as not in force) when the kernel differs. */
  private held(path: string, unit: string, f: SystemdManagedFile): string | null {
    const held = fromSystemdValue(f, this.systemd!.units[unit]![SYSTEMD_PROPERTY[f]] ?? '');
    if (f === 'cpuset.cpus' || f === 'cpuset.mems') {
      const why = cpusetNotInForce(path, f, held, this.group(path));
      if (why !== null) {
        this.unrealised.set(`${path} ${f}`, why);
        return null;
      }
    }
    return held;
  }

  /** Why a unit property must be set again though systemd holds it (read by value() first), if so. */
  notInForce(path: string, setting: CgroupSetting): string | undefined {
    return this.unrealised.get(`${path} ${setting}`);
  }

  // A unit with Delegate=yes hands its subtree (and its own cgroup.subtree_control) to its process,
  // e.g. YARN's NodeManager: systemd never rewrites anything there, so cgroupfs writes below it last.
  delegated(path: string): boolean {
    const unit = this.unitFor(path);
    return unit !== null && this.systemd!.units[unit]!.Delegate === 'yes';
  }

  systemdOwned(path: string): boolean {
    if (!this.known) return false;
    if (ancestors(path).some((p) => this.delegated(p))) return false;
    return [...ancestors(path), path].some((p) => this.group(p)?.ownedBySystemd);
  }
}
