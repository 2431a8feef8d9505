// The disks under a policy's data directories for `isolate topology`: the policy given, else the
// host's when there is one. Read-only, so a policy another user could write is used with a warning,
// as `plan --dry-run` does; without a policy there is nothing to show.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkloadDisks } from '../model/disks.js';
import { diskRequestsOf, readWorkloadDisks } from '../topology/disks.js';
import { policyOf, readPolicySource, resolvePolicyPath } from './policy-source.js';

export function policyDisks(
  root: string,
  policyPath: string | undefined,
  warn: (message: string) => void,
): WorkloadDisks[] | undefined {
  if (policyPath === undefined && !existsSync(join(root, 'etc/isolate/policy.yaml'))) return undefined;
  const policy = policyOf(readPolicySource(resolvePolicyPath(root, policyPath), { warn }));
  const requests = diskRequestsOf(policy.workloads);
  return requests.length === 0 ? undefined : readWorkloadDisks(root, requests);
}
