// `jvm: { activeProcessorCount: auto }`: the policy field, systemd's Environment= as `systemctl show`
// prints it, the merge with the unit's own value, and the JvmOptions change the planner makes of them
// (a saved plan carrying one validates). The drop-in's write and rollback: test/systemd/rollback-batch.
import { describe, expect, it } from 'vitest';
import {
  assignmentOf,
  jvmDropInText,
  parseEnvironmentProperty,
  withActiveProcessorCount,
} from '../../src/model/jvm-options.js';
import { UserError } from '../../src/model/errors.js';
import type { ObservedState } from '../../src/model/observed.js';
import { change } from '../../src/model/shape.js';
import { planHost } from '../../src/planner/plan.js';
import { parsePolicy } from '../../src/policy/load.js';
import { freshHost } from '../support/observed.js';
import { synthTopology, TWO_NODES_SMT2_SPLIT } from '../support/synthetic.js';

const topology = synthTopology(TWO_NODES_SMT2_SPLIT);

const policyText = (jvm: string, match = '{ systemdUnit: kafka.service }') => `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
workloads:
  - name: kafka
    class: exclusive
    cores: 2
    match: ${match}
    jvm: ${jvm}
`;
const AUTO = '{ activeProcessorCount: auto, optionsVariable: KAFKA_OPTS }';

function host(environment: string, extra: Record<string, string> = {}): ObservedState {
  const o = freshHost(['system.slice']);
  o.systemd = {
    version: 252,
    units: {
      'kafka.service': { Id: 'kafka.service', LoadState: 'loaded', Environment: environment, ...extra },
    },
  };
  return o;
}

describe('systemctl show -p Environment, as systemd 252 prints it', () => {
  it('splits plain words and double-quoted ones, unescaping \\" \\\\ \\$ \\`', () => {
    expect(
      parseEnvironmentProperty(
        'A=1 "KAFKA_OPTS=-Xmx1g -Dx=a\\$b" "Q=say \\"hi\\" \\\\ \\`x\\`" LANG=C.UTF-8',
      ),
    ).toEqual(['A=1', 'KAFKA_OPTS=-Xmx1g -Dx=a$b', 'Q=say "hi" \\ `x`', 'LANG=C.UTF-8']);
    expect(parseEnvironmentProperty('')).toEqual([]);
    expect(parseEnvironmentProperty('"KAFKA_OPTS=-Xmx1g')).toBeNull();
  });

  it('a later assignment of the name wins; an unset variable is the empty assignment', () => {
    expect(assignmentOf('"KAFKA_OPTS=-Xmx1g -Da=b" KAFKA_OPTS=-Xmx2g', 'KAFKA_OPTS')).toBe(
      'KAFKA_OPTS=-Xmx2g',
    );
    expect(assignmentOf('OTHER=1', 'KAFKA_OPTS')).toBe('');
    expect(assignmentOf(undefined, 'KAFKA_OPTS')).toBe('');
    // A name that only starts like another is another variable.
    expect(assignmentOf('KAFKA_OPTS_X=1', 'KAFKA_OPTS')).toBe('');
  });
});

describe('the merge', () => {
  it("keeps every word of the operator's and appends the flag; isolate's own earlier flag is replaced", () => {
    expect(withActiveProcessorCount('-Xmx1g  -Dkafka.logs.dir=/var/log/kafka', 4)).toBe(
      '-Xmx1g -Dkafka.logs.dir=/var/log/kafka -XX:ActiveProcessorCount=4',
    );
    expect(withActiveProcessorCount('', 8)).toBe('-XX:ActiveProcessorCount=8');
    expect(withActiveProcessorCount('-Xmx1g -XX:ActiveProcessorCount=8', 4)).toBe(
      '-Xmx1g -XX:ActiveProcessorCount=4',
    );
  });

  it('the drop-in escapes what systemd would read as an escape or a specifier', () => {
    const text = jvmDropInText('kafka.service', 'KAFKA_OPTS=-Dp=50% -Dq="x" -Dr=a\\b', 4);
    expect(text).toMatch(/^# Written by isolate/);
    expect(text).toContain('Environment="KAFKA_OPTS=-Dp=50%% -Dq=\\"x\\" -Dr=a\\\\b"\n');
  });
});

describe('the policy field', () => {
  it('loads on a systemdUnit workload', () => {
    const p = parsePolicy(policyText(AUTO), 'p.yaml');
    expect(p.workloads[0]!.jvm).toEqual({ activeProcessorCount: 'auto', optionsVariable: 'KAFKA_OPTS' });
  });

  it.each([
    [
      'a count',
      '{ activeProcessorCount: 4, optionsVariable: KAFKA_OPTS }',
      /jvm\.activeProcessorCount.*expected "auto"/,
    ],
    [
      'no variable',
      '{ activeProcessorCount: auto }',
      /jvm\.optionsVariable.*KAFKA_OPTS for Kafka's scripts, JDK_JAVA_OPTIONS/,
    ],
    [
      'a variable that is no name',
      '{ activeProcessorCount: auto, optionsVariable: "A B" }',
      /jvm\.optionsVariable/,
    ],
    [
      'an unknown key',
      '{ activeProcessorCount: auto, optionsVariable: KAFKA_OPTS, heap: 1g }',
      /unknown field "heap"/,
    ],
  ])('refuses %s in one line naming the field and the fix', (_n, jvm, re) => {
    const err = (() => {
      try {
        parsePolicy(policyText(jvm), 'p.yaml');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(UserError);
    expect((err as Error).message).toMatch(/^p\.yaml:\d+:\d+: /);
    expect((err as Error).message).toMatch(re);
    expect((err as Error).message).not.toContain('\n');
  });

  it('refuses it on a workload systemd does not run', () => {
    expect(() => parsePolicy(policyText(AUTO, '{ cgroup: /kafka.slice }'), 'p.yaml')).toThrow(
      /jvm: is for systemdUnit workloads .*match the workload by systemdUnit or remove jvm:/,
    );
  });
});

describe('the planned JvmOptions change', () => {
  const policy = parsePolicy(policyText(AUTO), 'p.yaml');

  it("merges the unit's KAFKA_OPTS with the flag for the workload's CPUs; effective at the next restart", () => {
    const plan = planHost(
      topology,
      policy,
      host('"KAFKA_OPTS=-Xmx1g -Dkafka.logs.dir=/var/log/kafka" LANG=C'),
    );
    const c = plan.changes.find((x) => x.setting === 'JvmOptions');
    expect(c).toMatchObject({
      backend: 'systemd',
      target: 'kafka.service',
      from: 'KAFKA_OPTS=-Xmx1g -Dkafka.logs.dir=/var/log/kafka',
      to: 'KAFKA_OPTS=-Xmx1g -Dkafka.logs.dir=/var/log/kafka -XX:ActiveProcessorCount=4',
      workload: 'kafka',
    });
    expect(c!.note).toMatch(
      /50-isolate-jvm\.conf; kafka\.service's JVM reads -XX:ActiveProcessorCount=4 at its next restart/,
    );
    // A saved plan or a journal carrying it validates.
    expect(change(c, 'changes[0]')).toBeNull();
    expect(change({ ...c, setting: 'Environment' }, 'changes[0]')).toMatch(/changes\[0\]\.setting/);
  });

  it('an unset variable gets the flag alone; once in place nothing is planned (idempotent)', () => {
    const first = planHost(topology, policy, host('LANG=C'));
    expect(first.changes.find((x) => x.setting === 'JvmOptions')).toMatchObject({
      from: '',
      to: 'KAFKA_OPTS=-XX:ActiveProcessorCount=4',
    });
    const again = planHost(topology, policy, host('LANG=C KAFKA_OPTS=-XX:ActiveProcessorCount=4'));
    expect(again.changes.some((x) => x.setting === 'JvmOptions')).toBe(false);
  });

  it('a new core count replaces isolate’s earlier flag', () => {
    const plan = planHost(topology, policy, host('"KAFKA_OPTS=-Xmx1g -XX:ActiveProcessorCount=8"'));
    expect(plan.changes.find((x) => x.setting === 'JvmOptions')?.to).toBe(
      'KAFKA_OPTS=-Xmx1g -XX:ActiveProcessorCount=4',
    );
  });

  it('says so when an EnvironmentFile= may override it, and when systemd cannot be asked', () => {
    const plan = planHost(
      topology,
      policy,
      host('', { EnvironmentFiles: '/etc/default/kafka (ignore_errors=no)' }),
    );
    expect(plan.warnings.join('\n')).toMatch(
      /kafka: kafka\.service reads EnvironmentFile= \(\/etc\/default\/kafka\); if it sets KAFKA_OPTS, it overrides isolate's drop-in: add -XX:ActiveProcessorCount=4 there instead/,
    );
    const noSystemd = freshHost(['system.slice']);
    const none = planHost(topology, policy, noSystemd);
    expect(none.changes.some((x) => x.setting === 'JvmOptions')).toBe(false);
    expect(none.warnings.join('\n')).toMatch(/jvm\.activeProcessorCount needs systemd/);
  });
});
