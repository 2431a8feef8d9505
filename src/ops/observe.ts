// What a plan is made from, read from the host: the cgroup tree (v2, or the v1 hierarchies), the
// processes `process:` workloads match, and systemd's view of the units behind the policy's cgroups.
import type { ObservedState } from '../model/observed.js';
import type { Policy } from '../model/policy.js';
import {
  anchorSliceFor,
  dedicatedSliceName,
  defaultUnitPath,
  isDedicatedSlice,
  unitOfCgroup,
} from '../model/systemd.js';
import { STANDARD_TOP_LEVEL } from '../planner/changes.js';
import { ancestors, parentOf, workloadTarget } from '../planner/targets.js';
import type { RoundCache } from './round-cache.js';

/** Everything the planner may diff against: targets, their ancestors, units and process matches. */
export async function observe(root: string, policy: Policy, cache: RoundCache = {}): Promise<ObservedState> {
  const paths = new Set<string>();
  const units: string[] = [];
  const processMatchers: Record<string, { cmdline?: string; exe?: string; user?: string | number }> = {};
  for (const w of policy.workloads) {
    const target = w.match.kind === 'systemdUnit' ? defaultUnitPath(w.match.unit) : workloadTarget(w);
    for (const p of [...ancestors(target), target]) paths.add(p);
    if (w.match.kind === 'systemdUnit') units.push(w.match.unit);
    if (w.match.kind === 'process') {
      const { cmdline, exe, user } = w.match;
      processMatchers[w.name] = {
        cmdline,
        exe,
        user,
      };
    }
  }
  const { observeHost } = await import('../cgroup/observe.js');
  const { detectCgroupLayout } = await import('../cgroup/layout.js');
  // The mount table, read once: the cgroup v2 observer and the v1 choice below both go by it.
  const mounts = await detectCgroupLayout(root);
  // What the cgroup observer takes of the round's memory (systemd's answer is asked for below).
  const known = { mounts, processScan: cache.processes };
  let observed = await observeHost(root, { paths: [...paths], units, processMatchers, ...known });
  // A unit found somewhere unexpected: make sure its ancestors are known too, for subtree_control.
  const missing = Object.values(observed.cgroup.units)
    .filter((p): p is string => p !== null)
    .flatMap((p) => ancestors(p))
    .filter((p) => !observed.cgroup.groups[p]);
  if (missing.length > 0 && observed.cgroup.layout === 'unified') {
    observed = await observeHost(root, { paths: [...paths, ...missing], units, processMatchers, ...known });
  }
  // The units behind every cgroup the plan may touch (targets, their ancestors, strict's top level).
  const { observeSystemd } = await import('../systemd/observe.js');
  const unitNames = [
    ...units,
    ...[...Object.keys(observed.cgroup.groups), ...observed.cgroup.topLevel.map((t) => `/${t}`)]
      .map(unitOfCgroup)
      .filter((u): u is string => u !== null),
  ];
  // strict: the dedicated slice of each exclusive service, isolate's (`kafka.slice`) or the one the
  // operator configured, which exists as a unit (and takes properties) before anything runs in it.
  const dedicated = policy.strict
    ? policy.workloads.filter((w) => w.class === 'exclusive' && w.match.kind === 'systemdUnit')
    : [];
  // The anchor slice of a shared slice a strict unit still runs in before its restart (anchorSliceFor).
  const anchors = dedicated.flatMap((w) => {
    const running = w.match.kind === 'systemdUnit' ? observed.cgroup.units[w.match.unit] : null;
    const anchor = running ? anchorSliceFor(parentOf(running)) : null;
    return anchor ? [anchor] : [];
  });
  const asked = [
    ...unitNames,
    ...(policy.strict ? STANDARD_TOP_LEVEL : []),
    ...dedicated.map((w) => dedicatedSliceName(w.name)),
    ...anchors,
  ];
  const ask = async () => {
    const systemd = await observeSystemd(root, asked);
    if (systemd) {
      const configured = dedicated
        .map((w) => (w.match.kind === 'systemdUnit' ? systemd.units[w.match.unit]?.Slice : undefined))
        .filter((s): s is string => !!s && isDedicatedSlice(s) && !systemd.units[s]);
      if (configured.length > 0) {
        Object.assign(systemd.units, (await observeSystemd(root, configured))?.units ?? {});
      }
    }
    return systemd;
  };
  // The agent asks again only when what the cgroup tree shows of systemd's units may have changed.
  const systemd = cache.systemd
    ? await cache.systemd.answer(JSON.stringify([root, asked, observed.cgroup]), ask)
    : await ask();
  if (systemd) observed.systemd = systemd;
  // cpuset on a v1 hierarchy (legacy, or hybrid): the v1 backend observes, plans and applies.
  if (mounts.cpuset === 'v1') {
    const { observeV1 } = await import('../cgroupv1/observe.js');
    const groups = policy.workloads.flatMap((w) => {
      if (w.match.kind === 'process') return [];
      const p = w.match.kind === 'cgroup' ? w.match.path : defaultUnitPath(w.match.unit);
      return [
        { hierarchy: 'memory', path: p },
        { hierarchy: 'cpu', path: p },
      ];
    });
    observed.v1 = await observeV1(root, mounts, {
      workloads: policy.workloads.map((w) => ({
        name: w.name,
        match: w.match,
        cpuset: `/isolate-${w.name}`,
      })),
      cpusets: ['/isolate-housekeeping'],
      groups,
      // Matched by observeHost above (with the agent's scan memory): not read a second time.
      matched: observed.processes,
      rootProcs: policy.strict,
    });
    // systemd units whose memory/cpu isolate would set through systemd on v1.
    const v1Units = policy.workloads.flatMap((w) => (w.match.kind === 'systemdUnit' ? [w.match.unit] : []));
    if (v1Units.length > 0 && !observed.systemd) {
      const sdv1 = await observeSystemd(root, v1Units);
      if (sdv1) observed.systemd = sdv1;
    }
  }
  const { observeIrqs } = await import('../irq/observe.js');
  const irqs = cache.irqs ? cache.irqs.observe(root) : observeIrqs(root);
  if (irqs) observed.irqs = irqs;
  // irqbalance's unit, only when the plan may ban it (quiet IRQs) and systemd runs the host.
  if (irqs && policy.quiet?.irqs !== false) {
    const { observeIrqbalance } = await import('../systemd/irqbalance.js');
    const unit = await observeIrqbalance(root);
    if (unit) irqs.irqbalanceUnit = unit;
  }
  return observed;
}
