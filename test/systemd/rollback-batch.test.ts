// Rollback of systemd changes against a stand-in `systemctl` on PATH (a real process, spawned the way
// production spawns it) that models what matters here: `show` reports the drop-ins systemd loaded at
// its last daemon-reload (plus runtime set-property values at once), and every call is logged, so the
// number of daemon-reloads a rollback costs is counted, not assumed. Real systemd: test/vm/systemd-strict.
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApplyFailedError, applyChanges, EXIT, rollbackLast } from '../../src/apply/engine.js';
import { readJournal } from '../../src/apply/journal.js';
import type { ChangeExecutor } from '../../src/apply/executor.js';
import type { Change, RaidSetting, SystemdChange } from '../../src/model/plan.js';
import { assignmentOf } from '../../src/model/jvm-options.js';
import { planHost } from '../../src/planner/plan.js';
import { parsePolicy } from '../../src/policy/load.js';
import { parseShow, systemctl } from '../../src/systemd/systemctl.js';
import { fakeSystemctl, TmpRootSystemd } from '../support/fake-systemctl.js';
import { freshHost } from '../support/observed.js';
import { synthTopology, TWO_NODES_SMT2_SPLIT } from '../support/synthetic.js';

// S holds what systemd loaded at its last reload; `show` answers from it, defaults as systemd 252 prints them.
const FAKE = String.raw`#!/bin/bash
echo "$*" >> "$FAKE_LOG"
R=$FAKE_ROOT; S=$FAKE_STATE
case "$1" in
  daemon-reload)
    if [ -e "$FAKE_ROOT/fail-reload" ]; then echo "Failed to reload daemon: Connection timed out" >&2; exit 1; fi
    # init.scope is perpetual: like systemd 252, keep its runtime properties across a reload.
    rm -rf "$S.init"; [ -d "$S/run/init.scope.d" ] && cp -r "$S/run/init.scope.d" "$S.init"
    rm -rf "$S"; mkdir -p "$S/etc" "$S/run"
    cp -r "$R/etc/systemd/system/." "$S/etc/" 2>/dev/null
    cp -r "$R/run/systemd/system.control/." "$S/run/" 2>/dev/null
    [ -d "$S.init" ] && rm -rf "$S/run/init.scope.d" && cp -r "$S.init" "$S/run/init.scope.d"
    exit 0 ;;
  set-property)
    unit=$4; kv=$5; p=$(echo "$kv" | cut -d= -f1)
    for d in "$R/run/systemd/system.control" "$S/run"; do
      mkdir -p "$d/$unit.d"; printf '[Service]\n%s\n' "$kv" > "$d/$unit.d/50-$p.conf"
    done
    # Like systemd 252: a non-empty AllowedCPUs= is written into the unit's cgroup (the parent, the
    # root, has every CPU, so effective is the list); an empty one is not written at all.
    cg="$R/sys/fs/cgroup/$unit"; v=$(echo "$kv" | cut -d= -f2-)
    if [ "$p" = AllowedCPUs ] && [ -n "$v" ] && [ -d "$cg" ] && [ ! -e "$R/kernel-stuck" ]; then
      echo "$v" | tr ' ' ',' > "$cg/cpuset.cpus"
      echo "$v" | tr ' ' ',' > "$cg/cpuset.cpus.effective"
    fi
    exit 0 ;;
  show)
    # show -p P1 [-p P2 ...] -- UNIT [UNIT ...]: one block per unit, in argument order, blank-line separated.
    shift; props=; while [ "$1" = -p ]; do props="$props $2"; shift 2; done; [ "$1" = -- ] && shift
    first=1
    for unit in "$@"; do
      # FAKE_ONE_BLOCK: an answer of an unexpected shape (one block for many units).
      [ $first = 0 ] && [ -n "$FAKE_ONE_BLOCK" ] && break
      [ $first = 1 ] || echo; first=0
      for p in $props; do
        [ "$p" = LoadState ] && { echo "LoadState=loaded"; continue; }
        # Environment= accumulates across drop-ins (a later assignment of a name wins at start); each
        # is printed as written, which is systemd's own quoting for values without % or $.
        if [ "$p" = Environment ]; then
          echo "Environment=$(cat "$S/etc/$unit.d"/*.conf "$S/run/$unit.d"/*.conf 2>/dev/null | sed -n 's/^Environment=//p' | paste -sd' ')"
          continue
        fi
        case "$p" in Slice) v=system.slice ;; MemoryLow) v=0 ;; ControlGroup) v="/$unit" ;; *) v='' ;; esac
        for f in "$S/etc/$unit.d"/*.conf "$S/run/$unit.d"/*.conf; do
          [ -f "$f" ] || continue
          l=$(grep "^$p=" "$f" | tail -1)
          if [ -n "$l" ]; then v=$(echo "$l" | cut -d= -f2-); fi
        done
        echo "$p=$v"
      done
    done
    exit 0 ;;
esac
echo "fake systemctl: unexpected $*" >&2; exit 1
`;

let root: string;
let log: string;
let restore: () => Promise<void>;
const calls = async () => (await readFile(log, 'utf8').catch(() => '')).split('\n').filter(Boolean);
const reloads = async () => (await calls()).filter((c) => c === 'daemon-reload').length;
const show = async (unit: string, p: string) => {
  const exec = new TmpRootSystemd(root);
  return exec.read({ backend: 'systemd', target: unit, setting: p, from: null, to: '' } as SystemdChange);
};

/** The properties and units of one logged `show -p A -p B -- U1 U2` call, sorted. */
const showCall = (line: string) => {
  const [head = '', units = ''] = line.split(' -- ');
  return {
    props: [...head.matchAll(/-p (\S+)/g)].map((m) => m[1]!).sort(),
    units: units.split(' ').filter(Boolean).sort(),
  };
};

const sd = (target: string, setting: string, from: string | null, to: string): Change =>
  ({ backend: 'systemd', target, setting, from, to }) as SystemdChange;
const STRICT: Change[] = [
  sd('kafka.service', 'Slice', 'system.slice', 'kafka.slice'),
  sd('kafka.slice', 'AllowedCPUs', '', '2-3'),
  sd('kafka.slice', 'MemoryLow', '0', '1073741824'),
  sd('system.slice', 'AllowedCPUs', '', '0-1 4-7'),
  sd('user.slice', 'AllowedCPUs', '', '0-1 4-7'),
];
const ISOLATE_FILES = [
  'etc/systemd/system/kafka.service.d/50-isolate-slice.conf',
  'run/systemd/system.control/kafka.slice.d/50-AllowedCPUs.conf',
  'run/systemd/system.control/kafka.slice.d/50-MemoryLow.conf',
  'run/systemd/system.control/system.slice.d/50-AllowedCPUs.conf',
  'run/systemd/system.control/user.slice.d/50-AllowedCPUs.conf',
];
const OPERATOR_FILES = [
  'etc/systemd/system/kafka.service.d/10-operator.conf',
  'run/systemd/system.control/kafka.service.d/50-CPUWeight.conf',
];

beforeEach(async () => {
  ({ root, log, restore } = await fakeSystemctl(FAKE, 'isolate-sdrb-'));
  // The operator's own drop-in and runtime property, loaded before isolate runs.
  const etc = path.join(root, 'etc/systemd/system/kafka.service.d');
  const run = path.join(root, 'run/systemd/system.control/kafka.service.d');
  await mkdir(etc, { recursive: true });
  await mkdir(run, { recursive: true });
  await writeFile(path.join(etc, '10-operator.conf'), '[Service]\nEnvironment=OPERATOR_SETTING=1\n');
  await writeFile(path.join(run, '50-CPUWeight.conf'), '[Service]\nCPUWeight=200\n');
  await mkdir(path.join(root, 'state/etc'), { recursive: true });
  await cp(path.join(root, 'etc/systemd/system'), path.join(root, 'state/etc'), { recursive: true });
  await cp(path.join(root, 'run/systemd/system.control'), path.join(root, 'state/run'), { recursive: true });
});

afterEach(() => restore());

async function applyStrict(): Promise<void> {
  const r = await applyChanges({ root, changes: STRICT, executors: { systemd: new TmpRootSystemd(root) } });
  expect(r.changed).toBe(STRICT.length);
  for (const f of ISOLATE_FILES) expect(existsSync(path.join(root, f)), f).toBe(true);
  expect(await show('kafka.service', 'Slice')).toBe('kafka.slice');
  await rm(log, { force: true });
}

async function expectRolledBack(): Promise<void> {
  for (const f of ISOLATE_FILES) expect(existsSync(path.join(root, f)), f).toBe(false);
  for (const f of OPERATOR_FILES) expect(existsSync(path.join(root, f)), f).toBe(true);
  expect(await show('kafka.service', 'Slice')).toBe('system.slice');
  expect(await show('kafka.service', 'CPUWeight')).toBe('200');
  expect(await show('kafka.slice', 'AllowedCPUs')).toBe('');
  expect(await show('kafka.slice', 'MemoryLow')).toBe('0');
  expect(await show('system.slice', 'AllowedCPUs')).toBe('');
  expect((await readJournal(root))?.state).toBe('rolled-back');
}

describe('systemd rollback: every drop-in removed, then one daemon-reload', () => {
  it('rolls back a strict layout of 5 drop-ins with exactly one daemon-reload, then reads each back', async () => {
    await applyStrict();
    const r = await rollbackLast({ root, executors: { systemd: new TmpRootSystemd(root) } });
    expect(r).toMatchObject({ undone: STRICT.length, nothing: false });
    expect(await reloads()).toBe(1);
    // The reload comes after every removal: the read-backs follow it.
    const c = await calls();
    expect(c.indexOf('daemon-reload')).toBe(0);
    // All five read back by one show of the four units (one process each before), then where the
    // unit moved by Slice= runs now (a note if it still runs in its own slice).
    expect(c.slice(1)).toHaveLength(2);
    expect(c[2]).toBe('show -p ControlGroup -- kafka.service');
    expect(showCall(c[1]!)).toEqual({
      props: ['AllowedCPUs', 'ControlGroup', 'LoadState', 'MemoryLow', 'Slice'],
      units: ['kafka.service', 'kafka.slice', 'system.slice', 'user.slice'],
    });
    await expectRolledBack();
  });

  it('a show of many units that does not answer one block per unit is not trusted: one show per change', async () => {
    await applyStrict();
    process.env.FAKE_ONE_BLOCK = '1';
    try {
      const exec = new TmpRootSystemd(root);
      expect(await exec.readMany(STRICT)).toEqual(['kafka.slice', '2-3', '1073741824', '0-1 4-7', '0-1 4-7']);
      const shows = (await calls()).filter((x) => x.startsWith('show '));
      expect(shows).toHaveLength(1 + STRICT.length);
    } finally {
      delete process.env.FAKE_ONE_BLOCK;
    }
  });

  it('apply: pre-flight reads every unit in one show; each write is read live before and after', async () => {
    await applyChanges({ root, changes: STRICT, executors: { systemd: new TmpRootSystemd(root) } });
    const c = await calls();
    expect(c[0]).toBe(
      'show -p Slice -p AllowedCPUs -p MemoryLow -p LoadState -p ControlGroup -- kafka.service kafka.slice system.slice user.slice',
    );
    // Then per step: its own show (the journal's previous value), the write, the read-back.
    const perStep = c.slice(1);
    expect(
      perStep.filter((x) => x.startsWith('show ') && x.includes(' -- kafka.service kafka.slice')),
    ).toEqual([]);
    for (const ch of STRICT.filter((x) => x.setting !== 'Slice')) {
      // ControlGroup: where apply then checks systemd put a CPU list in force (notInForce).
      const own = `show -p ${ch.setting} -p LoadState -p ControlGroup -- ${ch.target}`;
      const set = perStep.indexOf(`set-property --runtime -- ${ch.target} ${ch.setting}=${ch.to}`);
      expect(set, ch.target).toBeGreaterThan(0);
      expect(perStep[set - 1], ch.target).toBe(own);
      expect(perStep[set + 1], ch.target).toBe(own);
    }
    expect(c.filter((x) => x.startsWith('show '))).toHaveLength(1 + 2 * STRICT.length);
  });

  it('a reload that fails leaves the entries done; the next rollback removes nothing twice and reloads once', async () => {
    await applyStrict();
    // The state a crash between the removals and the reload leaves: files gone, systemd not told.
    await writeFile(path.join(root, 'fail-reload'), '');
    const first = await rollbackLast({ root, executors: { systemd: new TmpRootSystemd(root) } }).catch(
      (e) => e,
    );
    expect(first).toBeInstanceOf(ApplyFailedError);
    expect((first as ApplyFailedError).exitCode).toBe(EXIT.rollbackIncomplete);
    expect((first as ApplyFailedError).message).toMatch(/daemon-reload failed: Failed to reload daemon/);
    for (const f of ISOLATE_FILES) expect(existsSync(path.join(root, f)), f).toBe(false);
    expect(await show('kafka.service', 'Slice')).toBe('kafka.slice');
    const j = await readJournal(root);
    expect(j?.state).toBe('rollback-failed');
    expect(j?.entries.map((e) => e.status)).toEqual(STRICT.map(() => 'done'));

    await rm(path.join(root, 'fail-reload'));
    await rm(log, { force: true });
    const second = await rollbackLast({ root, executors: { systemd: new TmpRootSystemd(root) } });
    expect(second.undone).toBe(STRICT.length);
    expect(await reloads()).toBe(1);
    // Nothing was pinned at its default instead of removed.
    expect((await calls()).filter((x) => x.startsWith('set-property'))).toEqual([]);
    await expectRolledBack();
  });

  it('a property that had a value is set back at once; the operator’s drop-ins are never removed', async () => {
    await writeFile(
      path.join(root, 'run/systemd/system.control/kafka.service.d/50-AllowedCPUs.conf'),
      '[Service]\nAllowedCPUs=0-7\n',
    );
    await cp(path.join(root, 'run/systemd/system.control'), path.join(root, 'state/run'), {
      recursive: true,
    });
    const changes = [
      sd('kafka.service', 'AllowedCPUs', '0-7', '2-3'),
      sd('kafka.slice', 'AllowedCPUs', '', '2-3'),
    ];
    await applyChanges({ root, changes, executors: { systemd: new TmpRootSystemd(root) } });
    await rm(log, { force: true });
    await rollbackLast({ root, executors: { systemd: new TmpRootSystemd(root) } });
    expect(await calls()).toContain('set-property --runtime -- kafka.service AllowedCPUs=0-7');
    expect(await reloads()).toBe(1);
    expect(await show('kafka.service', 'AllowedCPUs')).toBe('0-7');
    expect(await show('kafka.slice', 'AllowedCPUs')).toBe('');
    for (const f of OPERATOR_FILES) expect(existsSync(path.join(root, f)), f).toBe(true);
  });

  it('another backend’s entries between systemd ones do not cost a second reload; they are undone first', async () => {
    // A backend whose undo is immediate, logging into the same file as the stand-in systemctl.
    const other: ChangeExecutor = {
      read: async () => 'on',
      satisfied: (c, live) => live === c.to,
      same: (_c, a, b) => a === b,
      apply: async () => ({}),
      undo: async (c) => {
        await writeFile(log, `other undo ${c.target}\n`, { flag: 'a' });
        return {};
      },
    };
    const raid = {
      backend: 'raid',
      target: 'storcli:/c0/v0',
      setting: 'writeCache' as RaidSetting,
      from: 'on',
      to: 'off',
    } as Change;
    const changes = [STRICT[1]!, raid, STRICT[3]!];
    const execs = { systemd: new TmpRootSystemd(root), raid: other };
    await applyChanges({ root, changes, executors: execs });
    await rm(log, { force: true });
    const r = await rollbackLast({ root, executors: execs });
    expect(r.undone).toBe(3);
    const c = await calls();
    expect(c.filter((x) => x === 'daemon-reload')).toHaveLength(1);
    expect(c.indexOf('other undo storcli:/c0/v0')).toBeLessThan(c.indexOf('daemon-reload'));
    expect(await show('kafka.slice', 'AllowedCPUs')).toBe('');
    expect(await show('system.slice', 'AllowedCPUs')).toBe('');
  });

  it('a perpetual unit (init.scope) keeps its property across the reload: set back through systemd, drop-in removed', async () => {
    const changes = [
      sd('init.scope', 'AllowedCPUs', '', '0-1 4-7'),
      sd('user.slice', 'AllowedCPUs', '', '0-1 4-7'),
    ];
    await applyChanges({ root, changes, executors: { systemd: new TmpRootSystemd(root) } });
    await rm(log, { force: true });
    const r = await rollbackLast({ root, executors: { systemd: new TmpRootSystemd(root) } });
    expect(r.undone).toBe(2);
    expect(await reloads()).toBe(1);
    expect(await calls()).toContain('set-property --runtime -- init.scope AllowedCPUs=');
    expect(await show('init.scope', 'AllowedCPUs')).toBe('');
    expect(existsSync(path.join(root, 'run/systemd/system.control/init.scope.d/50-AllowedCPUs.conf'))).toBe(
      false,
    );
    expect(existsSync(path.join(root, 'run/systemd/system.control/user.slice.d/50-AllowedCPUs.conf'))).toBe(
      false,
    );
  });

  it('systemd does not write a cpuset back when AllowedCPUs= goes: each unit gets every online CPU through systemd first, read back from the kernel', async () => {
    // A kernel under the test root: 8 CPUs online, the slices fenced as isolate's apply left them.
    const cg = path.join(root, 'sys/fs/cgroup');
    await mkdir(path.join(root, 'sys/devices/system/cpu'), { recursive: true });
    await writeFile(path.join(root, 'sys/devices/system/cpu/online'), '0-7\n');
    for (const u of ['kafka.slice', 'system.slice', 'user.slice'])
      await mkdir(path.join(cg, u), { recursive: true });
    await writeFile(path.join(cg, 'cpuset.cpus.effective'), '0-7\n');
    await applyStrict();
    const eff = (u: string) =>
      readFile(path.join(cg, u, 'cpuset.cpus.effective'), 'utf8').then((t) => t.trim());
    expect(await eff('system.slice')).toBe('0-1,4-7');
    expect(await eff('kafka.slice')).toBe('2-3');

    const r = await rollbackLast({ root, executors: { systemd: new TmpRootSystemd(root) } });
    expect(r).toMatchObject({ undone: STRICT.length, nothing: false });
    expect(await reloads()).toBe(1);
    const c = await calls();
    // Widened through systemd before the one reload; never a cgroup file written by isolate.
    const reload = c.indexOf('daemon-reload');
    for (const u of ['kafka.slice', 'system.slice', 'user.slice']) {
      const i = c.indexOf(`set-property --runtime -- ${u} AllowedCPUs=0-7`);
      expect(i, u).toBeGreaterThanOrEqual(0);
      expect(i, u).toBeLessThan(reload);
      expect(await eff(u), u).toBe('0-7');
    }
    await expectRolledBack();
  });

  it('a unit whose cgroup the kernel keeps fenced fails the rollback with the file named', async () => {
    const cg = path.join(root, 'sys/fs/cgroup');
    await mkdir(path.join(cg, 'system.slice'), { recursive: true });
    await mkdir(path.join(root, 'sys/devices/system/cpu'), { recursive: true });
    await writeFile(path.join(root, 'sys/devices/system/cpu/online'), '0-7\n');
    await writeFile(path.join(cg, 'cpuset.cpus.effective'), '0-7\n');
    await applyChanges({
      root,
      changes: [STRICT[3]!],
      executors: { systemd: new TmpRootSystemd(root) },
    });
    await writeFile(path.join(root, 'kernel-stuck'), '');
    const err = await rollbackLast({ root, executors: { systemd: new TmpRootSystemd(root) } }).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(ApplyFailedError);
    expect((err as Error).message).toMatch(
      /the kernel still fences \/sys\/fs\/cgroup\/system\.slice\/cpuset\.cpus\.effective=0-1,4-7 \(parent's 0-7; system\.slice AllowedCPUs=\)/,
    );
  });

  it("a FIFO at the Slice= drop-in's name is left in place with a note, never read (a blocking read would hang the rollback)", async () => {
    const exec = new TmpRootSystemd(root);
    const file = exec.sliceDropIn('kafka.service');
    await mkdir(path.dirname(file), { recursive: true });
    execFileSync('mkfifo', [file]);
    const change = {
      backend: 'systemd',
      target: 'kafka.service',
      setting: 'Slice',
      from: 'system.slice',
      to: 'kafka.slice',
    } as Change;
    const r = await exec.undo(change, 'system.slice');
    expect(r).toEqual({
      note: `${file} is not isolate's drop-in (a FIFO, not a regular file); left in place`,
    });
    expect(lstatSync(file).isFIFO()).toBe(true);
    expect(await calls()).toEqual([]);
  });
});

describe('the JVM options drop-in (jvm.activeProcessorCount: auto)', () => {
  const OPTS = 'etc/systemd/system/kafka.service.d/20-kafka-opts.conf';
  const JVM_FILE = 'etc/systemd/system/kafka.service.d/50-isolate-jvm.conf';
  const jvm = sd(
    'kafka.service',
    'JvmOptions',
    'KAFKA_OPTS=-Xmx1g -Dkafka.logs.dir=/var/log/kafka',
    'KAFKA_OPTS=-Xmx1g -Dkafka.logs.dir=/var/log/kafka -XX:ActiveProcessorCount=4',
  );
  /** The operator's KAFKA_OPTS, loaded before isolate runs. */
  beforeEach(async () => {
    for (const base of [root, path.join(root, 'state')]) {
      const f =
        base === root ? path.join(root, OPTS) : path.join(base, 'etc/kafka.service.d/20-kafka-opts.conf');
      await writeFile(f, '[Service]\nEnvironment="KAFKA_OPTS=-Xmx1g -Dkafka.logs.dir=/var/log/kafka"\n');
    }
  });
  const kafkaOpts = async () => {
    const exec = new TmpRootSystemd(root);
    return exec.read(jvm);
  };

  it('apply writes isolate’s drop-in (0644, with its header), reloads once and reads the merged variable back', async () => {
    const r = await applyChanges({ root, changes: [jvm], executors: { systemd: new TmpRootSystemd(root) } });
    expect(r.changed).toBe(1);
    const text = await readFile(path.join(root, JVM_FILE), 'utf8');
    expect(text).toMatch(/^# Written by isolate \(jvm\.activeProcessorCount: auto\)/);
    expect(text).toMatch(
      /^\[Service\]\nEnvironment="KAFKA_OPTS=-Xmx1g -Dkafka\.logs\.dir=\/var\/log\/kafka -XX:ActiveProcessorCount=4"$/m,
    );
    expect(lstatSync(path.join(root, JVM_FILE)).mode & 0o777).toBe(0o644);
    expect(await reloads()).toBe(1);
    expect(await kafkaOpts()).toBe(jvm.to);
    // The journal keeps the operator's value for the rollback.
    expect((await readJournal(root))?.entries[0]?.previous).toBe(jvm.from);
    // The operator's files are untouched.
    expect(await readFile(path.join(root, OPTS), 'utf8')).toMatch(/KAFKA_OPTS=-Xmx1g -Dkafka/);
  });

  it('rolled back with a strict layout: removed with the other drop-ins, still ONE daemon-reload, the operator’s value back', async () => {
    const all = [...STRICT, jvm];
    const r = await applyChanges({ root, changes: all, executors: { systemd: new TmpRootSystemd(root) } });
    expect(r.changed).toBe(all.length);
    expect(existsSync(path.join(root, JVM_FILE))).toBe(true);
    await rm(log, { force: true });
    const rb = await rollbackLast({ root, executors: { systemd: new TmpRootSystemd(root) } });
    expect(rb).toMatchObject({ undone: all.length, nothing: false });
    expect(await reloads()).toBe(1);
    expect(existsSync(path.join(root, JVM_FILE))).toBe(false);
    // The directory stays: the operator's files are in it.
    expect(existsSync(path.join(root, OPTS))).toBe(true);
    expect(await kafkaOpts()).toBe(jvm.from);
    await expectRolledBack();
  });

  it('planned from what systemd shows and applied, a later edit of KAFKA_OPTS is what the unit starts with; nothing is planned again; rollback restores', async () => {
    const policy = parsePolicy(
      `apiVersion: isolate/v1
kind: HostPolicy
reserved: { cores: 1 }
workloads:
  - name: kafka
    class: exclusive
    cores: 2
    match: { systemdUnit: kafka.service }
    jvm: { activeProcessorCount: auto, optionsVariable: KAFKA_OPTS }
`,
      'p.yaml',
    );
    const environment = async () => {
      const show = await systemctl(['show', '-p', 'LoadState', '-p', 'Environment', '--', 'kafka.service']);
      return parseShow(show)[0]?.Environment ?? '';
    };
    const plan = async () => {
      const o = freshHost(['system.slice']);
      const units = {
        'kafka.service': { Id: 'kafka.service', LoadState: 'loaded', Environment: await environment() },
      };
      o.systemd = { version: 252, units };
      return planHost(synthTopology(TWO_NODES_SMT2_SPLIT), policy, o).changes.filter(
        (c) => c.setting === 'JvmOptions',
      );
    };
    const planned = await plan();
    expect(planned).toHaveLength(1);
    await applyChanges({ root, changes: planned, executors: { systemd: new TmpRootSystemd(root) } });
    // The operator's edit, in the file where their KAFKA_OPTS lives, after isolate's apply.
    const edited = 'KAFKA_OPTS=-Xmx6g -javaagent:/opt/jmx_prometheus_javaagent.jar=7071:/etc/kafka/jmx.yml';
    await writeFile(path.join(root, OPTS), `[Service]\nEnvironment="${edited}"\n`);
    await systemctl(['daemon-reload']);
    // What the unit starts with: their new value, and isolate's flag beside it.
    expect(assignmentOf(await environment(), 'KAFKA_OPTS')).toBe(edited);
    expect(assignmentOf(await environment(), 'JAVA_TOOL_OPTIONS')).toBe(
      'JAVA_TOOL_OPTIONS=-XX:ActiveProcessorCount=4',
    );
    expect(await plan()).toEqual([]);
    const rb = await rollbackLast({ root, executors: { systemd: new TmpRootSystemd(root) } });
    expect(rb).toMatchObject({ undone: 1, nothing: false });
    expect(existsSync(path.join(root, JVM_FILE))).toBe(false);
    expect(assignmentOf(await environment(), 'KAFKA_OPTS')).toBe(edited);
    expect(assignmentOf(await environment(), 'JAVA_TOOL_OPTIONS')).toBe('');
  });

  it('a drop-in of an earlier isolate (a KAFKA_OPTS copy) rewritten as JAVA_TOOL_OPTIONS: one rollback removes it, the operator’s KAFKA_OPTS back', async () => {
    const exec = () => ({ systemd: new TmpRootSystemd(root) });
    await applyChanges({ root, changes: [jvm], executors: exec() });
    const now = sd('kafka.service', 'JvmOptions', '', 'JAVA_TOOL_OPTIONS=-XX:ActiveProcessorCount=4');
    await applyChanges({ root, changes: [now], executors: exec() });
    expect(await kafkaOpts()).toBe(jvm.from);
    const rb = await rollbackLast({ root, executors: exec() });
    expect(rb).toMatchObject({ nothing: false });
    expect(existsSync(path.join(root, JVM_FILE))).toBe(false);
    expect(await kafkaOpts()).toBe(jvm.from);
    expect((await rollbackLast({ root, executors: exec() })).nothing).toBe(true);
  });

  it('a drop-in of the operator’s that sets the variable later wins: apply fails naming the file and the fix', async () => {
    const later = '[Service]\nEnvironment="KAFKA_OPTS=-Xmx2g"\n';
    await writeFile(path.join(root, 'etc/systemd/system/kafka.service.d/60-later.conf'), later);
    const err = await applyChanges({
      root,
      changes: [{ ...jvm, from: 'KAFKA_OPTS=-Xmx2g' }],
      executors: { systemd: new TmpRootSystemd(root) },
    }).catch((e) => e);
    expect(err).toBeInstanceOf(ApplyFailedError);
    expect((err as Error).message).toMatch(
      /50-isolate-jvm\.conf: systemd reports "KAFKA_OPTS=-Xmx2g" for kafka\.service after daemon-reload, not ".*ActiveProcessorCount=4" \(a later drop-in of the operator's sets the variable\?\); add -XX:ActiveProcessorCount there, or remove jvm: from the policy/,
    );
  });

  it('a file at isolate’s name without isolate’s header is not removed by rollback', async () => {
    await applyChanges({ root, changes: [jvm], executors: { systemd: new TmpRootSystemd(root) } });
    const file = path.join(root, JVM_FILE);
    await writeFile(file, '[Service]\nEnvironment="KAFKA_OPTS=-Xmx1g -XX:ActiveProcessorCount=4"\n');
    const exec = new TmpRootSystemd(root);
    expect(await exec.undo(jvm, jvm.from)).toEqual({
      note: `${file} was not written by isolate; left in place`,
    });
    expect(existsSync(file)).toBe(true);
  });

  it('a value the variable would carry across lines is refused before anything is written', async () => {
    const bad = { ...jvm, to: 'KAFKA_OPTS=-Xmx1g\n[Service]\nExecStart=/bin/evil' };
    await expect(new TmpRootSystemd(root).apply(bad)).rejects.toThrow(/control character/);
    expect(existsSync(path.join(root, JVM_FILE))).toBe(false);
  });
});
