// The agent runs with PrivateTmp=yes and ProtectHome=yes: in its own mount namespace /tmp is empty
// and /home hidden, so Kafka's default log.dirs=/tmp/kafka-logs is not the broker's there. Data paths
// are resolved in the host's namespace, PID 1's (`<root>/proc/1/root`, its `/proc/1/mountinfo`), when
// `<root>/proc/self/ns/mnt` and `<root>/proc/1/ns/mnt` differ; when the host's view cannot be reached,
// a directory under /tmp, /var/tmp or /home is unknown with the reason, never another directory's disk.
// The r630-kafka fixture with the namespace links an agent under systemd sees.
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readWorkloadDisks } from '../../src/topology/disks.js';
import { isolate } from '../cli/run.js';

const FIXTURES = join(import.meta.dirname, '../fixtures');
const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

/**
 * The r630-kafka host as the sandboxed agent sees it: its own mount namespace (an empty /tmp of its
 * own), the host's files under proc/1/root with the broker's default log directory in /tmp.
 */
function sandboxedAgentRoot(hostReachable = true): string {
  const root = mkdtempSync(join(tmpdir(), 'isolate-hostview-'));
  roots.push(root);
  cpSync(join(FIXTURES, 'sysfs/intel-2s-ht-split/sys/devices/system'), join(root, 'sys/devices/system'), {
    recursive: true,
  });
  cpSync(join(FIXTURES, 'disks/r630-kafka'), root, { recursive: true, verbatimSymlinks: true });
  mkdirSync(join(root, 'tmp'));
  writeFileSync(join(root, 'etc/kafka/server.properties'), 'broker.id=1\n');
  mkdirSync(join(root, 'proc/self/ns'), { recursive: true });
  mkdirSync(join(root, 'proc/1/ns'), { recursive: true });
  symlinkSync('mnt:[4026532555]', join(root, 'proc/self/ns/mnt'));
  symlinkSync('mnt:[4026531841]', join(root, 'proc/1/ns/mnt'));
  cpSync(join(root, 'proc/self/mountinfo'), join(root, 'proc/1/mountinfo'));
  if (hostReachable) {
    const host = join(root, 'proc/1/root');
    mkdirSync(join(host, 'tmp/kafka-logs'), { recursive: true });
    mkdirSync(join(host, 'etc/kafka'), { recursive: true });
    writeFileSync(join(host, 'etc/kafka/server.properties'), 'broker.id=1\n');
  }
  return root;
}

const fromConfig = (root: string) =>
  readWorkloadDisks(root, [
    { workload: 'kafka', source: { kind: 'kafkaConfig', file: '/etc/kafka/server.properties' } },
  ])[0]!;

describe("data directories are the host's, not the agent's sandbox's", () => {
  it("Kafka's default /tmp/kafka-logs resolves in the host's namespace to the root filesystem's disk", () => {
    const w = fromConfig(sandboxedAgentRoot());
    expect(w.dirs).toEqual([
      {
        path: '/tmp/kafka-logs',
        mount: { point: '/', fstype: 'ext4', source: '/dev/sda2', dev: '8:2' },
        layers: [{ name: 'sda2', kind: 'partition' }],
        disks: ['sda'],
      },
    ]);
    expect(w.findings.map((f) => f.message).filter((m) => /does not exist/.test(m))).toEqual([]);
  });

  it("when the host's view cannot be reached, a directory under /tmp or /home is unknown with the reason", () => {
    const root = sandboxedAgentRoot(false);
    const w = readWorkloadDisks(root, [
      {
        workload: 'kafka',
        source: { kind: 'paths', paths: ['/tmp/kafka-logs', '/home/kafka/data', '/data1/kafka-logs'] },
      },
    ])[0]!;
    const why = `isolate runs in a mount namespace of its own (mnt:[4026532555]; the host's is mnt:[4026531841]: the agent's PrivateTmp=/ProtectHome=) and cannot reach the host's through ${root}/proc/1/root (ENOENT)`;
    expect(w.findings.filter((f) => f.severity === 'unknown').map((f) => f.message)).toEqual([
      expect.stringContaining(`/tmp/kafka-logs: ${why}`),
      expect.stringContaining(`/home/kafka/data: ${why}`),
    ]);
    // A directory the sandbox does not hide is this namespace's and the host's alike.
    expect(w.dirs[2]!.disks).toEqual(['sda']);
  });

  it('plan (the ops path the agent plans with) shows the broker’s disk for the default log directory', () => {
    const root = sandboxedAgentRoot();
    const dir = mkdtempSync(join(tmpdir(), 'isolate-hostview-policy-'));
    roots.push(dir);
    const policy = join(dir, 'policy.yaml');
    writeFileSync(
      policy,
      `apiVersion: isolate/v1
kind: HostPolicy
workloads:
  - { name: kafka, class: exclusive, cores: 2, match: { cgroup: /kafka.slice }, disks: { kafkaConfig: /etc/kafka/server.properties } }
  - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
`,
    );
    const r = isolate(['plan', '--dry-run', '--json', '--root', root, '--policy', policy]);
    expect(r.code, r.stderr).toBe(0);
    const plan = JSON.parse(r.stdout);
    expect(plan.disks.kafka.dirs.map((d: { path: string; disks: string[] }) => [d.path, d.disks])).toEqual([
      ['/tmp/kafka-logs', ['sda']],
    ]);
  });
});
