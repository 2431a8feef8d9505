// irqbalance rewrites IRQ affinities every 10 s; isolate does not fight it but bans it from the
// exclusive CPUs and from the IRQs isolate pins, through irqbalance.service's environment
// (model/irqbalance.ts), and restarts it once. Pure: the observation comes in, one change goes out.
import type { CpuSet } from '../model/cpuset.js';
import {
  ARGS,
  IRQBALANCE_DROP_IN,
  IRQBALANCE_SETTING,
  IRQBALANCE_UNIT,
  irqbalanceValue,
  runsWith,
} from '../model/irqbalance.js';
import type { ObservedIrqs } from '../model/irq.js';
import type { Change } from '../model/plan.js';

export function irqbalanceChanges(
  observed: ObservedIrqs,
  exclusive: CpuSet,
  pinned: readonly number[],
  warnings: string[],
  notes: string[],
): Change[] {
  const unit = observed.irqbalanceUnit;
  const running = observed.irqbalance;
  if (!unit) {
    // No systemd to ask (or --root is not the live host): isolate cannot write the drop-in.
    if (running) {
      warnings.push(
        `irqbalance (pid ${running.pid}) is running: it moves IRQs every 10 s, so between the agent's rounds they may land on the exclusive CPUs again; isolate bans them through irqbalance.service, which systemd does not run here: set IRQBALANCE_BANNED_CPULIST=${exclusive} and --banirq for the pinned IRQs yourself, or stop irqbalance`,
      );
    }
    return [];
  }
  if (!unit.loaded) {
    notes.push(
      running
        ? `irqbalance (pid ${running.pid}) runs outside systemd (no ${IRQBALANCE_UNIT}): isolate does not ban it; the agent puts affinities back every round`
        : `irqbalance is not installed (no ${IRQBALANCE_UNIT}): nothing planned for it`,
    );
    return [];
  }
  if (!unit.active && unit.ours === '') {
    notes.push(`${IRQBALANCE_UNIT} is not running: nothing planned for it`);
    return [];
  }
  const want = irqbalanceValue(unit, exclusive, pinned);
  if ('problem' in want) {
    warnings.push(
      `irqbalance${unit.mainPid ? ` (pid ${unit.mainPid})` : ''}: isolate does not write its ban, ${want.problem}; set IRQBALANCE_BANNED_CPULIST=${exclusive} (and --banirq for the IRQs isolate pins) in /etc/default/irqbalance and restart it, or stop irqbalance`,
    );
    return [];
  }
  if (!unit.passesArgs) {
    warnings.push(
      `${IRQBALANCE_UNIT}'s ExecStart= does not pass $${ARGS}: the IRQs isolate pins cannot be banned (--banirq) and irqbalance may move them between the agent's rounds`,
    );
  }
  const stale = unit.active && unit.running !== null && !runsWith(unit.running, want.value);
  if (want.value === unit.ours && !stale) return [];
  const pid = unit.mainPid ? ` (pid ${unit.mainPid})` : '';
  const what = `isolate's drop-in ${IRQBALANCE_DROP_IN} bans the exclusive CPUs ${exclusive} (banned: ${want.banned})${pinned.length > 0 ? ` and the ${pinned.length} IRQs isolate pins` : ''}, merged with the operator's own values`;
  const note =
    want.value === unit.ours
      ? `irqbalance${pid} runs without isolate's ban (started before it was written): restarted once`
      : unit.active
        ? `irqbalance${pid} rewrites IRQ affinities every 10 s: ${what}; irqbalance is restarted once to read it`
        : `${IRQBALANCE_UNIT} is not running: ${what}, read at its next start`;
  return [
    {
      backend: 'systemd',
      target: IRQBALANCE_UNIT,
      setting: IRQBALANCE_SETTING,
      from: unit.ours,
      to: want.value,
      note,
    },
  ];
}
