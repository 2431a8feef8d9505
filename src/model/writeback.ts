// Facts about buffered writeback, read from the host: how much dirty page cache the kernel lets
// build up before writers are throttled (vm.dirty_*), and writeback throttling per disk (wbt).

/** The host's vm.dirty_* sysctls; null: that file could not be read (said in `problems`). */
export interface VmDirty {
  /** Percent of dirtyable memory a writer may dirty before it is made to write back itself. */
  ratio: number | null;
  /** The same limit in bytes; when non-zero it replaces `ratio` (the kernel keeps only one). */
  bytes: number | null;
  /** Percent from which background writeback starts. */
  backgroundRatio: number | null;
  backgroundBytes: number | null;
  problems: string[];
}

/** A disk's writeback throttling: `usec` 0 is off; absent: the kernel has no wbt (CONFIG_BLK_WBT). */
export type WbtState =
  | { state: 'set'; file: string; usec: number }
  | { state: 'absent'; file: string }
  | { state: 'unknown'; file: string; problem: string };
