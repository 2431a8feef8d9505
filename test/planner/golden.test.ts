// The planner's whole output, byte for byte, for every sysfs fixture host and every policy the suite
// has (policies/ and test/support/policies.ts), on a fresh host, on one whose top-level cgroups are
// systemd's, on the host after the fresh plan was applied, and without cgroup v2: a refactor of the
// planner must leave every plan exactly as it was. A plan that is refused is kept as its message.
// ISOLATE_UPDATE_GOLDEN=1 rewrites the files (only for a change meant to alter plans, said in its commit).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ObservedState } from '../../src/model/observed.js';
import { planToJson } from '../../src/planner/json.js';
import { planHost } from '../../src/planner/plan.js';
import { parsePolicy } from '../../src/policy/load.js';
import { readTopology } from '../../src/topology/read.js';
import { DEFAULT_GROUPS } from '../support/fake-host.js';
import { afterChanges, freshHost, noCgroupHost } from '../support/observed.js';
import { KAFKA_DATA2_POLICY, KAFKA_YARN_POLICY } from '../support/policies.js';

const REPO = join(import.meta.dirname, '../..');
const FIXTURES = join(REPO, 'test/fixtures/sysfs');
const GOLDEN = join(import.meta.dirname, 'golden');
const UPDATE = process.env.ISOLATE_UPDATE_GOLDEN === '1';

const hosts = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();

const policies: [string, string][] = [
  ...readdirSync(join(REPO, 'policies'))
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f): [string, string] => [`policies/${f}`, readFileSync(join(REPO, 'policies', f), 'utf8')]),
  ['KAFKA_YARN_POLICY', KAFKA_YARN_POLICY],
  ['KAFKA_DATA2_POLICY', KAFKA_DATA2_POLICY],
];

/** A plan as its JSON, or the one-line refusal; the repository's path is left out of both. */
function outcome(plan: () => ReturnType<typeof planHost>): unknown {
  try {
    return JSON.parse(JSON.stringify(planToJson(plan())).replaceAll(REPO, '<repo>'));
  } catch (err) {
    return { refused: (err instanceof Error ? err.message : String(err)).replaceAll(REPO, '<repo>') };
  }
}

/** Every policy on every observed state of one host. */
function plansOf(host: string): Record<string, Record<string, unknown>> {
  const topology = readTopology(join(FIXTURES, host));
  const out: Record<string, Record<string, unknown>> = {};
  for (const [name, text] of policies) {
    const policy = parsePolicy(text, name);
    const states: [string, () => ObservedState][] = [
      ['fresh', () => freshHost()],
      ['systemd top-level', () => freshHost(DEFAULT_GROUPS.filter((g) => !g.includes('/')))],
      [
        'after the fresh plan',
        () => afterChanges(freshHost(), planHost(topology, policy, freshHost()).changes),
      ],
      ['no cgroup v2', () => noCgroupHost()],
    ];
    out[name] = {};
    for (const [state, observed] of states) {
      out[name][state] = outcome(() => planHost(topology, policy, observed()));
    }
  }
  return out;
}

describe('golden plans: every fixture host × every policy', () => {
  it('covers every fixture host', () => {
    expect(hosts.length).toBeGreaterThan(5);
    const files = readdirSync(GOLDEN).filter((f) => f.endsWith('.json'));
    expect(files.sort()).toEqual(hosts.map((h) => `${h}.json`));
  });

  for (const host of hosts) {
    it(host, () => {
      const file = join(GOLDEN, `${host}.json`);
      const text = `${JSON.stringify(plansOf(host), null, 2)}\n`;
      if (UPDATE || !existsSync(file)) writeFileSync(file, text);
      expect(text).toBe(readFileSync(file, 'utf8'));
    });
  }
});
