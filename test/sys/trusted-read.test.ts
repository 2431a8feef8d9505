// What root reads and then trusts (a policy, a saved plan) is read once, from the object that was
// judged: a symbolic link another user owns in a sticky directory (/tmp) is their way to point root
// at any file at any moment, and a file swapped between the check and the read is never parsed.
// Real files, real links, real sticky directories; the other owner is a bare uid (1234).
import {
  chmodSync,
  chownSync,
  lchownSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readPolicySource } from '../../src/ops/policy-source.js';
import { readSavedPlan } from '../../src/ops/saved-plan.js';
import { ReadRefused } from '../../src/sys/read.js';
import { readTrustedText, TrustRefused } from '../../src/sys/trusted-read.js';
import { untrustedPath } from '../../src/sys/trust.js';
import { KAFKA_YARN_POLICY } from '../support/policies.js';

const OTHER = 1234;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A root-only directory holding the real policy, and a sticky world-writable one (a /tmp). */
function layout() {
  const base = mkdtempSync(join(tmpdir(), 'isolate-trusted-read-'));
  dirs.push(base);
  const etc = join(base, 'etc');
  mkdirSync(etc, { mode: 0o755 });
  const policy = join(etc, 'policy.yaml');
  writeFileSync(policy, KAFKA_YARN_POLICY, { mode: 0o644 });
  const tmp = join(base, 'tmp');
  mkdirSync(tmp);
  chmodSync(tmp, 0o1777);
  return { base, etc, policy, tmp };
}

/** A link in the sticky directory to `target`, owned by `uid`. */
function linkIn(tmp: string, target: string, uid: number): string {
  const link = join(tmp, 'policy.yaml');
  symlinkSync(target, link);
  lchownSync(link, uid, uid);
  return link;
}

describe.skipIf(process.getuid?.() !== 0)('a file root trusts is read from what was judged', () => {
  it('a link another user owns in a sticky directory is refused, though it leads to root’s own file', () => {
    const { tmp, policy } = layout();
    const link = linkIn(tmp, policy, OTHER);
    const why = untrustedPath(link);
    expect(why?.path).toBe(link);
    expect(why?.problem).toMatch(/symbolic link owned by uid 1234 in a directory others can write/);
    expect(() => readTrustedText(link, { maxBytes: 1 << 20 })).toThrow(TrustRefused);
  });

  it('the same link owned by root is followed (the control), and so is another user’s link in root’s directory', () => {
    const { tmp, etc, policy } = layout();
    const link = linkIn(tmp, policy, 0);
    expect(untrustedPath(link)).toBeNull();
    expect(readTrustedText(link, { maxBytes: 1 << 20 }).text).toBe(KAFKA_YARN_POLICY);
    // Only root can replace a name in a directory only root can write: the link's owner cannot.
    const inEtc = join(etc, 'current.yaml');
    symlinkSync(policy, inEtc);
    lchownSync(inEtc, OTHER, OTHER);
    expect(readTrustedText(inEtc, { maxBytes: 1 << 20 }).text).toBe(KAFKA_YARN_POLICY);
  });

  it('a file swapped between the judgement and the open is refused, its text never returned', () => {
    const { etc, policy } = layout();
    const other = join(etc, 'other.yaml');
    writeFileSync(other, 'workloads: []\n', { mode: 0o644 });
    const read = () =>
      readTrustedText(policy, {
        maxBytes: 1 << 20,
        beforeOpen: (real) => {
          expect(real).toBe(policy);
          renameSync(other, policy);
        },
      });
    expect(read).toThrow(/was replaced between its check and its read/);
  });

  it('the descriptor is judged too: a file made another user’s after the walk is refused', () => {
    const { policy } = layout();
    const read = () =>
      readTrustedText(policy, { maxBytes: 1 << 20, beforeOpen: () => chownSync(policy, OTHER, OTHER) });
    expect(read).toThrow(/is owned by uid 1234, not root/);
  });

  it('a missing file is a failed read, not a trust question', () => {
    const { etc } = layout();
    const missing = join(etc, 'nope.yaml');
    expect(() => readTrustedText(missing, { maxBytes: 1 << 20 })).toThrow(ReadRefused);
  });

  it('readPolicySource refuses the other user’s link; a dry run reads it with a warning', () => {
    const { tmp, policy } = layout();
    const link = linkIn(tmp, policy, OTHER);
    expect(() => readPolicySource(link)).toThrow(
      new RegExp(
        `^policy ${link}: ${link} is a symbolic link owned by uid 1234 in a directory others can write`,
      ),
    );
    const warnings: string[] = [];
    const source = readPolicySource(link, { warn: (m) => warnings.push(m) });
    expect(source.text).toBe(KAFKA_YARN_POLICY);
    expect(warnings[0]).toMatch(
      /^warning: policy .*symbolic link owned by uid 1234.*apply, the agent and check refuse it$/,
    );
  });

  it('readSavedPlan refuses a plan behind the other user’s link before reading a field of it', () => {
    const { tmp, etc } = layout();
    const plan = join(etc, 'plan.json');
    writeFileSync(plan, '{"version": 1}\n', { mode: 0o644 });
    const link = join(tmp, 'plan.json');
    symlinkSync(plan, link);
    lchownSync(link, OTHER, OTHER);
    expect(() => readSavedPlan(link)).toThrow(
      new RegExp(`^--plan ${link}: refused, ${link} is a symbolic link owned by uid 1234`),
    );
  });
});
