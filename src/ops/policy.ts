// `policy validate` as a function.
import type { Policy } from '../model/policy.js';
import { allocate } from '../planner/allocate.js';
import { loadPolicyFile } from '../policy/load.js';
import { readTopology } from '../topology/read.js';

/** Check a policy file; with a host root, also that it fits that host (cores, nodes, devices). */
export function validatePolicy(file: string, root?: string): Policy {
  const p = loadPolicyFile(file);
  // A policy can be valid YAML and still not fit the host (too many cores, unknown CPUs).
  if (root) allocate(readTopology(root), p, undefined, []);
  return p;
}
