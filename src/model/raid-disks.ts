// A workload's disk tied to the RAID logical drive the vendor tool says it is: the drive whose write
// cache Kafka's appends wait on. Planned (src/planner/raid/disks.ts), shown in the plan's RAID section.
import type { ProtectionCondition, WritePolicy } from './raid.js';

export interface RaidDiskTie {
  workload: string;
  /** The whole disk's kernel name (`sda`). */
  disk: string;
  /** The workload's data directories on that disk, as configured. */
  dirs: string[];
  /** `log dirs` (from server.properties) or `data dirs` (paths in the policy). */
  dirsWord: string;
  /** Controller id (`perccli:/c0`) and its model, when printed. */
  controller: string;
  model: string | null;
  /** The logical drive's change target (`perccli:/c0/v239`): what `raid:` settings act on. */
  drive: string;
  currentWrite: WritePolicy;
  defaultWrite: WritePolicy;
  /** The controller's battery/flash: its kind, the vendor's word and what that word means. */
  protection: { kind: string | null; state: string | null; condition: ProtectionCondition };
}
