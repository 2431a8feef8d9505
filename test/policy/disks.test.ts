// `disks:` in a workload: exactly one of paths or kafkaConfig, absolute and normalised, exclusive
// workloads only; every refusal is one line naming file:line:col, the field and the fix. The JSON
// Schema must agree on the same documents.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parsePolicy } from '../../src/policy/load.js';
import { policyRefusal } from '../support/policies.js';

const schemaDir = join(import.meta.dirname, '../../schema');
const ajv = new Ajv2020({ allErrors: true, strict: false });
for (const f of ['policy.schema.json', 'raid-policy.schema.json']) {
  ajv.addSchema(JSON.parse(readFileSync(join(schemaDir, f), 'utf8')));
}
const validate = ajv.getSchema('https://isolate.dev/schema/policy.schema.json')!;

const policy = (kafkaExtra: string, flinkExtra = '') => `apiVersion: isolate/v1
kind: HostPolicy
workloads:
  - name: kafka
    class: exclusive
    cores: 2
    match: { systemdUnit: kafka.service }
${kafkaExtra}
  - name: flink
    class: batch
    match: { cgroup: /hadoop-yarn }
${flinkExtra}
`;

const refusal = policyRefusal;

describe('workloads[].disks', () => {
  it('reads paths, normalised', () => {
    const text = policy('    disks: { paths: [/data1/kafka-logs, "/data2//kafka-logs/", /data3/./k] }');
    expect(validate(parse(text)), JSON.stringify(validate.errors)).toBe(true);
    expect(parsePolicy(text, 'p.yaml').workloads[0]!.disks).toEqual({
      kind: 'paths',
      paths: ['/data1/kafka-logs', '/data2/kafka-logs', '/data3/k'],
    });
  });

  it('reads kafkaConfig', () => {
    const text = policy('    disks: { kafkaConfig: /etc/kafka/server.properties }');
    expect(validate(parse(text)), JSON.stringify(validate.errors)).toBe(true);
    expect(parsePolicy(text, 'p.yaml').workloads[0]!.disks).toEqual({
      kind: 'kafkaConfig',
      file: '/etc/kafka/server.properties',
    });
  });

  it('is absent when not given', () => {
    expect(parsePolicy(policy(''), 'p.yaml').workloads[0]!.disks).toBeUndefined();
  });

  const bad: [string, string, string, RegExp][] = [
    [
      'both',
      policy('    disks: { paths: [/d], kafkaConfig: /etc/kafka/server.properties }'),
      'p.yaml:8:12: workloads[0].disks',
      /exactly one of paths .* or kafkaConfig .*; got both/,
    ],
    ['neither', policy('    disks: {}'), 'workloads[0].disks:', /got neither/],
    [
      'a relative path',
      policy('    disks: { paths: [data/kafka-logs] }'),
      'p.yaml:8:22: workloads[0].disks.paths[0]:',
      /expected an absolute path \(e\.g\. \/data1\/kafka-logs\); got "data\/kafka-logs"/,
    ],
    ['an empty list', policy('    disks: { paths: [] }'), 'workloads[0].disks.paths:', /non-empty list/],
    ['a string for paths', policy('    disks: { paths: /data1 }'), 'disks.paths:', /got "\/data1"/],
    ['a number in paths', policy('    disks: { paths: [1] }'), 'disks.paths[0]:', /got number 1/],
    [
      'a relative kafkaConfig',
      policy('    disks: { kafkaConfig: server.properties }'),
      'workloads[0].disks.kafkaConfig:',
      /expected an absolute path/,
    ],
    [
      'disks on a batch workload',
      policy('', '    disks: { paths: [/data1/yarn] }'),
      'workloads[1].disks:',
      /only exclusive workloads take disks; .*move disks to the exclusive workload/,
    ],
    [
      'an unknown key',
      policy('    disks: { path: [/d] }'),
      'disks.path:',
      /unknown field "path"; allowed: paths, kafkaConfig/,
    ],
    ['a list for disks', policy('    disks: [/d]'), 'workloads[0].disks:', /expected a mapping/],
  ];
  it.each(bad)('refuses %s, in the loader and the schema', (_name, text, where, why) => {
    const msg = refusal(text);
    expect(msg).toContain(where);
    expect(msg).toMatch(why);
    expect(validate(parse(text))).toBe(false);
  });

  it('refuses ".." parts and control characters (the loader; the schema only the latter)', () => {
    expect(refusal(policy('    disks: { paths: [/data1/../etc] }'))).toMatch(
      /disks\.paths\[0\]: expected an absolute path .* without "\.\." parts; got "\/data1\/\.\.\/etc"/,
    );
    const ctl = policy('    disks: { paths: ["/data1/\\tx"] }');
    expect(refusal(ctl)).toMatch(/without control characters/);
    expect(validate(parse(ctl))).toBe(false);
  });

  it('refuses the same directory twice, written differently', () => {
    expect(refusal(policy('    disks: { paths: [/data1/k, /data1/k/] }'))).toMatch(
      /disks\.paths\[1\]: \/data1\/k is also paths\[0\]; name each directory once/,
    );
  });
});
