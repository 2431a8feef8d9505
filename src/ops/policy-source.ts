// Which policy a command uses, and its exact text: a saved plan embeds the text and its hash, so
// `apply --plan` and `rollback` never depend on a file that may have changed or gone since.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UserError } from '../model/errors.js';
import type { Policy } from '../model/policy.js';
import { POLICY_MAX_BYTES, parsePolicy, policyReadError } from '../policy/load.js';
import { ReadRefused } from '../sys/read.js';
import { readTrustedText, type TrustedText, TrustRefused } from '../sys/trusted-read.js';
import { describeUntrusted, type Untrusted } from '../sys/trust.js';

export interface PolicySource {
  /** Where the text came from (a file path, or the bundled default's path). */
  path: string;
  text: string;
  /** sha256 of `text`, hex. */
  sha256: string;
  /** The policy parsed from `text`, when the source has parsed it already (see policyOf). */
  readonly policy?: Policy;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Explicit file (`default` names the bundled example); else `<root>/etc/isolate/policy.yaml`; else,
 * only when `allowBundled` (a dry run, which changes nothing), the bundled default with a notice.
 * Anything that changes or judges the host needs a policy the operator chose.
 */
export function resolvePolicyPath(
  root: string,
  policyPath?: string,
  notice?: (m: string) => void,
  allowBundled = false,
): string {
  if (policyPath === 'default') return bundledPolicy();
  if (policyPath) return policyPath;
  const host = join(root, 'etc/isolate/policy.yaml');
  if (existsSync(host)) return host;
  if (!allowBundled) {
    throw new UserError(
      `no policy: ${host} does not exist and no --policy was given; write one (examples in policies/), pass --policy FILE, or --policy default to use the bundled example deliberately`,
    );
  }
  const bundled = bundledPolicy();
  notice?.(`no --policy given and no ${host}; using the bundled default policy ${bundled}`);
  return bundled;
}

/**
 * policies/default.yaml of this installation, found from the running module (dist/ or src/) or, for the
 * packaged executable /usr/bin/isolate, in /usr/share/isolate/policies.
 */
export function bundledPolicy(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    for (const candidate of [
      join(dir, 'policies', 'default.yaml'),
      join(dir, 'share', 'isolate', 'policies', 'default.yaml'),
    ]) {
      if (existsSync(candidate)) return candidate;
    }
    dir = dirname(dir);
  }
  return resolve('policies/default.yaml');
}

/**
 * What to do with a policy another user could have written: `refuse` (apply, the agent, check, a saved
 * plan: a policy decides where root puts every process) or `warn` (a dry run, which changes nothing).
 */
export type PolicyTrust = 'refuse' | { warn: (message: string) => void };

export function readPolicySource(path: string, trust: PolicyTrust = 'refuse'): PolicySource {
  const text = readJudgedPolicy(path, trust);
  let hash: string | undefined;
  let policy: Policy | undefined;
  // Hashed on first use (a saved plan, the journal, the agent's reload): `plan --dry-run` never needs
  // it, and node:crypto's modules cost a short command ~13 ms to load (docs/install.md). Parsed on
  // first use too, once for the source's life: the agent plans with the same source every round.
  const source: PolicySource = {
    path,
    text,
    get sha256() {
      hash ??= sha256(text);
      return hash;
    },
  };
  // Not enumerable: a source's JSON (a saved plan embeds it) is its path, text and hash.
  Object.defineProperty(source, 'policy', {
    get: () => {
      policy ??= parsePolicy(text, path);
      return policy;
    },
  });
  return source;
}

/**
 * The policy file's text, read from the object that was judged (sys/trusted-read.ts): a link another
 * user could swap, or a file swapped between the check and the read, is never what root applies. A
 * missing or unreadable file is said as the loader says it.
 */
function readJudgedPolicy(path: string, trust: PolicyTrust): string {
  const why = (u: Untrusted) =>
    `policy ${path}: ${describeUntrusted(u)} — a policy decides where root puts every process, so only one that root alone can change is used`;
  let read: TrustedText;
  try {
    read = readTrustedText(path, { maxBytes: POLICY_MAX_BYTES, allowUntrusted: trust !== 'refuse' });
  } catch (err) {
    if (err instanceof TrustRefused) throw new UserError(why(err.untrusted));
    if (err instanceof ReadRefused) throw policyReadError(path, err);
    throw err;
  }
  if (read.untrusted && trust !== 'refuse') {
    trust.warn(`warning: ${why(read.untrusted)}; apply, the agent and check refuse it`);
  }
  return read.text;
}

/** The policy of a source: parsed by the source itself when it was read from a file, else now. */
export function policyOf(source: PolicySource): Policy {
  return source.policy ?? parsePolicy(source.text, source.path);
}
