// `jvm: { activeProcessorCount: auto }`: the policy field, systemd's Environment= as `systemctl show`
// prints it, and the JvmOptions change the planner makes of it: JAVA_TOOL_OPTIONS of isolate's own,
// nothing of the operator's copied (a saved plan carrying one validates). The drop-in's write and rollback: test/systemd/rollback-batch.
import { describe, expect, it } from 'vitest';
import { assignmentOf, jvmDropInText, parseEnvironmentProperty } from '../../src/model/jvm-options.js';
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

describe('the drop-in', () => {
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

  it("sets JAVA_TOOL_OPTIONS to the flag for the workload's CPUs, the unit's KAFKA_OPTS not copied; effective at the next restart", () => {
    const plan = planHost(
      topology,
      policy,
      host('"KAFKA_OPTS=-Xmx1g -Dkafka.logs.dir=/var/log/kafka" LANG=C'),
    );
    const c = plan.changes.find((x) => x.setting === 'JvmOptions');
    expect(c).toMatchObject({
      backend: 'systemd',
      target: 'kafka.service',
      from: '',
      to: 'JAVA_TOOL_OPTIONS=-XX:ActiveProcessorCount=4',
      workload: 'kafka',
    });
    expect(c!.note).toMatch(
      /50-isolate-jvm\.conf; kafka\.service's JVM reads -XX:ActiveProcessorCount=4 at its next restart/,
    );
    // A saved plan or a journal carrying it validates.
    expect(change(c, 'changes[0]')).toBeNull();
    expect(change({ ...c, setting: 'Environment' }, 'changes[0]')).toMatch(/changes\[0\]\.setting/);
  });

  it("once in place nothing is planned, whatever the operator's KAFKA_OPTS becomes (their edit is never frozen)", () => {
    const applied = 'JAVA_TOOL_OPTIONS=-XX:ActiveProcessorCount=4';
    const again = planHost(topology, policy, host(`"KAFKA_OPTS=-Xmx1g" ${applied}`));
    expect(again.changes.some((x) => x.setting === 'JvmOptions')).toBe(false);
    // The operator edits KAFKA_OPTS after apply: systemd shows their new value (isolate's drop-in does
    // not set it), and nothing of isolate's needs to change.
    const edited = planHost(topology, policy, host(`"KAFKA_OPTS=-Xmx6g -javaagent:/opt/jmx.jar" ${applied}`));
    expect(edited.changes.some((x) => x.setting === 'JvmOptions')).toBe(false);
    expect(edited.warnings.filter((w) => /KAFKA_OPTS|JAVA_TOOL_OPTIONS/.test(w))).toEqual([]);
  });

  it('a new core count replaces isolate’s earlier value', () => {
    const plan = planHost(topology, policy, host('JAVA_TOOL_OPTIONS=-XX:ActiveProcessorCount=8'));
    expect(plan.changes.find((x) => x.setting === 'JvmOptions')).toMatchObject({
      from: 'JAVA_TOOL_OPTIONS=-XX:ActiveProcessorCount=8',
      to: 'JAVA_TOOL_OPTIONS=-XX:ActiveProcessorCount=4',
    });
  });

  it("a unit that sets JAVA_TOOL_OPTIONS itself is not planned (isolate would replace it); a count of the operator's in KAFKA_OPTS wins, and is said", () => {
    const own = planHost(topology, policy, host('"JAVA_TOOL_OPTIONS=-javaagent:/opt/agent.jar"'));
    expect(own.changes.some((x) => x.setting === 'JvmOptions')).toBe(false);
    expect(own.warnings.join('\n')).toMatch(
      /kafka: kafka\.service sets JAVA_TOOL_OPTIONS itself \("-javaagent:\/opt\/agent\.jar"\); isolate's drop-in would replace it, so it is not planned: add -XX:ActiveProcessorCount=4 to it yourself/,
    );
    const theirs = planHost(topology, policy, host('"KAFKA_OPTS=-Xmx1g -XX:ActiveProcessorCount=16"'));
    expect(theirs.warnings.join('\n')).toMatch(
      /KAFKA_OPTS of kafka\.service sets -XX:ActiveProcessorCount=16, which the JVM reads after isolate's JAVA_TOOL_OPTIONS \(4\)/,
    );
  });

  it('says so when an EnvironmentFile= may override it, and when systemd cannot be asked', () => {
    const plan = planHost(
      topology,
      policy,
      host('', { EnvironmentFiles: '/etc/default/kafka (ignore_errors=no)' }),
    );
    expect(plan.warnings.join('\n')).toMatch(
      /kafka: kafka\.service reads EnvironmentFile= \(\/etc\/default\/kafka\); if it sets JAVA_TOOL_OPTIONS, it overrides isolate's drop-in: add -XX:ActiveProcessorCount=4 there instead/,
    );
    const noSystemd = freshHost(['system.slice']);
    const none = planHost(topology, policy, noSystemd);
    expect(none.changes.some((x) => x.setting === 'JvmOptions')).toBe(false);
    expect(none.warnings.join('\n')).toMatch(/jvm\.activeProcessorCount needs systemd/);
  });
});
