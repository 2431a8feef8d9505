// The shipped units pass `systemd-analyze verify`, and the agent's hardening keeps its exposure low
// (`systemd-analyze security --offline`). ExecStart points at a stand-in so no isolate need be installed.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { aptInstall } from '../vm/harness/ensure.js';

const UNITS = join(import.meta.dirname, '../../systemd');
let dir: string;

beforeAll(() => {
  if (spawnSync('systemd-analyze', ['--version']).status !== 0) aptInstall(['systemd']);
  dir = mkdtempSync(join(tmpdir(), 'isolate-units-'));
  writeFileSync(join(dir, 'isolate'), '#!/bin/sh\n');
  chmodSync(join(dir, 'isolate'), 0o755);
  for (const u of ['isolate.service', 'isolate-check.service', 'isolate-check.timer']) {
    writeFileSync(
      join(dir, u),
      readFileSync(join(UNITS, u), 'utf8')
        .replaceAll('/usr/bin/isolate', join(dir, 'isolate'))
        // The man page comes with the .deb; verify looks it up on this machine.
        .replace(/man:isolate\(1\) ?/g, ''),
    );
  }
});

describe('systemd units', () => {
  it.each(['isolate.service', 'isolate-check.service', 'isolate-check.timer'])(
    '%s passes systemd-analyze verify',
    (u) => {
      const r = spawnSync('systemd-analyze', ['verify', join(dir, u)], { encoding: 'utf8' });
      expect(`${r.stdout}${r.stderr}`.trim()).toBe('');
      expect(r.status).toBe(0);
    },
  );

  it("caps the agent's memory with MemoryHigh=/MemoryMax= and tunes nothing of its runtime", () => {
    const unit = readFileSync(join(UNITS, 'isolate.service'), 'utf8');
    const high = /^MemoryHigh=(\d+)M$/m.exec(unit)?.[1];
    const max = /^MemoryMax=(\d+)M$/m.exec(unit)?.[1];
    expect(Number(high)).toBeGreaterThan(0);
    expect(Number(max)).toBeGreaterThan(Number(high));
    // Budgets are met by design: no allocator or V8 settings for the agent (issue 49).
    expect(unit).not.toMatch(/GLIBC_TUNABLES|NODE_OPTIONS/);
  });

  it('the agent is Type=notify with a watchdog, restarts on failure, and is hardened (exposure below 5)', () => {
    const unit = readFileSync(join(UNITS, 'isolate.service'), 'utf8');
    expect(unit).toMatch(/^Type=notify$/m);
    expect(unit).toMatch(/^WatchdogSec=\d+/m);
    expect(unit).toMatch(/^Restart=on-failure$/m);
    expect(unit).toMatch(/^ExecStart=\/usr\/bin\/isolate agent$/m);
    const out = execFileSync(
      'systemd-analyze',
      ['security', '--offline=true', join(dir, 'isolate.service')],
      {
        encoding: 'utf8',
      },
    );
    const m = /Overall exposure level for isolate\.service: (\d+\.\d+)/.exec(out);
    expect(m, out.slice(-500)).not.toBeNull();
    expect(Number(m![1])).toBeLessThan(5);
  });
});
