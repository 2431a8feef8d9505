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
// As an editor resolves them: each schema under its own $id, the relative $ref resolved against
// the policy schema's $id. No rewriting here, or a broken $id would pass unnoticed.
const schemas = Object.fromEntries(
  readdirSync(schemaDir).map((f) => [f, JSON.parse(readFileSync(join(schemaDir, f), 'utf8'))]),
);
for (const schema of Object.values(schemas)) ajv.addSchema(schema);
const validate = ajv.getSchema(schemas['policy.schema.json'].$id)!;

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
    ['ambiguous GB size', 'low: 32G', 'low: 32GB'],
    // Beyond 2^53 − 1 a number is rounded: neither may take it (schema maximum, loader safe integer).
    ['cores beyond 2^53 − 1', 'cores: 8', 'cores: 99999999999999999999'],
    ['reserved cores beyond 2^53 − 1', '{ cores: 1 }', '{ cores: 99999999999999999999 }'],
    ['bytes beyond 2^53 − 1', 'low: 32G', 'low: 99999999999999999999'],
    ['uid beyond uid_t', '{ cgroup: /kafka.slice }', '{ process: { user: 4294967295 } }'],
    ['node id beyond the CPU list limit', 'mems: local', 'mems: 99999999999999999999'],
  ];
  it('each schema lives at the URL its $id names, in the same directory, so the relative $ref resolves', () => {
    for (const [f, schema] of Object.entries(schemas)) {
      expect(schema.$id).toBe(`https://isolate.dev/schema/${f}`);
    }
    expect(
      ajv.getSchema(new URL('raid-policy.schema.json', schemas['policy.schema.json'].$id).href),
    ).toBeTruthy();
  });

  it('checks the raid: section through the $ref', () => {
    const text = base.replace('raid: { writeCache: write-back }', 'raid: { writeCache: sometimes }');
    expect(validate(parse(text))).toBe(false);
    expect(JSON.stringify(validate.errors)).toMatch(/raid/);
    expect(() => parsePolicy(text, 'bad.yaml')).toThrow(UserError);
  });

  const boundary: [string, string, string][] = [
    ['cores 2^53 − 1', 'cores: 8', 'cores: 9007199254740991'],
    ['reserved cores 2^53 − 1', '{ cores: 1 }', '{ cores: 9007199254740991 }'],
    ['bytes 2^53 − 1', 'low: 32G', 'low: 9007199254740991'],
    ['uid 4294967294', '{ cgroup: /kafka.slice }', '{ process: { user: 4294967294 } }'],
  ];
  it.each(boundary)('accepts %s in both', (_name, from, to) => {
    expect(base).toContain(from);
    const text = base.replace(from, to);
    expect(validate(parse(text)), JSON.stringify(validate.errors)).toBe(true);
    expect(() => parsePolicy(text, 'edge.yaml')).not.toThrow();
  });

  it.each(bad)('rejects %s in both', (_name, from, to) => {
    expect(base).toContain(from);
    const text = base.replace(from, to);
    expect(validate(parse(text))).toBe(false);
    expect(() => parsePolicy(text, 'bad.yaml')).toThrow(UserError);
  });
});
