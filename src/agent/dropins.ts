// Where `systemctl set-property` and `systemctl revert` leave their mark: the drop-in directories of
// set-property, `/run/systemd/system.control/UNIT.d/` (--runtime) and `/etc/systemd/system.control/
// UNIT.d/` (persistent). The agent reuses systemd's last answer while the cgroup tree reads the same
// (ops/systemd-memo.ts); a property systemd keeps but no cgroup file shows (a unit that is not running,
// a value set again to what it was) changes a file here, and inotify says so at once: the answer is
// forgotten and a round asks again, instead of waiting out the memo's age bound.
import { type Dirent, existsSync, type FSWatcher, readdirSync, watch } from 'node:fs';
import path from 'node:path';

/** set-property's drop-in roots, relative to the host root. */
export const CONTROL_DIRS = ['run/systemd/system.control', 'etc/systemd/system.control'] as const;

export class DropInWatch {
  private readonly watchers = new Map<string, FSWatcher>();
  /** The directories must be listed again: at first, and after a change in a control directory. */
  private stale = true;

  constructor(
    private readonly root: string,
    /** Called on every change of a drop-in directory (a file or a unit's directory made, changed, removed). */
    private readonly changed: () => void,
  ) {}

  /**
   * After a round on a host that systemd runs: watch each control directory and every unit's
   * directory in it. Nothing is read while nothing changed, but for a control directory that is not
   * there yet (systemd makes it at the first set-property): one access(2) a round until it is.
   */
  refresh(): void {
    for (const rel of CONTROL_DIRS) {
      const dir = path.join(this.root, rel);
      if (!this.watchers.has(dir) && existsSync(dir) && this.watch(dir, true)) this.stale = true;
    }
    if (!this.stale) return;
    this.stale = false;
    const wanted = new Set<string>();
    for (const rel of CONTROL_DIRS) {
      const dir = path.join(this.root, rel);
      if (!this.watchers.has(dir)) continue;
      let entries: Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        continue; // Removed: its watch is dropped below, and made again once it is back.
      }
      wanted.add(dir);
      for (const e of entries) {
        if (!e.isDirectory()) continue;
        const unitDir = path.join(dir, e.name);
        wanted.add(unitDir);
        this.watch(unitDir, false);
      }
    }
    // What is gone: a unit's directory that `systemctl revert` removed, or a control directory.
    for (const [dir, w] of this.watchers) {
      if (!wanted.has(dir)) {
        w.close();
        this.watchers.delete(dir);
      }
    }
  }

  /** The directories watched now (tests). */
  get watched(): string[] {
    return [...this.watchers.keys()].sort();
  }

  close(): void {
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }

  private watch(dir: string, control: boolean): boolean {
    if (this.watchers.has(dir)) return true;
    try {
      const w = watch(dir, { persistent: false }, () => {
        // A unit's directory made or removed in a control directory: list them again next round.
        if (control) this.stale = true;
        this.changed();
      });
      w.on('error', () => {
        w.close();
        this.watchers.delete(dir);
        this.stale = true;
        this.changed();
      });
      this.watchers.set(dir, w);
      return true;
    } catch {
      // Gone between the look and the watch: listed again next round.
      this.stale = true;
      return false;
    }
  }
}
