// A plan as a command holds it: the plan with the facts it was made from, and how this command would
// carry it out. Its own module so that plan.ts (which builds one) and saved-plan.ts (which saves and
// reloads one) both use it without importing each other.
import type { ObservedState } from '../model/observed.js';
import type { Plan } from '../model/plan.js';
import type { Policy } from '../model/policy.js';
import type { RaidTool } from '../model/raid.js';
import type { Topology } from '../model/topology.js';
import type { PolicySource } from './policy-source.js';

/** How changes are carried out, fixed at plan time and saved with the plan and in the journal. */
export interface ExecutorOptions {
  raid?: {
    timeoutMs: number;
    toolPaths?: Partial<Record<RaidTool, string>>;
  };
}

/** A plan with what it was made from (topology, policy, observation) and how it would be carried out. */
export interface BuiltPlan {
  plan: Plan;
  topology: Topology;
  policy: Policy;
  source: PolicySource;
  observed: ObservedState;
  executorOptions: ExecutorOptions;
}
