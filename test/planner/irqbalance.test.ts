// irqbalance banned from the exclusive CPUs and the IRQs isolate pins, planned from Debian 12's
// irqbalance 1.9.2 as shipped (test/fixtures/irqbalance/1.9.2: its unit, /etc/default/irqbalance,
// usage and man page) over the quiet-cores fixture host (Kafka on CPUs 6-7, eth0 = IRQs 33-37).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { observeIrqs } from '../../src/irq/observe.js';
import {
  bannedVariable,
  IRQBALANCE_SETTING,
  parseEnvFile,
  parseVersion,
} from '../../src/model/irqbalance.js';
import type { Change } from '../../src/model/plan.js';
import { describeChange, describeUndo } from '../../src/model/describe.js';
import { planHost } from '../../src/planner/plan.js';
import { parsePolicy } from '../../src/policy/load.js';
import { execStartOf, irqbalanceFromShow } from '../../src/systemd/irqbalance.js';
import { readTopology } from '../../src/topology/read.js';
import { irqHost } from '../support/irq-host.js';
import { freshHost } from '../support/observed.js';

const FIX = path.resolve(import.meta.dirname, '../fixtures/irqbalance/1.9.2');
const fixture = (f: string) => readFileSync(path.join(FIX, f), 'utf8');

/** `systemctl show` of Debian's unit as systemd 252 prints it: EnvironmentFiles= once per file. */
function showOf(
  unitText: string,
  o: { active?: boolean; pid?: number; ours?: boolean; environment?: string } = {},
): string {
  const files = [...unitText.matchAll(/^EnvironmentFile=(-?)(\S+)$/gm)].map(
    (m) => `EnvironmentFiles=${m[2]} (ignore_errors=${m[1] ? 'yes' : 'no'})`,
  );
  if (o.ours)
    files.push(
      'EnvironmentFiles=/etc/systemd/system/irqbalance.service.d/50-isolate-irqbalance.env (ignore_errors=no)',
    );
  const exec = /^ExecStart=(\S+)(.*)$/m.exec(unitText)!;
  return [
    'LoadState=loaded',
    `ActiveState=${o.active === false ? 'inactive' : 'active'}`,
    `MainPID=${o.active === false ? 0 : (o.pid ?? 812)}`,
    `ExecStart={ path=${exec[1]} ; argv[]=${exec[1]}${exec[2]} ; ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }`,
    `Environment=${o.environment ?? ''}`,
    ...files,
  ].join('\n');
}

const POLICY = parsePolicy(
  `apiVersion: isolate/v1
kind: HostPolicy
strict: true
quiet: { irqs: true }
workloads:
  - name: kafka
    class: exclusive
    cores: 1
    near: [nic:eth0]
    match: { cgroup: /kafka }
  - name: yarn
    class: batch
    match: { cgroup: /hadoop-yarn }
`,
  'test.yaml',
);

interface Host {
  operator?: string;
  active?: boolean;
  ours?: string;
  environ?: Record<string, string>;
  version?: string | null;
  isolated?: string;
  /** `systemctl show -p Environment`'s value (the operator's `systemctl edit` Environment= lines). */
  environment?: string;
}

/** The fixture host with irqbalance.service observed as ops/observe.ts does, from files under root. */
function planWith(h: Host = {}) {
  const root = irqHost();
  mkdirSync(path.join(root, 'etc/default'), { recursive: true });
  writeFileSync(path.join(root, 'etc/default/irqbalance'), h.operator ?? fixture('default'));
  if (h.ours !== undefined) {
    const d = path.join(root, 'etc/systemd/system/irqbalance.service.d');
    mkdirSync(d, { recursive: true });
    writeFileSync(path.join(d, '50-isolate-irqbalance.env'), `# Written by isolate\n${h.ours}\n`);
  }
  mkdirSync(path.join(root, 'proc/812'), { recursive: true });
  const env = Object.entries(h.environ ?? {}).map(([k, v]) => `${k}=${v}\0`);
  writeFileSync(path.join(root, 'proc/812/environ'), `PATH=/usr/bin\0${env.join('')}`);
  if (h.isolated) writeFileSync(path.join(root, 'sys/devices/system/cpu/isolated'), `${h.isolated}\n`);
  const observed = freshHost();
  observed.irqs = observeIrqs(root);
  const { bin: _bin, ...unit } = irqbalanceFromShow(
    root,
    showOf(fixture('irqbalance.service'), {
      active: h.active,
      ours: h.ours !== undefined,
      environment: h.environment,
    }),
  );
  const version = h.version === undefined ? parseVersion(fixture('usage.txt'))!.join('.') : h.version;
  observed.irqs!.irqbalanceUnit = { ...unit, version };
  return planHost(readTopology(root), POLICY, observed);
}

const bans = (cs: Change[]) => cs.filter((c) => c.setting === IRQBALANCE_SETTING);

describe('irqbalance 1.9.2 as Debian ships it', () => {
  it('supports what isolate relies on: IRQBALANCE_BANNED_CPULIST, --banirq=N, $IRQBALANCE_ARGS in ExecStart=', () => {
    expect(parseVersion(fixture('usage.txt'))).toEqual([1, 9, 2]);
    expect(bannedVariable('1.9.2')).toBe('IRQBALANCE_BANNED_CPULIST');
    expect(bannedVariable('1.7.0')).toBe('IRQBALANCE_BANNED_CPUS');
    expect(fixture('usage.txt')).toContain('[--banirq= | -i <n>]');
    expect(fixture('man-environment.txt')).toContain('IRQBALANCE_BANNED_CPULIST');
    // Setting a ban replaces irqbalance's own default of isolated and adaptive-ticks CPUs.
    expect(fixture('man-environment.txt').replace(/\s+/g, ' ')).toContain(
      'If not specified, irqbalance use mask of isolated and adaptive-ticks CPUs',
    );
    const exec = execStartOf(
      showOf(fixture('irqbalance.service'))
        .split('\n')
        .find((l) => l.startsWith('ExecStart='))!,
    );
    expect(exec).toEqual({
      path: '/usr/sbin/irqbalance',
      argv: '/usr/sbin/irqbalance --foreground $IRQBALANCE_ARGS',
    });
    // The shipped /etc/default/irqbalance sets nothing (every line commented out).
    expect(parseEnvFile(fixture('default'))).toEqual({});
  });

  it('reads environment files as systemd does: quotes, comments, continuation; refuses what it cannot read', () => {
    expect(
      parseEnvFile(`# c\n; c\nA=1\nB="x \\"y\\" z"\nC='$raw'\nD=two words  \nE=long\\\nline\nexport F=6\n`),
    ).toEqual({ A: '1', B: 'x "y" z', C: '$raw', D: 'two words', E: 'longline', F: '6' });
    expect(parseEnvFile('A="open\n')).toEqual({ error: 'line 1: unterminated double quote' });
    expect(parseEnvFile('not an assignment\n')).toEqual({ error: 'line 1 is not KEY=VALUE' });
  });
});

describe('irqbalance in the quiet-cores plan', () => {
  it("bans Kafka's CPUs and eth0's IRQs through isolate's drop-in, first in the plan, and says why", () => {
    const p = planWith();
    const [c, ...rest] = bans(p.changes);
    expect(rest).toEqual([]);
    expect(c).toMatchObject({
      backend: 'systemd',
      target: 'irqbalance.service',
      from: '',
      to: 'IRQBALANCE_BANNED_CPULIST=6-7\nIRQBALANCE_ARGS="--banirq=33 --banirq=34 --banirq=35 --banirq=36 --banirq=37"',
    });
    expect(c!.note).toMatch(
      /^irqbalance \(pid 812\) rewrites IRQ affinities every 10 s: isolate's drop-in \/etc\/systemd\/system\/irqbalance.service.d\/50-isolate-irqbalance.conf bans the exclusive CPUs 6-7 \(banned: 6-7\) and the 5 IRQs isolate pins, merged with the operator's own values; irqbalance is restarted once to read it$/,
    );
    // Before any IRQ write: the restarted irqbalance no longer moves what they place.
    expect(p.changes.findIndex((x) => x === c)).toBeLessThan(
      p.changes.findIndex((x) => x.target === '/proc/irq/33'),
    );
    expect(describeChange(c!)).toBe(
      'drop-in /etc/systemd/system/irqbalance.service.d/50-isolate-irqbalance.conf: IRQBALANCE_BANNED_CPULIST=6-7 IRQBALANCE_ARGS="--banirq=33 --banirq=34 --banirq=35 --banirq=36 --banirq=37" (irqbalance restarted once)',
    );
    expect(describeUndo(c!, '')).toBe(
      'remove drop-in /etc/systemd/system/irqbalance.service.d/50-isolate-irqbalance.conf (irqbalance restarted once)',
    );
    expect(p.warnings.some((w) => w.startsWith('irqbalance'))).toBe(false);
  });

  it("merges the operator's own ban and arguments (union, never dropping theirs)", () => {
    const p = planWith({
      operator: 'IRQBALANCE_BANNED_CPULIST=0\nIRQBALANCE_ARGS="--interval=5 --banirq=35 -i 40"\n',
    });
    expect(bans(p.changes)[0]!.to).toBe(
      'IRQBALANCE_BANNED_CPULIST=0,6-7\nIRQBALANCE_ARGS="--interval=5 --banirq=35 -i 40 --banirq=33 --banirq=34 --banirq=36 --banirq=37"',
    );
  });

  it("merges the operator's Environment= lines (systemctl edit) under their EnvironmentFile=s, as systemd does", () => {
    // A PTP core the operator banned with `systemctl edit irqbalance`: kept in isolate's ban.
    const edit = planWith({
      environment: 'IRQBALANCE_BANNED_CPULIST=0-1 "IRQBALANCE_ARGS=--interval=5 --debug"',
    });
    expect(bans(edit.changes)[0]!.to).toBe(
      'IRQBALANCE_BANNED_CPULIST=0-1,6-7\nIRQBALANCE_ARGS="--interval=5 --debug --banirq=33 --banirq=34 --banirq=35 --banirq=36 --banirq=37"',
    );
    // EnvironmentFile= is applied after Environment=: the file's value is the one irqbalance runs with.
    const both = planWith({
      environment: 'IRQBALANCE_BANNED_CPULIST=0-1',
      operator: 'IRQBALANCE_BANNED_CPULIST=2\n',
    });
    expect(bans(both.changes)[0]!.to).toMatch(/^IRQBALANCE_BANNED_CPULIST=2,6-7\n/);
    // A property isolate cannot read: nothing written (their values would be dropped), and said.
    const bad = planWith({ environment: '"IRQBALANCE_BANNED_CPULIST=0-1' });
    expect(bans(bad.changes)).toEqual([]);
    expect(bad.warnings.find((w) => w.startsWith('irqbalance'))).toContain('Environment= cannot be read');
  });

  it("keeps irqbalance's own default ban (isolcpus=, nohz_full=) that setting a list would replace", () => {
    const p = planWith({ isolated: '3' });
    expect(bans(p.changes)[0]!.to).toMatch(/^IRQBALANCE_BANNED_CPULIST=3,6-7\n/);
  });

  it('an irqbalance before 1.8 gets the hex mask IRQBALANCE_BANNED_CPUS, with the operator mask kept', () => {
    const p = planWith({ version: '1.7.0', operator: 'IRQBALANCE_BANNED_CPUS=01\n' });
    expect(bans(p.changes)[0]!.to).toMatch(/^IRQBALANCE_BANNED_CPUS=000000c1\n/);
  });

  it('in place and running with it: nothing; running without it (started before): restarted once', () => {
    const value =
      'IRQBALANCE_BANNED_CPULIST=6-7\nIRQBALANCE_ARGS="--banirq=33 --banirq=34 --banirq=35 --banirq=36 --banirq=37"';
    const environ = {
      IRQBALANCE_BANNED_CPULIST: '6-7',
      IRQBALANCE_ARGS: '--banirq=33 --banirq=34 --banirq=35 --banirq=36 --banirq=37',
    };
    expect(bans(planWith({ ours: value, environ }).changes)).toEqual([]);
    const stale = bans(planWith({ ours: value }).changes);
    expect(stale).toHaveLength(1);
    expect(stale[0]).toMatchObject({ from: value, to: value });
    expect(stale[0]!.note).toBe(
      "irqbalance (pid 812) runs without isolate's ban (started before it was written): restarted once",
    );
  });

  it("the pinned IRQ numbers changed (a driver reload): isolate's file is rewritten from what it holds", () => {
    const old = 'IRQBALANCE_BANNED_CPULIST=6-7\nIRQBALANCE_ARGS="--banirq=50"';
    const c = bans(planWith({ ours: old }).changes)[0]!;
    expect(c.from).toBe(old);
    expect(c.to).toContain('--banirq=33');
    expect(c.to).not.toContain('--banirq=50');
  });

  it('not installed, or not running: nothing planned, and the plan says so', () => {
    const root = irqHost();
    const observed = freshHost();
    observed.irqs = observeIrqs(root);
    const { bin: _b, ...missing } = irqbalanceFromShow(root, 'LoadState=not-found\nActiveState=inactive\n');
    observed.irqs!.irqbalanceUnit = { ...missing, version: null };
    const p = planHost(readTopology(root), POLICY, observed);
    expect(bans(p.changes)).toEqual([]);
    expect(p.notes).toContain('irqbalance is not installed (no irqbalance.service): nothing planned for it');
    const stopped = planWith({ active: false });
    expect(bans(stopped.changes)).toEqual([]);
    expect(stopped.notes).toContain('irqbalance.service is not running: nothing planned for it');
  });

  it("a version or operator file it cannot read: not written (the operator's values would be lost), and said", () => {
    const p = planWith({ version: null });
    expect(bans(p.changes)).toEqual([]);
    expect(p.warnings.find((w) => w.startsWith('irqbalance'))).toMatch(
      /isolate does not write its ban, its version is unknown .* set IRQBALANCE_BANNED_CPULIST=6-7/,
    );
    const q = planWith({ operator: 'IRQBALANCE_ARGS="--policyscript=/x $(y)"\n' });
    expect(bans(q.changes)).toEqual([]);
    expect(q.warnings.find((w) => w.startsWith('irqbalance'))).toContain(
      "the operator's IRQBALANCE_ARGS holds characters isolate does not copy",
    );
  });
});
