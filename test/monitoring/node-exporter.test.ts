// The textfile mode against the real node_exporter of Debian's prometheus-node-exporter package (unpacked,
// never installed; run here as a child process on a loopback port, killed at the end): a node_exporter of
// its own user reads the file `isolate agent --metrics-textfile` writes, serves every isolate_* series,
// and reports no read error and no collision with its own process_* metrics. And isolate.service may
// write the directory that node_exporter reads unless told otherwise.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEBIAN_TEXTFILE_DIR } from '../../src/agent/textfile.js';
import { cli, hostWithPolicy } from '../docs/host.js';
import { APT_WAIT_MS } from '../support/apt.js';
import { debianPackageFile } from '../support/apt-extract.js';
import { REPO } from './promql.js';

let binary: string;
let version: string;

beforeAll(async () => {
  ({ path: binary, version } = await debianPackageFile(
    'prometheus-node-exporter',
    'usr/bin/prometheus-node-exporter',
  ));
  console.log(`node_exporter from Debian's prometheus-node-exporter ${version}`);
}, APT_WAIT_MS);

/** A port free on loopback a moment ago. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

/** The series of a text exposition, each with its labels sorted (node_exporter sorts them), sorted. */
function series(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => /^[a-zA-Z_:]/.test(l))
    .map((l) => {
      const m = /^([^{ ]+)(?:\{(.*)\})? /.exec(l)!;
      const labels = m[2] ? m[2].split(/,(?=[a-zA-Z_]\w*=")/).sort() : [];
      return `${m[1]}{${labels.join(',')}}`;
    })
    .sort();
}

function scrape(port: number): Promise<string | null> {
  return new Promise((resolve) => {
    get({ host: '127.0.0.1', port, path: '/metrics' }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => {
        body += d.toString();
      });
      res.on('end', () => resolve(res.statusCode === 200 ? body : null));
    }).on('error', () => resolve(null));
  });
}

describe('node_exporter reads the agent’s textfile', () => {
  let exporter: ChildProcess | undefined;
  let logged = '';
  let served = '';
  let file = '';

  beforeAll(async () => {
    // Readable by others down to the file, as /var/lib/prometheus/node-exporter is (0755).
    const dir = mkdtempSync(join(tmpdir(), 'isolate-node-exporter-'));
    chmodSync(dir, 0o755);
    const textfiles = join(dir, 'textfile');
    mkdirSync(textfiles, { mode: 0o755 });
    chmodSync(textfiles, 0o755);
    // The cache under the repository need not be reachable by another user.
    const exe = join(dir, 'node_exporter');
    copyFileSync(binary, exe);
    chmodSync(exe, 0o755);

    const root = hostWithPolicy('qemu-2s-smt2');
    file = join(textfiles, 'isolate.prom');
    const r = cli(root, ['agent', '--once', '--metrics-textfile', file]);
    expect(r.code, r.stderr).toBe(1); // WARNING: the fixture host runs no Kafka

    const port = await freePort();
    // Debian runs it as the system user prometheus: as root, run it as nobody, which only the file's
    // other-read bit lets in.
    const asRoot = process.getuid?.() === 0;
    exporter = spawn(
      exe,
      [
        `--web.listen-address=127.0.0.1:${port}`,
        '--collector.disable-defaults',
        '--collector.textfile',
        `--collector.textfile.directory=${textfiles}`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], ...(asRoot ? { uid: 65534, gid: 65534 } : {}) },
    );
    exporter.stdout!.on('data', (d: Buffer) => {
      logged += d.toString();
    });
    exporter.stderr!.on('data', (d: Buffer) => {
      logged += d.toString();
    });
    for (let i = 0; i < 100 && !served; i++) {
      served = (await scrape(port)) ?? '';
      if (!served) await new Promise((r) => setTimeout(r, 100));
    }
    expect(served, logged).not.toBe('');
    // A second scrape: the collision is logged at every scrape, not at start.
    served = (await scrape(port)) ?? '';
  }, 180_000);

  afterAll(() => {
    exporter?.kill('SIGTERM');
  });

  it('without an error reading it', () => {
    expect(served).toMatch(/^node_textfile_scrape_error 0$/m);
    expect(served).toMatch(/^node_textfile_mtime_seconds\{file=".*isolate\.prom"\} \d/m);
    expect(logged).not.toMatch(/level=error/);
  });

  it('serving every isolate_* series of the file, and the agent’s process_* not at all', () => {
    const isolate = (text: string) => series(text).filter((s) => s.startsWith('isolate_'));
    expect(isolate(readFileSync(file, 'utf8')).length).toBeGreaterThan(10);
    expect(isolate(served)).toEqual(isolate(readFileSync(file, 'utf8')));
    // Its own, with no "collected before with the same name" for the agent's.
    expect(served).toMatch(/^process_start_time_seconds /m);
    expect(logged).not.toMatch(/collected before/);
    expect(served).not.toMatch(/^nodejs_/m);
  });
});

describe('isolate.service', () => {
  it("may write the directory Debian's node_exporter reads by default", () => {
    const help = execFileSync(binary, ['--help'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const dir = /--collector\.textfile\.directory="([^"]+)"/.exec(help)?.[1];
    expect(dir).toBe(DEBIAN_TEXTFILE_DIR);
    const unit = readFileSync(join(REPO, 'systemd/isolate.service'), 'utf8');
    const paths = /^ReadWritePaths=(.*)$/m.exec(unit)![1]!.split(/\s+/);
    // `-`: the unit still starts where node_exporter is not installed.
    expect(paths).toContain(`-${dir}`);
  });
});
