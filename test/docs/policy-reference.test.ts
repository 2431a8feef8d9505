// docs/policy.md "Field reference": exactly the fields of schema/policy.schema.json (with the raid
// section of schema/raid-policy.schema.json), each default equal to the schema's `default` and to
// what isolate's own loader fills in for a policy that leaves the field out.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parsePolicy } from '../../src/policy/load.js';
import { docTable } from '../support/doc-samples.js';

const REPO = resolve(import.meta.dirname, '../..');
type Node = Record<string, unknown>;
const load = (f: string) => JSON.parse(readFileSync(join(REPO, 'schema', f), 'utf8')) as Node;
const schemas: Record<string, Node> = {
  'policy.schema.json': load('policy.schema.json'),
  'raid-policy.schema.json': load('raid-policy.schema.json'),
};

interface Field {
  path: string;
  node: Node;
  required: boolean;
  /** The schema's default: on the property, else on the definition it refers to. */
  default?: unknown;
  leaf: boolean;
}

/** Follow $ref (local #/$defs/x, or another schema file); keep the first `default` seen. */
function deref(node: Node, file: string): { node: Node; file: string; default?: unknown } {
  let def: unknown = node.default;
  while (typeof node.$ref === 'string') {
    const [f, frag] = (node.$ref as string).split('#');
    const target = f ? f : file;
    let n = schemas[target]!;
    for (const part of (frag ?? '').split('/').filter(Boolean)) n = n[part] as Node;
    node = n;
    file = target;
    if (def === undefined) def = node.default;
  }
  return { node, file, ...(def !== undefined ? { default: def } : {}) };
}

function fields(node: Node, file: string, prefix: string, out: Field[]): Field[] {
  const props = (node.properties ?? {}) as Record<string, Node>;
  const required = (node.required ?? []) as string[];
  for (const [name, raw] of Object.entries(props)) {
    const r = deref(raw, file);
    const path = prefix ? `${prefix}.${name}` : name;
    const items = r.node.items ? deref(r.node.items as Node, r.file) : null;
    const extra =
      typeof r.node.additionalProperties === 'object'
        ? deref(r.node.additionalProperties as Node, r.file)
        : null;
    const leaf = !r.node.properties && !items?.node.properties && !extra;
    out.push({
      path,
      node: r.node,
      required: required.includes(name),
      leaf,
      ...('default' in r ? { default: r.default } : {}),
    });
    if (r.node.properties) fields(r.node, r.file, path, out);
    if (items?.node.properties) fields(items.node, items.file, `${path}[]`, out);
    if (extra) fields(extra.node, extra.file, `${path}.ID`, out);
  }
  return out;
}

const schemaFields = fields(schemas['policy.schema.json']!, 'policy.schema.json', '', []);
const table = new Map(
  docTable('docs/policy.md', 'Field reference').map((r) => [/`([^`]+)`/.exec(r[0]!)![1]!, r[2]!]),
);

// A policy that leaves out every optional field; its loaded form holds the program's defaults.
const minimal = parsePolicy(
  `apiVersion: isolate/v1
kind: HostPolicy
workloads:
  - { name: kafka, class: exclusive, cores: 1, match: { cgroup: /kafka.slice } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
raid: {}
`,
  'minimal.yaml',
);
// Required by an if/then of the workload definition (cores for exclusive workloads).
const workloadDef = (schemas['policy.schema.json']!.$defs as Record<string, Node>).workload!;
const CONDITIONAL = new Set(
  ((workloadDef.allOf ?? []) as Node[]).flatMap((c) =>
    (((c.then as Node | undefined)?.required ?? []) as string[]).map((n) => `workloads[].${n}`),
  ),
);
const GIVEN = new Set(['apiVersion', 'kind', 'workloads', 'raid']);

function programDefault(path: string): unknown {
  let v: unknown = minimal;
  for (const seg of path.split('.')) {
    if (v === undefined || v === null) return undefined;
    v = seg.endsWith('[]')
      ? (v as Node)[seg.slice(0, -2)] && ((v as Node)[seg.slice(0, -2)] as unknown[])[0]
      : (v as Node)[seg];
  }
  return v;
}

describe('docs/policy.md field reference', () => {
  it('lists exactly the schema fields', () => {
    expect(schemaFields.length).toBeGreaterThan(30);
    expect([...table.keys()].sort()).toEqual(schemaFields.map((f) => f.path).sort());
  });

  for (const f of schemaFields) {
    it(`${f.path}: default`, () => {
      const cell = table.get(f.path)!;
      if (f.path.startsWith('raid.controllers.ID.')) {
        // An override defaults to the host-wide value, whatever the shared definition says.
        expect(cell).toBe(`\`raid.${f.path.split('.').at(-1)}\``);
        return;
      }
      const underDefaultedParent = schemaFields.some(
        (p) => p.default !== undefined && typeof p.default === 'object' && f.path.startsWith(`${p.path}.`),
      );
      const program = f.leaf || f.default !== undefined ? programDefault(f.path) : undefined;
      if (f.default !== undefined) {
        expect(parseYaml(/^`(.*)`$/.exec(cell)?.[1] ?? `"${cell}" is not a value`)).toEqual(f.default);
        expect(program, `${f.path}: the program's default differs from the schema's`).toEqual(f.default);
      } else if (f.required) {
        expect(cell).toMatch(/^required/);
      } else if (CONDITIONAL.has(f.path)) {
        expect(cell).toMatch(/^required for `exclusive`/);
      } else {
        expect(cell).toBe('—');
        if (!GIVEN.has(f.path.split(/[.[]/)[0]!) && !underDefaultedParent) {
          expect(
            program,
            `${f.path}: the program fills in a default the schema does not state`,
          ).toBeUndefined();
        }
      }
    });
  }
});
