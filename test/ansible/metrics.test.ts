// isolate_metrics: the role installs the agent's textfile-collector mode for hosts scraped through
// node_exporter. On a fixture host (its isolate_root; no unit of this machine is touched) the role
// creates node_exporter's textfile directory and writes the drop-in that replaces isolate.service's
// ExecStart=; the command line it names is then run as the agent (--once, the fixture's root) and
// writes isolate.prom there. Back to http removes the drop-in; isolate_state: absent removes the
// drop-in and the file (node_exporter would serve a file no agent renews).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { makeFakeHost } from '../support/fake-host.js';
import { ensureAnsible, makeLab, parseJson, playbook, type TestHost } from './support.js';
import { APT_WAIT_MS } from '../support/apt.js';

beforeAll(() => ensureAnsible(), APT_WAIT_MS);
vi.setConfig({ testTimeout: 300_000 });

const DIR = '/var/lib/prometheus/node-exporter';
const DROPIN = 'etc/systemd/system/isolate.service.d/50-isolate-metrics.conf';
const WRITE = "Write the agent's metrics for node_exporter's textfile collector";

/** The [Service] lines of a drop-in, as systemd reads them (comments and blank lines left out). */
const serviceLines = (text: string) =>
  text.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#') && l !== '[Service]');

describe('isolate_metrics: textfile', () => {
  const root = makeFakeHost('intel-2s-ht-split');
  const host: TestHost = {
    name: 'kafka-st-01',
    group: 'kafka_storm',
    root,
    // Agent mode; isolate's units stay this machine's own (isolate_manage_units: false from the lab).
    vars: { isolate_mode: 'agent' },
  };
  const lab = makeLab([host]);
  const run = async (vars: Record<string, unknown>, args: string[] = []) => {
    const r = await playbook(lab, ['-e', JSON.stringify(vars), ...args], { json: true });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    return parseJson(r);
  };

  it('check mode says the drop-in would be written, and writes nothing', async () => {
    const r = await run({ isolate_metrics: 'textfile' }, ['--check']);
    expect(r.tasks.get(WRITE)?.[host.name]?.changed).toBe(true);
    expect(existsSync(join(root, DROPIN))).toBe(false);
    expect(existsSync(join(root, DIR))).toBe(false);
  });

  it('writes the drop-in and the directory; the unit would run the agent with the textfile and no listener', async () => {
    const r = await run({ isolate_metrics: 'textfile' });
    expect(r.tasks.get(WRITE)?.[host.name]?.changed).toBe(true);
    expect(statSync(join(root, DIR)).isDirectory()).toBe(true);
    const lines = serviceLines(readFileSync(join(root, DROPIN), 'utf8'));
    // ExecStart= empties the packaged command before the new one (systemd refuses two for Type=notify).
    expect(lines).toEqual([
      'ExecStart=',
      `ExecStart=${lab.bin} agent --metrics-textfile ${DIR}/isolate.prom --no-metrics`,
      `ReadWritePaths=${DIR}`,
    ]);
    expect(statSync(join(root, DROPIN)).mode & 0o777).toBe(0o644);
    // That command line, as the agent runs it, on this fixture host (its root, its textfile directory).
    const argv = lines[1]!.slice('ExecStart='.length).split(' ');
    const file = join(root, DIR, 'isolate.prom');
    const args = argv.slice(1).map((a) => (a === `${DIR}/isolate.prom` ? file : a));
    const agent = spawnSync(argv[0]!, [...args, '--root', root, '--once', '--interval', '1s'], {
      env: { ...process.env, ISOLATE_LOG: 'off' },
      encoding: 'utf8',
      timeout: 120_000,
    });
    // --once exits with check's codes: the fixture's threads are not all fenced (a WARNING) at most.
    expect(agent.status, agent.stderr + agent.stdout).toBeLessThanOrEqual(1);
    expect(statSync(file).mode & 0o777).toBe(0o644);
    expect(readFileSync(file, 'utf8')).toMatch(/^isolate_policy_valid 1$/m);
    // Run again, nothing changes.
    const again = await run({ isolate_metrics: 'textfile' });
    expect(again.stats[host.name]).toMatchObject({ changed: 0, failures: 0 });
  });

  it('both: the textfile and the listener', async () => {
    await run({ isolate_metrics: 'both' });
    expect(serviceLines(readFileSync(join(root, DROPIN), 'utf8'))[1]).toBe(
      `ExecStart=${lab.bin} agent --metrics-textfile ${DIR}/isolate.prom`,
    );
  });

  it('another directory is the one created, written and allowed', async () => {
    await run({ isolate_metrics: 'textfile', isolate_metrics_textfile_dir: '/srv/node-exporter/textfile' });
    expect(statSync(join(root, 'srv/node-exporter/textfile')).isDirectory()).toBe(true);
    expect(serviceLines(readFileSync(join(root, DROPIN), 'utf8')).slice(1)).toEqual([
      `ExecStart=${lab.bin} agent --metrics-textfile /srv/node-exporter/textfile/isolate.prom --no-metrics`,
      'ReadWritePaths=/srv/node-exporter/textfile',
    ]);
  });

  it('back to http (the default) removes the drop-in', async () => {
    const r = await run({});
    expect(r.tasks.get('Remove the textfile drop-in (isolate_metrics is http)')?.[host.name]?.changed).toBe(
      true,
    );
    expect(existsSync(join(root, DROPIN))).toBe(false);
  });

  it('a value the role does not know fails before any task', async () => {
    const r = await playbook(lab, ['-e', JSON.stringify({ isolate_metrics: 'pushgateway' })], { json: true });
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/value of isolate_metrics must be one of: http, textfile, both/);
  });

  it('isolate_state: absent removes the drop-in and the textfile', async () => {
    await run({ isolate_metrics: 'textfile' });
    const file = join(root, DIR, 'isolate.prom');
    expect(existsSync(file)).toBe(true);
    const r = await run({ isolate_state: 'absent', isolate_policy: {} });
    expect(r.tasks.get("Remove the agent's textfile and the metrics drop-in")?.[host.name]?.changed).toBe(
      true,
    );
    expect(existsSync(file)).toBe(false);
    expect(existsSync(join(root, DROPIN))).toBe(false);
    // The directory is node_exporter's: it stays.
    expect(statSync(join(root, DIR)).isDirectory()).toBe(true);
  });
});
