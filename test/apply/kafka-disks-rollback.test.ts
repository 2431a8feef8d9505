// Issue 60's scenario on a fixture host (a Dell R630's four Kafka disks, r630-kafka, under a cgroup2
// tree of plain files whose io files merge lines as the kernel's do, support/kernel-io.ts): io latency
// targets and weights for Kafka and caps and weights for YARN on every disk, then an agent-style
// correction of one drifted device, which folds the first apply into the baseline. One rollback must
// restore every device's line, and `rollback --dry-run` must list every io change it restores.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyChanges, rollbackLast } from '../../src/apply/engine.js';
import { baselinePath } from '../../src/apply/journal.js';
import type { Change } from '../../src/model/plan.js';
import { rollbackPreview } from '../../src/ops/apply.js';
import { buildPlan } from '../../src/ops/plan.js';
import { r630IoHost } from '../support/io-host.js';
import { KernelIo } from '../support/kernel-io.js';

/** The R630 with a unified cgroup tree whose Kafka and YARN groups have io enabled. */
function host(): string {
  const root = r630IoHost('isolate-kafka-disks-');
  // Someone's own cap on the NVMe disk before isolate: rollback gives it back, not a cleared line.
  writeFileSync(
    join(root, 'sys/fs/cgroup/hadoop-yarn/io.max'),
    '259:0 rbps=max wbps=max riops=5000 wiops=max\n',
  );
  return root;
}

function policy(root: string): string {
  const file = join(root, 'etc/isolate/policy.yaml');
  writeFileSync(
    file,
    `apiVersion: isolate/v1
kind: HostPolicy
workloads:
  - { name: kafka, class: exclusive, cores: 2, match: { cgroup: /kafka.slice }, disks: { kafkaConfig: /etc/kafka/server.properties }, io: { latency: 10ms, weight: 800 } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn }, io: { weight: 10, max: { wbps: 80MiB/s } } }
`,
  );
  return file;
}

/** Every file of the cgroup tree, trimmed (a plain file keeps the newline the kernel would not). */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const e of readdirSync(dir)) {
      const p = join(dir, e);
      if (statSync(p).isDirectory()) walk(p);
      else out[p.slice(root.length)] = readFileSync(p, 'utf8').trim();
    }
  };
  walk(join(root, 'sys/fs/cgroup'));
  return out;
}

const ioLine = (c: Change) => `${c.target} ${c.setting} ${c.to.split(' ')[0]}`;
const isIo = (c: Change) => c.setting.startsWith('io.');

describe("Kafka's disks: a rollback after an agent correction", () => {
  it('restores every device of every io file, and --dry-run lists every io change', async () => {
    const root = host();
    const policyPath = policy(root);
    const before = snapshot(root);
    const exec = new KernelIo(root);
    const first = (await buildPlan({ root, policyPath })).plan.changes;
    const io = first.filter(isIo).map(ioLine).sort();
    // Four disks: a latency target on each, weights where BFQ acts, a cap on each for YARN.
    expect(io.filter((l) => l.startsWith('/hadoop-yarn io.max')).length).toBe(4);
    expect(io.filter((l) => l.startsWith('/kafka.slice io.latency')).length).toBe(4);
    expect(io.length).toBeGreaterThanOrEqual(12);
    await applyChanges({ root, changes: first, executors: { cgroupfs: exec } });

    // Drift on one disk; the agent's correction folds the first apply into the baseline.
    const cg = join(root, 'sys/fs/cgroup');
    await exec.write(join(cg, 'kafka.slice/io.latency'), '8:16 target=max', {} as Change, 'drift');
    const again = (await buildPlan({ root, policyPath })).plan.changes;
    expect(again.map(ioLine)).toEqual(['/kafka.slice io.latency 8:16']);
    await applyChanges({ root, changes: again, executors: { cgroupfs: exec } });
    expect(statSync(baselinePath(root)).isFile()).toBe(true);

    const preview = await rollbackPreview({ root });
    expect(
      preview.steps
        .map((s) => s.change)
        .filter(isIo)
        .map(ioLine)
        .sort(),
    ).toEqual(io);

    const r = await rollbackLast({ root, executors: { cgroupfs: exec } });
    expect(r.notes).toEqual([]);
    expect(snapshot(root)).toEqual(before);
    expect(readFileSync(join(cg, 'hadoop-yarn/io.max'), 'utf8')).toBe(
      '259:0 rbps=max wbps=max riops=5000 wiops=max\n',
    );
  });
});
