// Plan changes as the one-line strings tests compare whole: what changes, on which target, from what to what.
import type { Change } from '../../src/model/plan.js';

/** The changes whose setting starts with `prefix` ('io.', 'blkio.'), as "target setting from -> to". */
export function changeLines(changes: Change[], prefix: string): string[] {
  return changes
    .filter((c) => c.setting.startsWith(prefix))
    .map((c) => `${c.target} ${c.setting} ${c.from} -> ${c.to}`);
}
