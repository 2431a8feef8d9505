// `policy validate` as a function.
import type { FieldPath } from '../model/field.js';
import type { Policy } from '../model/policy.js';
import type { Topology } from '../model/topology.js';
import type { WorkloadDisks } from '../model/disks.js';
import { policyError } from '../planner/allocate.js';
import { loadPolicyFile } from '../policy/load.js';
import { buildPlan } from './plan.js';
import { readPolicySource } from './policy-source.js';

export interface Validation {
  policy: Policy;
  /** What `plan` would warn about on the host (with a root only). */
  warnings: string[];
  /** What the policy names and the host lacks (with a root only), one located line each. */
  errors: string[];
}

/**
 * Check a policy file. With a host root, also everything `plan` checks there — the same planner runs,
 * read-only (RAID tools are not run) — so what validates is what the agent accepts, and whatever the
 * policy names that the host lacks is an error: a `near` device, an `irqs.nics` NIC, the `kafkaConfig`
 * file or a `paths` directory. Ansible's role installs a policy only when this passes on the host,
 * and a typo there would otherwise roll out as a warning nobody reads.
 */
export async function validatePolicy(file: string, root?: string): Promise<Validation> {
  if (root === undefined) return { policy: loadPolicyFile(file), warnings: [], errors: [] };
  const warnings: string[] = [];
  // Whoever may write the file is the caller's business here: a candidate is validated, not applied.
  const source = readPolicySource(file, { warn: (m) => warnings.push(m) });
  const built = await buildPlan({ root, policySource: source, disks: true, observeRaid: false });
  const { policy, topology } = built;
  const errors = [
    ...missingDevices(policy, topology),
    ...missingData(policy, built.observed.disks ?? []),
  ].map(([path, message]) => policyError(policy, path, message).message);
  warnings.push(...built.plan.warnings);
  return { policy, warnings, errors };
}

type Lack = [FieldPath, string];

/** `near` devices and `irqs.nics` NICs the host does not have. */
function missingDevices(policy: Policy, topology: Topology): Lack[] {
  const has = (kind: string, name: string) =>
    topology.devices.some((d) => d.kind === kind && d.name === name);
  const nics = () =>
    topology.devices
      .filter((d) => d.kind === 'nic')
      .map((d) => d.name)
      .join(', ') || 'none';
  return policy.workloads.flatMap((w, i) => [
    ...w.near.flatMap((ref, j): Lack[] =>
      has(ref.kind, ref.name)
        ? []
        : [
            [
              ['workloads', i, 'near', j],
              `${ref.kind}:${ref.name} is not on this host${ref.kind === 'nic' ? ` (NICs: ${nics()})` : ''}; correct the name or remove it`,
            ],
          ],
    ),
    ...(w.irqs?.nics ?? []).flatMap((name, j): Lack[] =>
      has('nic', name)
        ? []
        : [
            [
              ['workloads', i, 'irqs', 'nics', j],
              `NIC ${name} is not on this host (NICs: ${nics()}); correct the name or remove it`,
            ],
          ],
    ),
  ]);
}

/** The kafkaConfig file that cannot be read, `paths` directories that do not exist. */
function missingData(policy: Policy, disks: readonly WorkloadDisks[]): Lack[] {
  return disks.flatMap((d) => {
    const i = policy.workloads.findIndex((w) => w.name === d.workload);
    return (d.lacking ?? []).map((l): Lack => [['workloads', i, 'disks', ...l.field], l.message]);
  });
}
