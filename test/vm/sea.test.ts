// The single executable (`npm run package`) in a guest that has no Node.js at all: only busybox, the
// executable and the C libraries it links. It must read the real kernel's topology, plan, apply to
// the real cgroup2 hierarchy, converge, audit, and look for RAID controllers.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { LAYOUTS } from './harness/index.js';
import { REPO_ROOT } from './harness/paths.js';
import { hostBinaryFiles, snapLines } from './support/guest.js';
import { standinPolicy } from './support/policy.js';
import { vmScenario } from './support/scenario.js';

const POLICY = standinPolicy({ kafka: 'slice', batch: [{ name: 'yarn', match: 'yarn', weight: 10 }] });

const SCRIPT = `
. /harness/lib.sh
isolate() { /usr/bin/isolate "$@"; }
fake_host
mkdir -p $CG/kafka.slice
sec nonode; command -v node || echo "no node"; ls /opt/isolate 2>&1; endsec nonode
run version isolate --version
run topology isolate topology --json
run plan isolate plan --dry-run --json
run apply isolate apply --yes --json
run plan2 isolate plan --dry-run --detailed-exitcode
run check isolate check --json
run raid isolate raid show --json
state after
`;

describe('the packaged executable on a real kernel without Node.js', () => {
  const { s } = vmScenario('sea', async () => {
    const out = mkdtempSync(join(tmpdir(), 'isolate-sea-vm-'));
    await execa(process.execPath, ['scripts/package.mjs', '--out', out, '--no-deb'], { cwd: REPO_ROOT });
    return {
      layout: LAYOUTS.twoSocketSmt2,
      includeProject: false,
      script: SCRIPT,
      policy: POLICY,
      files: hostBinaryFiles(join(out, 'isolate'), '/usr/bin/isolate'),
      timeoutMs: 900_000,
    };
  });

  it('the guest has no node and no project tree', () => {
    expect(s('nonode')).toContain('no node');
    expect(s('nonode')).toMatch(/No such file or directory/);
    expect(s('version-rc').trim(), s('version')).toBe('0');
  });

  it('topology and plan --dry-run read the guest kernel', () => {
    expect(s('topology-rc').trim(), s('topology')).toBe('0');
    expect(JSON.parse(s('topology')).cpus).toHaveLength(8);
    expect(s('plan-rc').trim(), s('plan')).toBe('0');
    expect(JSON.parse(s('plan')).changes.length).toBeGreaterThan(0);
  });

  it('apply writes the real cgroup2 files and the host converges', () => {
    expect(s('apply-rc').trim(), s('apply')).toBe('0');
    expect(JSON.parse(s('apply')).ok).toBe(true);
    expect(s('plan2-rc').trim(), s('plan2')).toBe('0');
    const snap = snapLines(s('after-snap'));
    expect(['2-3', '6-7']).toContain(snap.get('./kafka.slice/cpuset.cpus'));
    expect(snap.get('./hadoop-yarn/cpu.weight')).toBe('10');
  });

  it('check audits the host and raid show runs', () => {
    expect(['0', '1'], s('check')).toContain(s('check-rc').trim());
    expect(JSON.parse(s('check'))).toBeTypeOf('object');
    expect(s('raid-rc').trim(), s('raid')).toBe('0');
    expect(JSON.parse(s('raid')).controllers).toEqual([]);
  });
});
