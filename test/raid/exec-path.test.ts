// A vendor tool is judged once the host lock is held, and the path executed is the real path judged,
// not the name: the lock may take a whole call's timeout to come, and a name judged before it could
// lead somewhere else by then. Real scripts, real links; the lock is a real one the test holds.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runTool } from '../../src/raid/exec.js';
import { acquireHostLock } from '../../src/raid/hostlock.js';

let base = '';
const saved = process.env.ISOLATE_RAID_LOCK;
beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'isolate-exec-path-'));
  process.env.ISOLATE_RAID_LOCK = join(base, 'isolate-raid.lock');
});
afterEach(() => {
  rmSync(base, { recursive: true, force: true });
  if (saved === undefined) delete process.env.ISOLATE_RAID_LOCK;
  else process.env.ISOLATE_RAID_LOCK = saved;
});

/** A tool script at `path` that prints the path the kernel ran it by ($0) and leaves `marker`. */
function tool(path: string, marker: string): string {
  writeFileSync(path, `#!/bin/sh\ntouch ${marker}\nprintf '%s' "$0"\n`);
  chmodSync(path, 0o755);
  return path;
}

describe.skipIf(process.getuid?.() !== 0)('the tool executed is the real path judged', () => {
  it('a tool named through a link runs by its judged real path', async () => {
    mkdirSync(join(base, 'v1'), { mode: 0o755 });
    const real = tool(join(base, 'v1/storcli64'), join(base, 'ran-v1'));
    const link = join(base, 'storcli64');
    symlinkSync('v1/storcli64', link);
    const r = await runTool(link, [], { cwd: base });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(real);
  });

  it('a link swapped to a tool others can write while the call waits for the lock is not run', async () => {
    mkdirSync(join(base, 'v1'), { mode: 0o755 });
    tool(join(base, 'v1/storcli64'), join(base, 'ran-v1'));
    const open = join(base, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    const evil = tool(join(open, 'storcli64'), join(base, 'ran-evil'));
    const link = join(base, 'storcli64');
    symlinkSync('v1/storcli64', link);
    const held = await acquireHostLock(0);
    if (typeof held !== 'function') throw new Error(`lock busy: ${held.heldBy}`);
    const call = runTool(link, [], { cwd: base, timeoutMs: 30_000 });
    // Let the call start and wait on the lock (today's main judged the link right then).
    await new Promise((r) => setTimeout(r, 300));
    rmSync(link);
    symlinkSync(evil, link);
    await held();
    await expect(call).rejects.toThrow(
      /refusing to execute as root: .*open is writable by its group and others/,
    );
    expect(existsSync(join(base, 'ran-evil'))).toBe(false);
  });
});
