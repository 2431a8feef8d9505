// What the agent keeps from one round to the next so that the next costs less — never what it wrote,
// and never a reason to skip observing the host. One object, owned by the agent and passed to plan,
// apply and check in one field (`cache`); a command run once has none and reads everything.
import type { ProcessScanner } from '../cgroup/proc-scan.js';
import type { IrqMemo } from '../irq/memo.js';
import type { SystemdMemo } from './systemd-memo.js';

export interface RoundCache {
  /** Which PIDs matched no workload, so settled ones are not read again every round (cgroup/proc-scan.ts). */
  processes?: ProcessScanner;
  /** systemd's last answer, used again while the cgroup tree reads the same (systemd-memo.ts). */
  systemd?: SystemdMemo;
  /** The last full IRQ scan: rounds re-read only the managed IRQs until IRQs or NICs change (irq/memo.ts). */
  irqs?: IrqMemo;
}
