// ansible-lint (Debian's package) on the role, playbook and inventory with the strictest profile.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, expect, it } from 'vitest';
import { APT_WAIT_MS, ensureDebianTools } from '../support/apt.js';
import { ANSIBLE } from './support.js';

beforeAll(() => ensureDebianTools({ '/usr/bin/ansible-lint': 'ansible-lint' }), APT_WAIT_MS);

it('ansible-lint --profile production passes with no rule skipped', async () => {
  const r = await execa('ansible-lint', ['--profile', 'production', '--nocolor', '-p'], {
    cwd: ANSIBLE,
    reject: false,
    // Inside the run's temporary directory (test/support/build.ts), removed with it.
    env: { ANSIBLE_LOCAL_TEMP: join(tmpdir(), 'ansible-lint'), NO_COLOR: '1', LC_ALL: 'C.UTF-8' },
    timeout: 300_000,
  });
  expect(r.exitCode, r.stdout + r.stderr).toBe(0);
  expect(r.stdout + r.stderr).toMatch(/Passed with production profile: 0 failure\(s\), 0 warning\(s\)/);
}, 300_000);
