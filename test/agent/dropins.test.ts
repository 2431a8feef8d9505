// The agent's watch on `systemctl set-property`'s drop-in directories (agent/dropins.ts), on a temp
// root: real inotify, a tree made and changed the way systemd does.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CONTROL_DIRS, DropInWatch } from '../../src/agent/dropins.js';

const roots: string[] = [];
const watches: DropInWatch[] = [];
afterEach(() => {
  for (const w of watches.splice(0)) w.close();
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function host() {
  const root = mkdtempSync(join(tmpdir(), 'isolate-dropins-'));
  roots.push(root);
  let changes = 0;
  const w = new DropInWatch(root, () => {
    changes++;
  });
  watches.push(w);
  const runtime = join(root, CONTROL_DIRS[0]);
  const persistent = join(root, CONTROL_DIRS[1]);
  /** Resolves once the watch has reported more than `n` changes (inotify is asynchronous). */
  const moreThan = async (n: number) => {
    const until = Date.now() + 5000;
    while (changes <= n && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    return changes;
  };
  return { root, w, runtime, persistent, changes: () => changes, moreThan };
}

describe('DropInWatch', () => {
  it('watches nothing until systemd makes a control directory, then it and each unit directory in it', async () => {
    const h = host();
    h.w.refresh();
    expect(h.w.watched).toEqual([]);
    // The first `systemctl set-property --runtime kafka.service AllowedCPUs=2-3`.
    mkdirSync(join(h.runtime, 'kafka.service.d'), { recursive: true });
    writeFileSync(join(h.runtime, 'kafka.service.d/50-AllowedCPUs.conf'), '[Service]\nAllowedCPUs=2-3\n');
    h.w.refresh();
    expect(h.w.watched).toEqual([h.runtime, join(h.runtime, 'kafka.service.d')]);
    // The same value set again: no cgroup file changes, the drop-in is written anew.
    const before = h.changes();
    writeFileSync(join(h.runtime, 'kafka.service.d/50-AllowedCPUs.conf'), '[Service]\nAllowedCPUs=2-3\n');
    expect(await h.moreThan(before)).toBeGreaterThan(before);
  });

  it('follows unit directories made and removed later, and a control directory removed and made again', async () => {
    const h = host();
    mkdirSync(h.persistent, { recursive: true });
    h.w.refresh();
    expect(h.w.watched).toEqual([h.persistent]);
    // `systemctl set-property user.slice AllowedCPUs=0-1,4-5` (persistent): a new unit directory.
    let n = h.changes();
    mkdirSync(join(h.persistent, 'user.slice.d'));
    n = await h.moreThan(n);
    h.w.refresh();
    expect(h.w.watched).toEqual([h.persistent, join(h.persistent, 'user.slice.d')]);
    writeFileSync(join(h.persistent, 'user.slice.d/50-AllowedCPUs.conf'), '[Slice]\nAllowedCPUs=0-1,4-5\n');
    n = await h.moreThan(n);
    // `systemctl revert user.slice`: the unit directory goes, and with it its watch.
    rmSync(join(h.persistent, 'user.slice.d'), { recursive: true });
    n = await h.moreThan(n);
    h.w.refresh();
    expect(h.w.watched).toEqual([h.persistent]);
    // The control directory itself removed, and made again.
    rmSync(h.persistent, { recursive: true });
    await h.moreThan(n);
    h.w.refresh();
    expect(h.w.watched).toEqual([]);
    mkdirSync(join(h.persistent, 'kafka.slice.d'), { recursive: true });
    h.w.refresh();
    expect(h.w.watched).toEqual([h.persistent, join(h.persistent, 'kafka.slice.d')]);
  });
});
