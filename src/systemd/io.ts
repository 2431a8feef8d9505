// A unit's io properties (IODeviceLatencyTargetSec=, IODeviceWeight=, the four caps): per-device
// lists of which isolate sets one device's entry. Whether the kernel has the entry systemd holds, and
// one entry put back as it was: systemd cannot drop one entry of a list, so undo sets the whole list
// (the latency list over D-Bus) and reads it back.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { StepError, type UndoResult } from '../apply/executor.js';
import {
  IO_PROPERTY_SHOWN,
  IOLATENCY_OPTION,
  type IoProperty,
  ioClear,
  ioDeviceOf,
  ioEntries,
  ioEntryOf,
  ioLineOf,
  ioSatisfies,
  parseTimespan,
  sameIoEntry,
} from '../model/io.js';
import type { Change } from '../model/plan.js';
import { readLiveSync } from '../sys/read.js';
import { writeKernelFile } from '../sys/write.js';
import { type PathUsec, setUnitPathUsecList, systemctl } from './systemctl.js';
import { errCodeOf, type Units } from './unit.js';

/** The io.max key each cap property sets. */
const IO_CAP_KEY = {
  IOReadBandwidthMax: 'rbps',
  IOWriteBandwidthMax: 'wbps',
  IOReadIOPSMax: 'riops',
  IOWriteIOPSMax: 'wiops',
} as const;

/** USEC_INFINITY, as D-Bus carries an unlimited latency target. */
const UINT64_MAX = '18446744073709551615';

/**
 * Why a unit's io.latency / io.max is absent: io not enabled there (no io.stat, which every cgroup
 * with io has), or enabled but the kernel built without that policy.
 */
export function ioFileMissing(dir: string, file: 'io.latency' | 'io.max'): string {
  if (readLiveSync(path.join(dir, 'io.stat')) === null)
    return `io is not enabled in ${path.dirname(dir)}'s cgroup.subtree_control`;
  const option = file === 'io.latency' ? IOLATENCY_OPTION : 'CONFIG_BLK_DEV_THROTTLING';
  return `io is enabled there (io.stat exists) but this kernel has no ${file}: it is built without ${option}`;
}

/** One device's entry of a unit's io list: in force or not, and put back. */
export class IoEntries {
  constructor(private readonly units: Units) {}

  /**
   * Whether the kernel has a latency target or cap systemd holds: its line in the unit's io.latency /
   * io.max (systemd logs a write it cannot make, such as a device gone, and carries on). A weight is not
   * compared: systemd scales it for io.bfq.weight. Null when the unit runs nowhere or the file is absent.
   */
  async notInForce(change: Change, live: string | null): Promise<string | null> {
    const path_ = ioDeviceOf(change.to);
    const dev = /^\/dev\/block\/(\d+:\d+)$/.exec(path_)?.[1];
    if (!dev || change.setting === 'IODeviceWeight' || !live) return null;
    const dir = await this.units.cgroupDirOf(change.target);
    if (dir === null) return null;
    const file = change.setting === 'IODeviceLatencyTargetSec' ? 'io.latency' : 'io.max';
    const text = readLiveSync(path.join(dir, file));
    if (text === null) return `${file} does not exist in ${dir} (${ioFileMissing(dir, file)})`;
    const line = ioLineOf(file, text, dev);
    const value = live.split(/\s+/).slice(1).join(' ');
    const want =
      file === 'io.latency'
        ? `${dev} target=${parseTimespan(value) === 'infinity' ? 'max' : parseTimespan(value)}`
        : `${dev} ${IO_CAP_KEY[change.setting as Exclude<IoProperty, 'IODeviceLatencyTargetSec' | 'IODeviceWeight'>]}=${value === 'infinity' ? 'max' : value}`;
    return ioSatisfies(file, line, want) ? null : `${file} reads "${line}" for ${dev}`;
  }

  /**
   * One device's entry back as it was. systemd cannot drop a single entry of a list, and an entry it
   * drops stays in the kernel (it writes only the entries it has): a latency target or cap that was not
   * there is first set to infinity (systemd writes target=max / max), then the list is set again without
   * it; a weight, which has no infinity, is cleared in the unit's io.weight / io.bfq.weight directly
   * ("MAJ:MIN default"), which systemd, holding no entry for it, never writes again.
   */
  async undo(change: Change, previous: string | null): Promise<UndoResult> {
    const setting = change.setting as IoProperty;
    const dev = ioDeviceOf(change.to);
    const set = (...values: string[]) =>
      systemctl(['set-property', '--runtime', '--', change.target, ...values.map((v) => `${setting}=${v}`)]);
    if (previous) {
      await set(previous);
      await this.readBack(change, new Map([[dev, previous]]));
      return {};
    }
    const props = await this.units.show(change.target, IO_PROPERTY_SHOWN[setting]);
    if (props?.LoadState !== 'loaded') return {};
    this.units.remember(change.target, props);
    if (setting !== 'IODeviceWeight') await set(`${dev} infinity`);
    const others = ioEntries(props[IO_PROPERTY_SHOWN[setting]]).filter((e) => ioDeviceOf(e) !== dev);
    // systemd 252's systemctl refuses the empty IODeviceLatencyTargetSec= (seen in the guest; the caps'
    // and IODeviceWeight='s empty assignments work): that list is given whole over D-Bus instead.
    if (setting === 'IODeviceLatencyTargetSec') await this.setLatencyList(change.target, others);
    else await set('', ...others);
    // The device without an entry, every other device's entry as it was.
    await this.readBack(
      change,
      new Map([[dev, ''], ...others.map((e): [string, string] => [ioDeviceOf(e), e])]),
    );
    // systemd names the drop-in after the D-Bus property (50-IODeviceLatencyTargetUSec.conf).
    if (others.length === 0)
      rmSync(this.units.runtimeDropIn(change.target, IO_PROPERTY_SHOWN[setting]), { force: true });
    if (setting !== 'IODeviceWeight') return {};
    return this.clearWeight(change.target, dev);
  }

  /**
   * A weight's line cleared in the unit's io.weight / io.bfq.weight ("MAJ:MIN default"): systemd,
   * holding no entry for the device any more, never writes it again.
   */
  private async clearWeight(unit: string, dev: string): Promise<UndoResult> {
    const majMin = /^\/dev\/block\/(\d+:\d+)$/.exec(dev)?.[1];
    const dir = await this.units.cgroupDirOf(unit);
    if (!majMin || dir === null) return {};
    for (const file of ['io.weight', 'io.bfq.weight'] as const) {
      const f = path.join(dir, file);
      const text = readLiveSync(f);
      if (text === null || ioLineOf(file, text, majMin) === ioClear(file, majMin)) continue;
      try {
        await writeKernelFile(f, Buffer.from(ioClear(file, majMin)));
      } catch (err) {
        return {
          note: `${unit}: ${file} keeps its line for ${majMin} (${errCodeOf(err)}); systemd has no way to clear one device's weight`,
        };
      }
    }
    return {};
  }

  /**
   * Read a unit's io list back after an undo, as every other systemd undo is (commitUndo): each device's
   * entry must be what was wanted ('' for none; an unlimited entry is none). systemd answers a
   * set-property it does not apply (a later drop-in of the operator's sets the list) with success.
   * A unit not loaded any more holds nothing of isolate's.
   */
  private async readBack(change: Change, wanted: ReadonlyMap<string, string>): Promise<void> {
    const setting = change.setting as IoProperty;
    const shown = IO_PROPERTY_SHOWN[setting];
    const props = await this.units.show(change.target, shown);
    if (props?.LoadState !== 'loaded') return;
    const wrong: string[] = [];
    for (const [dev, want] of wanted) {
      const seen = ioEntryOf(props[shown], dev);
      if (sameIoEntry(setting, seen, want)) continue;
      wrong.push(
        `${change.target} ${setting} for ${dev}: wanted ${want ? `"${want}"` : 'no entry'}, systemd shows ${seen ? `"${seen}"` : 'no entry'}`,
      );
    }
    if (wrong.length > 0)
      throw new StepError(`undo not in force: ${wrong.join('; ')} (another drop-in sets it?)`);
  }

  /** A unit's whole latency target list ("/dev/sdc 50ms" entries, as shown) through D-Bus, in µs. */
  private async setLatencyList(unit: string, shown: readonly string[]): Promise<void> {
    const entries = shown.map((e): PathUsec => {
      const [p = '', ...rest] = e.split(/\s+/);
      const usec = parseTimespan(rest.join(' '));
      if (usec === null || !p.startsWith('/'))
        throw new StepError(
          `${unit}: cannot restore IODeviceLatencyTargetSec entry "${e}" (not a path and a timespan)`,
        );
      return [p, usec === 'infinity' ? UINT64_MAX : String(usec)];
    });
    await setUnitPathUsecList(unit, IO_PROPERTY_SHOWN.IODeviceLatencyTargetSec, entries);
  }
}
