// The assignment isolate chose: each exclusive workload's CPUs, saved after every successful apply
// with the policy and topology they were chosen for and a checksum (kubelet's CPU manager checkpoint
// is the model). Plans start from it, not from the workload's own cpuset file: a hand-made write
// there is drift to revert, and the assignment changes only when the policy or the topology does.
import path from 'node:path';
import { journalDir } from '../apply/journal.js';
import type { Allocation } from '../model/plan.js';
import {
  matching,
  object,
  oneOf,
  record,
  refuseNewerFormat,
  sha256Hex,
  WORKLOAD_NAME,
} from '../model/shape.js';
import type { Topology } from '../model/topology.js';
import { ReadRefused, readTextFile } from '../sys/read.js';
import { describeUntrusted } from '../sys/trust.js';
import { readTrustedText, TrustRefused } from '../sys/trusted-read.js';
import { writeFileAtomic } from '../sys/write.js';
import { sha256 } from './policy-source.js';

/** The checkpoint format this isolate writes and the newest it reads (see JOURNAL_FORMAT). */
export const ASSIGNMENT_FORMAT = 1 as const;

interface Checkpoint {
  version: typeof ASSIGNMENT_FORMAT;
  /** sha256 of the policy text the CPUs were chosen for. */
  policy: string;
  /** topologyKey() of the host they were chosen on. */
  topology: string;
  /** Exclusive workload → its CPU list. */
  workloads: Record<string, string>;
  /** sha256 of the fields above, as written: a file edited or cut short is not believed. */
  checksum: string;
}

const CHECKPOINT = object({
  version: oneOf([ASSIGNMENT_FORMAT]),
  policy: sha256Hex,
  topology: sha256Hex,
  workloads: record(WORKLOAD_NAME, matching(/^[0-9,-]*$/, 'a CPU list', 65_536), 4096),
  checksum: sha256Hex,
});

export function assignmentPath(root: string): string {
  return path.join(journalDir(root), 'assignment.json');
}

/** What identifies a topology for an assignment: its cores, their CPUs and nodes. */
export function topologyKey(t: Topology): string {
  return sha256(JSON.stringify(t.cores.map((c) => [c.id, c.cpus.toString(), c.node])));
}

function checksumOf(c: Omit<Checkpoint, 'checksum'>): string {
  return sha256(JSON.stringify([c.version, c.policy, c.topology, c.workloads]));
}

/**
 * The assignment to plan from, when one was saved for this policy and topology; otherwise why not
 * (a note: the policy or topology changed, so the cores are chosen afresh; a warning: the file cannot
 * be believed). Neither, and no workloads: there is none yet. Throws NewerFormatError for a
 * checkpoint a newer isolate wrote.
 */
export function readAssignment(
  root: string,
  policySha256: string,
  topology: Topology,
): { workloads?: Record<string, string>; note?: string; warning?: string } {
  const file = assignmentPath(root);
  let data: unknown;
  try {
    // Read from the object judged (sys/trusted-read.ts): a checkpoint another user could have written
    // or swapped in would choose the cores root fences Kafka onto.
    data = JSON.parse(readTrustedText(file, { maxBytes: 1024 * 1024 }).text);
  } catch (err) {
    if (err instanceof ReadRefused && err.code === 'ENOENT') return {};
    const why =
      err instanceof ReadRefused
        ? err.reason
        : err instanceof TrustRefused
          ? `refused, ${describeUntrusted(err.untrusted)}`
          : 'not valid JSON';
    return {
      warning: `${file} cannot be read (${why}): the cores isolate assigned are unknown, so they are chosen from the live cpusets; the next apply writes it anew`,
    };
  }
  // A newer isolate's checkpoint is not "not believed" and overwritten: the host is that version's
  // to undo (its journal is refused alike), so planning stops here.
  refuseNewerFormat(data, file, 'assignment', ASSIGNMENT_FORMAT);
  const wrong = CHECKPOINT(data, 'assignment');
  const c = data as Checkpoint;
  if (wrong || checksumOf(c) !== c.checksum) {
    return {
      warning: `${file} is not believed (${wrong ?? 'its checksum does not match its content'}): the cores are chosen from the live cpusets; the next apply writes it anew`,
    };
  }
  if (c.policy !== policySha256) {
    return { note: 'the policy changed since isolate last assigned cores: they are chosen again' };
  }
  if (c.topology !== topologyKey(topology)) {
    return { note: 'the CPU topology changed since isolate last assigned cores: they are chosen again' };
  }
  return { workloads: c.workloads };
}

/** Save the exclusive workloads' CPUs of an allocation just applied (a no-op when unchanged). */
export async function saveAssignment(
  root: string,
  policySha256: string,
  topology: Topology,
  allocation: Allocation,
): Promise<void> {
  const workloads: Record<string, string> = {};
  for (const w of allocation.workloads) if (w.class === 'exclusive') workloads[w.name] = w.cpus.toString();
  const body = {
    version: ASSIGNMENT_FORMAT,
    policy: policySha256,
    topology: topologyKey(topology),
    workloads,
  };
  const checkpoint: Checkpoint = { ...body, checksum: checksumOf(body) };
  const text = `${JSON.stringify(checkpoint, null, 1)}\n`;
  try {
    if (readTextFile(assignmentPath(root), { maxBytes: 1024 * 1024 }) === text) return;
  } catch {
    // Missing or unreadable: written anew.
  }
  await writeFileAtomic(assignmentPath(root), text, { createParents: true });
}
