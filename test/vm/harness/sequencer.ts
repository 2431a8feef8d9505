/**
 * The order the files start in: vitest's own (failed, then longest last time, then largest first), but
 * the longest guests always first (harness/guest-order.ts says why): on a fresh clone vitest knows no
 * durations and orders by file size, which put role-systemd last but one.
 */
import { relative } from 'node:path';
import type { TestSpecification } from 'vitest/node';
import { BaseSequencer } from 'vitest/node';
import { guestRank } from './guest-order.js';

export class LongestGuestsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => guestRank(relative(this.ctx.config.root, f.moduleId));
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
