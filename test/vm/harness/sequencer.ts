/**
 * The order the files start in: vitest's own (failed, then longest last time, then largest first), but
 * the longest guests always first. Two guests run at a time (harness/slots.ts): started last, the
 * longest one (role-systemd, ~10 minutes) would run alone at the end while the other core idles — on a
 * fresh clone vitest knows no durations and orders by file size, which put it last but one.
 */
import { relative } from 'node:path';
import type { TestSpecification } from 'vitest/node';
import { BaseSequencer } from 'vitest/node';

/** Guest files, longest first (the guests' measured times: test/vm/README.md). */
export const LONGEST_GUESTS = [
  'test/vm/role-systemd.test.ts',
  'test/vm/quiet-cores.test.ts',
  'test/vm/systemd-rollback.test.ts',
  'test/vm/systemd-jvm.test.ts',
  'test/vm/cgroupv1.test.ts',
  'test/vm/systemd-strict.test.ts',
];

export class LongestGuestsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = LONGEST_GUESTS.indexOf(relative(this.ctx.config.root, f.moduleId));
      return i < 0 ? LONGEST_GUESTS.length : i;
    };
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
