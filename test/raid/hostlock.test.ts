// The RAID host lock lives in /run/lock or nowhere: on a host without /run/lock it is refused, never
// moved to a temp directory where another user could create the lock first. /run/lock is made to
// look missing here (this machine has one, and a test must not touch it).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

vi.mock('node:fs', async (original) => {
  const fs = await original<typeof import('node:fs')>();
  const hidden = (p: unknown) => typeof p === 'string' && (p === '/run/lock' || p.startsWith('/run/lock/'));
  return { ...fs, existsSync: (p: import('node:fs').PathLike) => !hidden(p) && fs.existsSync(p) };
});

const { acquireHostLock, lockPath } = await import('../../src/raid/hostlock.js');

const saved = process.env.ISOLATE_RAID_LOCK;
afterEach(() => {
  if (saved === undefined) delete process.env.ISOLATE_RAID_LOCK;
  else process.env.ISOLATE_RAID_LOCK = saved;
});

describe('the RAID host lock on a host without /run/lock', () => {
  it('is still /run/lock/isolate-raid.lock, not a file in a temp directory', () => {
    delete process.env.ISOLATE_RAID_LOCK;
    expect(lockPath()).toBe('/run/lock/isolate-raid.lock');
  });

  it('is refused in one line naming the lock and the fix when its directory is missing', async () => {
    const missing = join(mkdtempSync(join(tmpdir(), 'isolate-hostlock-')), 'gone', 'isolate-raid.lock');
    process.env.ISOLATE_RAID_LOCK = missing;
    await expect(acquireHostLock(0)).rejects.toThrow(
      `RAID lock ${missing}: cannot create it (ENOENT); point ISOLATE_RAID_LOCK at a file in an existing directory only root can write (default /run/lock/isolate-raid.lock)`,
    );
  });
});
