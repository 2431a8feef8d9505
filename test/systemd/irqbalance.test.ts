// irqbalance's ban applied, kept and rolled back through the real engine and systemd backend against a
// stand-in `systemctl` on PATH (a real process, spawned the way production spawns it) that models
// Debian's irqbalance.service: EnvironmentFile=s read at daemon-reload, isolate's drop-in appending
// its own, and a restart giving irqbalance a new PID whose environment is what those files say.
// Every call is logged, so reloads and restarts are counted. Real systemd: the quiet-cores guest.
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyChanges, rollbackLast } from '../../src/apply/engine.js';
import { readJournal } from '../../src/apply/journal.js';
import { IRQBALANCE_DROP_IN, IRQBALANCE_ENV_FILE } from '../../src/model/irqbalance.js';
import type { Change, SystemdChange } from '../../src/model/plan.js';
import { fakeSystemctl, TmpRootSystemd } from '../support/fake-systemctl.js';

const FAKE = String.raw`#!/bin/bash
echo "$*" >> "$FAKE_LOG"
R=$FAKE_ROOT; D=$R/etc/systemd/system/irqbalance.service.d
files() {
  echo /etc/default/irqbalance
  [ -e "$R/loaded-dropin" ] && echo /etc/systemd/system/irqbalance.service.d/50-isolate-irqbalance.env
}
case "$1" in
  daemon-reload)
    if [ -e "$D/50-isolate-irqbalance.conf" ]; then touch "$R/loaded-dropin"; else rm -f "$R/loaded-dropin"; fi
    exit 0 ;;
  try-restart)
    [ -e "$R/active" ] || exit 0
    pid=$(( $(cat "$R/mainpid") + 1 )); echo $pid > "$R/mainpid"; mkdir -p "$R/proc/$pid"
    ( set -a; for f in $(files); do . "$R$f"; done; env -0 | grep -z '^IRQBALANCE' ) > "$R/proc/$pid/environ"
    exit 0 ;;
  show)
    shift; props=; while [ "$1" = -p ]; do props="$props $2"; shift 2; done
    for p in $props; do
      case "$p" in
        LoadState) echo LoadState=loaded ;;
        ActiveState) [ -e "$R/active" ] && echo ActiveState=active || echo ActiveState=inactive ;;
        MainPID) [ -e "$R/active" ] && echo "MainPID=$(cat "$R/mainpid")" || echo MainPID=0 ;;
        EnvironmentFiles) for f in $(files); do echo "EnvironmentFiles=$f (ignore_errors=yes)"; done ;;
      esac
    done
    exit 0 ;;
esac
echo "fake systemctl: unexpected $*" >&2; exit 1
`;

const OPERATOR = 'IRQBALANCE_ARGS="--interval=5"\n';
const V1 = 'IRQBALANCE_BANNED_CPULIST=6-7\nIRQBALANCE_ARGS="--interval=5 --banirq=33 --banirq=34"';
const V2 = 'IRQBALANCE_BANNED_CPULIST=6-7\nIRQBALANCE_ARGS="--interval=5 --banirq=51 --banirq=52"';
const ban = (from: string, to: string): Change =>
  ({
    backend: 'systemd',
    target: 'irqbalance.service',
    setting: 'IrqbalanceBans',
    from,
    to,
  }) as SystemdChange;

let root: string;
let log: string;
let restore: () => Promise<void>;
const calls = async () => (await readFile(log, 'utf8').catch(() => '')).split('\n').filter(Boolean);
const count = async (verb: string) => (await calls()).filter((c) => c.startsWith(verb)).length;
const environ = async () => {
  const pid = (await readFile(path.join(root, 'mainpid'), 'utf8')).trim();
  const text = await readFile(path.join(root, 'proc', pid, 'environ'), 'utf8');
  return Object.fromEntries(
    text
      .split('\0')
      .filter(Boolean)
      .map((kv) => kv.split(/=(.*)/s).slice(0, 2)),
  );
};
const executors = () => ({ systemd: new TmpRootSystemd(root) });

beforeEach(async () => {
  ({ root, log, restore } = await fakeSystemctl(FAKE, 'isolate-irqb-'));
  await mkdir(path.join(root, 'etc/default'), { recursive: true });
  await mkdir(path.join(root, 'etc/systemd/system'), { recursive: true });
  await writeFile(path.join(root, 'etc/default/irqbalance'), OPERATOR);
  await writeFile(path.join(root, 'active'), '');
  await writeFile(path.join(root, 'mainpid'), '800\n');
  await mkdir(path.join(root, 'proc/800'), { recursive: true });
  await writeFile(path.join(root, 'proc/800/environ'), 'IRQBALANCE_ARGS=--interval=5\0');
});

afterEach(() => restore());

describe("irqbalance's ban: applied, kept, rolled back", () => {
  it('writes both files, reloads once, restarts irqbalance once and checks the new process runs with the ban', async () => {
    const r = await applyChanges({ root, changes: [ban('', V1)], executors: executors() });
    expect(r.changed).toBe(1);
    const env = await readFile(path.join(root, IRQBALANCE_ENV_FILE), 'utf8');
    expect(env.startsWith('# Written by isolate')).toBe(true);
    expect(env).toContain(`${V1}\n`);
    expect(await readFile(path.join(root, IRQBALANCE_DROP_IN), 'utf8')).toContain(
      `[Service]\nEnvironmentFile=${IRQBALANCE_ENV_FILE}\n`,
    );
    expect(await count('daemon-reload')).toBe(1);
    expect(await count('try-restart')).toBe(1);
    expect(await environ()).toEqual({
      IRQBALANCE_BANNED_CPULIST: '6-7',
      IRQBALANCE_ARGS: '--interval=5 --banirq=33 --banirq=34',
    });
    // A second apply of the same plan finds it in force: no write, no restart.
    const again = await applyChanges({ root, changes: [ban('', V1)], executors: executors() });
    expect(again.changed).toBe(0);
    expect(await count('try-restart')).toBe(1);
    // The operator's file is theirs: never written.
    expect(await readFile(path.join(root, 'etc/default/irqbalance'), 'utf8')).toBe(OPERATOR);
  });

  it('irqbalance restarted by someone before the reload (running without the ban) is restarted again', async () => {
    await applyChanges({ root, changes: [ban('', V1)], executors: executors() });
    // A restart from an older environment: the new PID runs without isolate's values.
    await writeFile(path.join(root, 'mainpid'), '900\n');
    await mkdir(path.join(root, 'proc/900'), { recursive: true });
    await writeFile(path.join(root, 'proc/900/environ'), 'IRQBALANCE_ARGS=--interval=5\0');
    const r = await applyChanges({ root, changes: [ban(V1, V1)], executors: executors() });
    expect(r.changed).toBe(1);
    expect(await count('try-restart')).toBe(2);
    expect((await environ()).IRQBALANCE_BANNED_CPULIST).toBe('6-7');
  });

  it('a stopped irqbalance is not started: the ban is written for its next start', async () => {
    await rm(path.join(root, 'active'));
    await applyChanges({ root, changes: [ban('', V1)], executors: executors() });
    expect(existsSync(path.join(root, IRQBALANCE_ENV_FILE))).toBe(true);
    expect(await readFile(path.join(root, 'mainpid'), 'utf8')).toBe('800\n');
  });

  it('rollback after the agent rewrote it (new IRQ numbers) removes both files with one reload and one restart', async () => {
    await applyChanges({ root, changes: [ban('', V1)], executors: executors() });
    await applyChanges({ root, changes: [ban(V1, V2)], executors: executors() });
    expect((await environ()).IRQBALANCE_ARGS).toBe('--interval=5 --banirq=51 --banirq=52');
    await rm(log);
    const r = await rollbackLast({ root, executors: executors() });
    expect(r.nothing).toBe(false);
    // The journal keeps the value from before isolate's first write: none, exactly.
    expect(existsSync(path.join(root, IRQBALANCE_ENV_FILE))).toBe(false);
    expect(existsSync(path.join(root, IRQBALANCE_DROP_IN))).toBe(false);
    expect(await environ()).toEqual({ IRQBALANCE_ARGS: '--interval=5' });
    expect(await count('daemon-reload')).toBe(1);
    expect(await count('try-restart')).toBe(1);
    expect((await readJournal(root))?.state).toBe('rolled-back');
  });

  it('rollback of the first apply leaves no file of isolate and irqbalance running with the operator values only', async () => {
    await applyChanges({ root, changes: [ban('', V1)], executors: executors() });
    await rm(log);
    await rollbackLast({ root, executors: executors() });
    expect(existsSync(path.join(root, IRQBALANCE_ENV_FILE))).toBe(false);
    expect(existsSync(path.join(root, IRQBALANCE_DROP_IN))).toBe(false);
    expect(existsSync(path.dirname(path.join(root, IRQBALANCE_DROP_IN)))).toBe(false);
    expect(await environ()).toEqual({ IRQBALANCE_ARGS: '--interval=5' });
    expect(await count('daemon-reload')).toBe(1);
    expect(await count('try-restart')).toBe(1);
    expect(await readFile(path.join(root, 'etc/default/irqbalance'), 'utf8')).toBe(OPERATOR);
  });

  it("a drop-in at isolate's name that is not isolate's is left in place on rollback, and said", async () => {
    await applyChanges({ root, changes: [ban('', V1)], executors: executors() });
    await writeFile(path.join(root, IRQBALANCE_DROP_IN), '[Service]\nEnvironmentFile=/etc/mine\n');
    const r = await rollbackLast({ root, executors: executors() });
    expect(existsSync(path.join(root, IRQBALANCE_DROP_IN))).toBe(true);
    expect(JSON.stringify(r)).toContain('was not written by isolate; left in place');
  });
});
