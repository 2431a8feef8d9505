// The shipped units pass `systemd-analyze verify`, and the agent's hardening keeps its exposure low
// (`systemd-analyze security --offline`). ExecStart points at a stand-in so no isolate need be installed.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { EXEC_ARGV } from '../../scripts/bundle-common.mjs';
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

  it("the agent's allocator settings are ones glibc takes (it ignores a misspelt tunable silently)", () => {
    const unit = readFileSync(join(UNITS, 'isolate.service'), 'utf8');
    const tunables = /^Environment=GLIBC_TUNABLES=(\S+)$/m.exec(unit)?.[1];
    expect(tunables).toBeDefined();
    const r = spawnSync('/lib64/ld-linux-x86-64.so.2', ['--list-tunables'], {
      encoding: 'utf8',
      env: { GLIBC_TUNABLES: tunables },
    });
    expect(r.status).toBe(0);
    // Each setting, as glibc reports it in force (hex).
    for (const [name, value] of tunables!.split(':').map((t) => t.split('='))) {
      expect(r.stdout).toMatch(
        new RegExp(`^${name!.replaceAll('.', '\\.')}: 0x${Number(value).toString(16)} `, 'm'),
      );
    }
  });

  it("the agent's NODE_OPTIONS takes the executable's young generation back to V8's default", () => {
    const unit = readFileSync(join(UNITS, 'isolate.service'), 'utf8');
    const nodeOptions = /^Environment=NODE_OPTIONS=(.+)$/m.exec(unit)?.[1];
    expect(nodeOptions).toBeDefined();
    const newSpace = (env: Record<string, string>): number =>
      Number(
        execFileSync(
          process.execPath,
          [
            ...EXEC_ARGV,
            '-p',
            "require('v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size",
          ],
          { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ...env } },
        ),
      );
    // The executable's flags alone: the larger young generation short commands start with.
    expect(newSpace({})).toBe(4 * 2 ** 20);
    // As the unit runs it (Node accepts the option in NODE_OPTIONS, and V8 lets the maximum win).
    expect(newSpace({ NODE_OPTIONS: nodeOptions! })).toBe(2 ** 20);
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
