// A stand-in `systemctl` on PATH for the systemd backend's tests: a real process, spawned the way
// production spawns it, whose script (each test file's own model of systemd) finds the fixture host in
// FAKE_ROOT, its model of what systemd loaded in FAKE_STATE (FAKE_ROOT/state) and logs every call to
// FAKE_LOG, so the calls are counted, not assumed.
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SystemdExecutor } from '../../src/systemd/executor.js';

/** The real executor; only ready() is bypassed: it demands root "/" and this machine's systemd is off limits. */
export class TmpRootSystemd extends SystemdExecutor {
  override async ready(): Promise<void> {}
}

export interface FakeSystemctl {
  root: string;
  /** Every systemctl call's arguments, one line each. */
  log: string;
  /** PATH and the FAKE_ variables as they were, and the root removed. */
  restore(): Promise<void>;
}

const VARS = ['FAKE_ROOT', 'FAKE_STATE', 'FAKE_LOG'] as const;

/** A fresh root whose bin/systemctl is `script`, first on PATH until restore(). */
export async function fakeSystemctl(script: string, prefix: string): Promise<FakeSystemctl> {
  const root = await mkdtemp(path.join(tmpdir(), prefix));
  const bin = path.join(root, 'bin');
  await mkdir(bin);
  await writeFile(path.join(bin, 'systemctl'), script);
  await chmod(path.join(bin, 'systemctl'), 0o755);
  const log = path.join(root, 'systemctl.log');
  const savedPath = process.env.PATH;
  Object.assign(process.env, {
    PATH: `${bin}:${savedPath}`,
    FAKE_ROOT: root,
    FAKE_STATE: path.join(root, 'state'),
    FAKE_LOG: log,
  });
  return {
    root,
    log,
    restore: async () => {
      process.env.PATH = savedPath;
      for (const k of VARS) delete process.env[k];
      await rm(root, { recursive: true, force: true });
    },
  };
}
