// inotify on the workloads' cgroup files: the agent reconciles as soon as one changes.
import { existsSync, type FSWatcher, watch } from 'node:fs';
import { cgroupDir } from '../cgroup/fsutil.js';
import type { Allocation } from '../model/plan.js';

/**
 * The kernel says sooner than the next round: `cgroup.events` when a watched cgroup gains or loses
 * processes, and an inotify IN_MODIFY on a cpuset file when anyone writes it (the VFS reports every
 * write(2), cgroupfs included) — a hand-made write or systemd's re-realization is corrected at
 * once, not at the next round. The agent's own writes wake it too: one extra round that finds
 * nothing to do.
 */
const WATCHED_FILES = ['cgroup.events', 'cpuset.cpus', 'cpuset.mems', 'cpuset.cpus.partition'];

export function watchWorkloads(
  root: string,
  a: Allocation,
  watchers: Map<string, FSWatcher>,
  nudge: () => void,
): void {
  for (const w of a.workloads) {
    for (const name of WATCHED_FILES) {
      const file = `${cgroupDir(root, w.target)}/${name}`;
      // Not there yet (a workload that does not run, a controller not enabled): a failed watch
      // costs an exception every round, a look costs one access(2).
      if (watchers.has(file) || !existsSync(file)) continue;
      try {
        const watcher = watch(file, { persistent: false }, (event) => {
          // The cgroup went away (a unit restarted into a fresh one): watch its successor next round.
          if (event === 'rename') {
            watcher.close();
            watchers.delete(file);
          }
          nudge();
        });
        watcher.on('error', () => {
          watcher.close();
          watchers.delete(file);
        });
        watchers.set(file, watcher);
      } catch {
        // Gone between the look and the watch, or not watchable: try again next round.
      }
    }
  }
}
