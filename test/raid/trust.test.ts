// isolate runs vendor tools as root: only a binary that root owns, that nobody else can write, in
// directories nobody else can change (sshd's StrictModes, sudo's secure_path). Each way a tool's path
// is chosen — the vendors' install paths under --root, --tool-path, ISOLATE_RAID_TOOL_PATH — is
// refused the same way, with a finding that names the path, its owner and mode, and the fix; and the
// simulator's command log proves the binary never ran.
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isolate } from '../cli/run.js';
import { HAVE_FIXTURES } from './fixtures.js';
import { CV_9270, CV_9270_DETAIL, makeHost, type SimHost } from './host.js';

const SIM = join(import.meta.dirname, 'sim');
const VENDOR = '/opt/MegaRAID/storcli/storcli64';
const root = process.getuid?.() === 0;

let host: SimHost | null = null;
afterEach(() => {
  host?.cleanup();
  host = null;
});

/** A storcli host whose tool at `path` is a script that runs the simulator: its log shows any call. */
function storcliHost(): SimHost {
  return makeHost({
    drivers: ['megaraid_sas'],
    tools: { storcli: { controllers: [{ showAll: CV_9270, cv: CV_9270_DETAIL }] } },
  });
}

function wrapper(path: string, mode = 0o755): string {
  mkdirSync(dirname(path), { recursive: true });
  rmSync(path, { force: true });
  writeFileSync(path, `#!/bin/sh\nexec ${process.execPath} ${join(SIM, 'storcli.mjs')} "$@"\n`);
  chmodSync(path, mode);
  return path;
}

const show = (h: SimHost, args: string[] = [], env: Record<string, string> = {}) =>
  isolate(['raid', 'show', '--json', '--root', h.root, ...args], {
    env: { RAID_SIM_DIR: h.dir, ISOLATE_RAID_LOCK: join(h.dir, 'isolate-raid.lock'), ...env },
  });

describe.skipIf(!HAVE_FIXTURES || !root)('vendor tools are executed only when root alone owns them', () => {
  it('runs a root-owned tool at a vendor path (the control: the simulator logs its calls)', () => {
    host = storcliHost();
    wrapper(join(host.root, VENDOR));
    const r = show(host);
    expect(r.code, r.stderr).toBe(0);
    expect(host.log().length).toBeGreaterThan(0);
    expect(r.stdout).not.toMatch(/refusing to execute/);
  });

  it('refuses a world-writable tool at a vendor path, naming it, its owner and mode, and the fix', () => {
    host = storcliHost();
    const bin = wrapper(join(host.root, VENDOR), 0o777);
    const r = show(host);
    expect(host.log()).toEqual([]);
    expect(r.stdout).toContain(
      `refusing to execute as root: ${bin} is writable by its group and others (owner uid 0, mode 0777); fix: chmod go-w ${bin}`,
    );
    expect(r.stdout).toMatch(/controllers behind storcli unknown, nothing will be changed/);
  });

  it('refuses a tool owned by another user', () => {
    host = storcliHost();
    const bin = wrapper(join(host.root, VENDOR));
    chownSync(bin, 65534, 65534);
    const r = show(host);
    expect(host.log()).toEqual([]);
    expect(r.stdout).toContain(
      `${bin} is owned by uid 65534, not root (owner uid 65534, mode 0755); fix: chown root:root ${bin}`,
    );
  });

  it('refuses a root-owned tool in a directory others can write', () => {
    host = storcliHost();
    const bin = wrapper(join(host.root, VENDOR));
    chmodSync(dirname(bin), 0o757);
    const r = show(host);
    expect(host.log()).toEqual([]);
    expect(r.stdout).toContain(`${dirname(bin)} is writable by others (owner uid 0, mode 0757)`);
  });

  it('follows a symbolic link and refuses what it leads through', () => {
    host = storcliHost();
    const open = mkdtempSync(join(tmpdir(), 'isolate-open-'));
    try {
      chmodSync(open, 0o777);
      const target = wrapper(join(open, 'storcli64'));
      const bin = join(host.root, VENDOR);
      rmSync(bin, { force: true });
      symlinkSync(target, bin);
      const r = show(host);
      expect(host.log()).toEqual([]);
      expect(r.stdout).toContain(`${open} is writable by its group and others (owner uid 0, mode 0777)`);
    } finally {
      rmSync(open, { recursive: true, force: true });
    }
  });

  it('refuses the same through --tool-path and ISOLATE_RAID_TOOL_PATH', () => {
    host = storcliHost();
    rmSync(join(host.root, VENDOR), { force: true });
    const bin = wrapper(join(host.dir, 'tools/storcli64'), 0o775);
    for (const how of [
      show(host, ['--tool-path', `storcli=${bin}`]),
      show(host, [], { ISOLATE_RAID_TOOL_PATH: `storcli=${bin}` }),
    ]) {
      expect(how.stdout).toContain(
        `${bin} is writable by its group (owner uid 0, mode 0775); fix: chmod go-w`,
      );
    }
    expect(host.log()).toEqual([]);
    // The same path, made root's alone, runs.
    chmodSync(bin, 0o755);
    expect(show(host, ['--tool-path', `storcli=${bin}`]).code).toBe(0);
    expect(host.log().length).toBeGreaterThan(0);
  });
});
