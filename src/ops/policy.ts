// `policy validate` as a function.
import type { Policy } from '../model/policy.js';
import { allocate } from '../planner/allocate.js';
import { loadPolicyFile } from '../policy/load.js';
import { readTopology } from '../topology/read.js';

/**
 * Check a policy file; with a host root, also that it fits that host (cores, nodes, devices). What
 * fits but looks wrong there (a `near` device the host does not have) comes back as warnings.
 */
export function validatePolicy(file: string, root?: string): { policy: Policy; warnings: string[] } {
  const policy = loadPolicyFile(file);
  const warnings: string[] = [];
  // A policy can be valid YAML and still not fit the host (too many cores, unknown CPUs).
  if (root) allocate(readTopology(root), policy, undefined, warnings);
  return { policy, warnings };
}
