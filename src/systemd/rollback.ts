// The rollback commit: every undo staged since the last commit (a drop-in removed: a property's
// runtime one, a Slice= or JVM options drop-in, irqbalance's ban) put in force by one daemon-reload,
// then read back. Before the reload the cpusets systemd would leave fenced are widened; after it,
// isolate's emptied slices are pruned, irqbalance restarted once, and the widened cgroups checked.
import { readdirSync, rmSync } from 'node:fs';
import { rmdir } from 'node:fs/promises';
import path from 'node:path';
import { StepError } from '../apply/executor.js';
import { IRQBALANCE_SETTING, IRQBALANCE_UNIT, showIrqbalanceValue } from '../model/irqbalance.js';
import { JVM_OPTIONS_SETTING } from '../model/jvm-options.js';
import type { Change } from '../model/plan.js';
import { slicePath } from '../model/systemd.js';
import { isDirLiveSync, readLiveSync, readTrimSync } from '../sys/read.js';
import { restored, sameProperty } from './properties.js';
import { parseShow, systemctl } from './systemctl.js';
import {
  cgroupDir,
  errCodeOf,
  type StagedUndo,
  type StagedUndos,
  type UnitReader,
  type Units,
} from './unit.js';

/** Every CPU (memory node) the kernel has online: what an unset AllowedCPUs= (AllowedMemoryNodes=) allows. */
const ONLINE_FILE: Record<string, string> = {
  AllowedCPUs: 'sys/devices/system/cpu/online',
  AllowedMemoryNodes: 'sys/devices/system/node/online',
};

interface Widened {
  unit: string;
  setting: string;
}

/** A staged undo's property as systemd reports it after the reload, when it is not as it was. */
function notRestored(change: Change, previous: string | null, after: string | null): string {
  if (change.setting === 'Slice') return `${change.target} Slice=${after} (was ${previous})`;
  if (change.setting === JVM_OPTIONS_SETTING)
    return `${change.target} Environment "${after}" (was "${previous}")`;
  return `${IRQBALANCE_UNIT} reads ${after ? `isolate's ban ${showIrqbalanceValue(after)}` : 'no ban of isolate'} (was ${previous ? showIrqbalanceValue(previous) : 'none'})`;
}

/** The one daemon-reload of a rollback batch, and everything read back around it. */
export class RollbackCommit {
  constructor(
    private readonly units: Units,
    private readonly staged: StagedUndos,
    /** The backend's own reads (irqbalance's ban included), in the order the executor makes them. */
    private readonly reader: UnitReader,
  ) {}

  /**
   * One daemon-reload for every drop-in removed since the last commit (each reload costs ~10 s under
   * TCG and re-realizes every cgroup on a real host), then each undone property read back.
   */
  async commit(): Promise<string[]> {
    const batch = this.staged.take();
    if (batch.length === 0) return [];
    const widened = await this.widenCpusets(batch);
    await systemctl(['daemon-reload']);
    const wrong = await this.readBack(batch);
    if (wrong.length > 0) {
      throw new StepError(
        `after removing isolate's drop-ins and daemon-reload systemd still reports ${wrong.join(', ')} (another drop-in sets it?)`,
      );
    }
    const notes = await this.pruneSlices(batch);
    // irqbalance reads its environment only at start: once, after the reload that dropped isolate's file.
    if (batch.some((b) => b.change.setting === IRQBALANCE_SETTING)) {
      await systemctl(['try-restart', '--', IRQBALANCE_UNIT]);
    }
    const narrow: string[] = [];
    for (const w of widened) {
      const why = await this.kernelNarrower(w);
      if (why) narrow.push(why);
    }
    if (narrow.length > 0) {
      throw new StepError(
        `after rollback the kernel still fences ${narrow.join(', ')}; run "systemctl set-property --runtime UNIT ${widened[0]?.setting ?? 'AllowedCPUs'}=<all>" for it, then remove its /run/systemd/system.control drop-in and daemon-reload`,
      );
    }
    return notes;
  }

  /** Each staged undo read back after the reload: what systemd still reports otherwise than before. */
  private async readBack(batch: StagedUndo[]): Promise<string[]> {
    const wrong: string[] = [];
    const afters = await this.reader.readMany(batch.map((b) => b.change));
    for (const [i, { change, previous }] of batch.entries()) {
      const after = afters[i] ?? null;
      if (restored(change, previous, after)) continue;
      if (
        change.setting === 'Slice' ||
        change.setting === JVM_OPTIONS_SETTING ||
        change.setting === IRQBALANCE_SETTING
      ) {
        wrong.push(notRestored(change, previous, after));
        continue;
      }
      // systemd 252 keeps init.scope's (a perpetual unit's) runtime properties across a reload even
      // with their drop-in gone: set the old value through systemd, then drop the file that wrote.
      const value = previous === '[not set]' ? '' : (previous ?? '');
      await systemctl(['set-property', '--runtime', '--', change.target, `${change.setting}=${value}`]);
      rmSync(this.units.runtimeDropIn(change.target, change.setting), { force: true });
      const now = await this.reader.read(change);
      if (!restored(change, previous, now))
        wrong.push(`${change.target} ${change.setting}=${now} (was ${previous})`);
    }
    return wrong;
  }

  /**
   * After the reload, what systemd leaves of isolate's slices. A slice that is inactive now but has an
   * (empty) cgroup got it when isolate set its properties (systemd realizes a unit's cgroup on
   * set-property even when it is not started: kafka.slice, user.slice on a host nobody logged into,
   * machine.slice, the stopped anchor); the cgroup keeps the controllers systemd enabled in it then
   * (kafka.slice: cpuset, which keeps the root's cpuset enabled: EBUSY). No unit runs in an inactive
   * slice, so its empty leaf cgroup is removed (rmdir; the kernel refuses one with processes or
   * children); systemd makes it again when the slice starts. A unit moved into its own slice that has
   * not restarted since still runs there: named, with what its restart will do.
   */
  private async pruneSlices(batch: StagedUndo[]): Promise<string[]> {
    const notes = await this.stillInSlice(batch);
    const slices = [...new Set(batch.map((b) => b.change.target).filter((u) => u.endsWith('.slice')))].sort();
    for (const unit of slices) {
      const cg = slicePath(unit);
      const dir = cgroupDir(this.units.root, cg);
      if (cg === '/' || !isDirLiveSync(dir)) continue;
      const events = readLiveSync(path.join(dir, 'cgroup.events'));
      if (events === null || !/^populated 0$/m.test(events)) continue;
      if (readdirSync(dir, { withFileTypes: true }).some((e) => e.isDirectory())) continue;
      const [props] = parseShow(await systemctl(['show', '-p', 'ActiveState', '--', unit]));
      if (props?.ActiveState !== 'inactive') continue;
      try {
        await rmdir(dir);
      } catch (err) {
        notes.push(
          `systemd keeps the empty cgroup ${cg} of the inactive ${unit} (made when its properties were set; rmdir: ${errCodeOf(err)}); nothing runs in it and isolate's values are gone`,
        );
      }
    }
    return notes;
  }

  /** Each unit whose Slice= was undone but which still runs in isolate's slice until its restart. */
  private async stillInSlice(batch: StagedUndo[]): Promise<string[]> {
    const notes: string[] = [];
    for (const { change, previous } of batch) {
      if (change.setting !== 'Slice') continue;
      const [props] = parseShow(await systemctl(['show', '-p', 'ControlGroup', '--', change.target]));
      const cg = props?.ControlGroup ?? '';
      const home = slicePath(change.to);
      if (!cg.startsWith(`${home}/`)) continue;
      const back = path.posix.join(slicePath(previous || 'system.slice'), change.target);
      notes.push(
        `${change.target} runs in ${cg} until its next restart (systemctl restart ${change.target}), then in ${back} again; ${home} stays (systemd keeps the empty ${change.to} after that restart: systemctl stop ${change.to} removes it)`,
      );
    }
    return notes;
  }

  /**
   * systemd 252 does not write a unit's cpuset file back when AllowedCPUs=/AllowedMemoryNodes=
   * disappears (neither at daemon-reload nor on `set-property UNIT AllowedCPUs=` with an empty
   * value): the cgroup kept isolate's fence (system.slice 0-1,4-7) after every drop-in was gone. So
   * before the reload, each such unit is first given every online CPU (memory node) through systemd,
   * which writes that list into cpuset.cpus itself, and the drop-in set-property wrote is removed
   * again. The kernel file then holds every online CPU rather than the empty list it had before
   * isolate: the same while those CPUs are online (an empty list inherits the parent's effective set,
   * and a full list is cut to it), only a CPU hot-added later would not be inherited.
   * Needs no reload of its own: set-property is in force at once. Returns what was widened.
   */
  private async widenCpusets(batch: StagedUndo[]): Promise<Widened[]> {
    const out: Widened[] = [];
    // On hosts (and test roots) without the online file there is nothing to widen to. Each file is
    // read once for the batch (a strict rollback widens a dozen units to the same CPU list).
    const online = new Map<string, string | null>();
    const allOf = (file: string) => {
      if (!online.has(file)) online.set(file, readTrimSync(path.join(this.units.root, file)));
      return online.get(file) ?? null;
    };
    const fenced = batch.flatMap(({ change }) => {
      const file = ONLINE_FILE[change.setting];
      const all = file === undefined ? null : allOf(file);
      return all ? [{ change, all }] : [];
    });
    const live = await this.reader.readMany(fenced.map((f) => f.change));
    for (const [i, { change, all }] of fenced.entries()) {
      // Also a unit not loaded before isolate (kafka.slice): until Kafka restarts it still runs there.
      if (live[i] === null) continue; // unloaded now: no cgroup left to fence
      // No cgroup (a stopped anchor slice): nothing to widen, and a set-property would make one.
      const cg = this.units.cgroupSeen(change.target);
      if (!cg?.startsWith('/') || !isDirLiveSync(cgroupDir(this.units.root, cg))) continue;
      await systemctl(['set-property', '--runtime', '--', change.target, `${change.setting}=${all}`]);
      rmSync(this.units.runtimeDropIn(change.target, change.setting), { force: true });
      out.push({ unit: change.target, setting: change.setting });
    }
    return out;
  }

  /**
   * Read back from the kernel that a widened unit's cgroup no longer narrows its parent's set:
   * its cpuset.*.effective equals the parent's. A description when it does not; null when it does
   * or when there is nothing to read (no cgroup, cpuset not enabled there).
   */
  private async kernelNarrower(w: Widened): Promise<string | null> {
    const [props] = parseShow(
      await systemctl(['show', '-p', 'ControlGroup', '-p', 'LoadState', '--', w.unit]),
    );
    const cg = props?.ControlGroup;
    if (props?.LoadState !== 'loaded' || !cg || !cg.startsWith('/')) return null;
    const file = w.setting === 'AllowedCPUs' ? 'cpuset.cpus.effective' : 'cpuset.mems.effective';
    const own = readTrimSync(path.join(cgroupDir(this.units.root, cg), file));
    const parent = readTrimSync(path.join(cgroupDir(this.units.root, path.posix.dirname(cg)), file));
    if (own === null || parent === null) return null;
    if (sameProperty(w.setting, own, parent)) return null;
    return `${cgroupDir('/', cg)}/${file}=${own || '""'} (parent's ${parent || '""'}; ${w.unit} ${w.setting}=)`;
  }
}
