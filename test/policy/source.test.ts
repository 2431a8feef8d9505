// The policy as a command reads it: its text, hashed on first use, and parsed once per text.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { policyOf, readPolicySource } from '../../src/ops/policy-source.js';

const POLICIES = join(import.meta.dirname, '../../policies');

describe('readPolicySource', () => {
  it('carries the sha256 of the exact text, in its JSON too (saved plans embed it)', () => {
    const path = join(POLICIES, 'default.yaml');
    const source = readPolicySource(path);
    const want = createHash('sha256').update(readFileSync(path, 'utf8')).digest('hex');
    expect(source.sha256).toBe(want);
    expect(JSON.parse(JSON.stringify(source))).toEqual({ path, text: source.text, sha256: want });
    expect({ ...source }.sha256).toBe(want);
  });

  it('a source parses its policy once for its life; a source read again parses the text it read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'isolate-source-'));
    const path = join(dir, 'policy.yaml');
    const text = readFileSync(join(POLICIES, 'default.yaml'), 'utf8');
    writeFileSync(path, text);
    const source = readPolicySource(path);
    const first = policyOf(source);
    expect(policyOf(source)).toBe(first);
    writeFileSync(path, text.replace(/cores: 1\b/, 'cores: 2'));
    expect(policyOf(source)).toBe(first);
    const second = policyOf(readPolicySource(path));
    expect(JSON.stringify(second)).not.toBe(JSON.stringify(first));
  });
});
