// The JSON Schema editors use and the loader isolate uses must agree: every shipped policy passes
// both, and each structural mistake is rejected by both.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { UserError } from '../../src/model/errors.js';
import { parsePolicy } from '../../src/policy/load.js';

const repo = join(import.meta.dirname, '../..');
const schemaDir = join(repo, 'schema');
const ajv = new Ajv2020({ allErrors: true, strict: false });
// Schemas refer to each other by file name, resolved against the policy schema's $id.
for (const f of readdirSync(schemaDir)) {
  const schema = JSON.parse(readFileSync(join(schemaDir, f), 'utf8'));
  ajv.addSchema({ ...schema, $id: `https://isolate.invalid/schema/${f}` });
}
const validate = ajv.getSchema('https://isolate.invalid/schema/policy.schema.json')!;

describe('policy JSON Schema', () => {
  const shipped = readdirSync(join(repo, 'policies')).filter((f) => f.endsWith('.yaml'));
  it('covers the shipped policies', () => expect(shipped.length).toBeGreaterThanOrEqual(3));
  it.each(shipped)('accepts policies/%s, as the loader does', (f) => {
    const text = readFileSync(join(repo, 'policies', f), 'utf8');
    expect(validate(parse(text)), JSON.stringify(validate.errors)).toBe(true);
    expect(parsePolicy(text, f).workloads.length).toBeGreaterThan(0);
  });

  const base = readFileSync(join(repo, 'policies/kafka-flink-yarn.yaml'), 'utf8');
  const bad: [string, string, string][] = [
    ['unknown field', 'strict: true', 'strict: true\nfrobnicate: 1'],
    ['zero cores', 'cores: 8', 'cores: 0'],
    ['cores as words', 'cores: 8', 'cores: eight'],
    ['bad size', 'low: 32G', 'low: 32Q'],
    ['cores on batch', 'class: batch', 'class: batch\n    cores: 2'],
    ['two matchers', '{ cgroup: /hadoop-yarn }', '{ cgroup: /hadoop-yarn, systemdUnit: x.service }'],
    ['bad class', 'class: batch', 'class: bulk'],
    ['bad near', 'nic:eth0', 'eth0'],
    ['bad weight', 'cpu: { idle: true }', 'cpu: { weight: 0 }'],
    ['bad apiVersion', 'isolate/v1', 'isolate/v9'],
  ];
  it.each(bad)('rejects %s in both', (_name, from, to) => {
    expect(base).toContain(from);
    const text = base.replace(from, to);
    expect(validate(parse(text))).toBe(false);
    expect(() => parsePolicy(text, 'bad.yaml')).toThrow(UserError);
  });
});
