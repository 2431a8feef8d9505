// A fake host for the simulators: a temp --root with sysfs scsi_host entries and the simulators
// installed at the real tool paths, plus their state files and the shared command log.
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FIXTURES } from './fixtures.js';

const SIM = join(dirname(fileURLToPath(import.meta.url)), 'sim');

export type SimFamily = 'storcli' | 'perccli' | 'perccli2' | 'megacli' | 'ssacli' | 'arcconf';

const INSTALL: Record<SimFamily, string> = {
  storcli: '/opt/MegaRAID/storcli/storcli64',
  perccli: '/opt/MegaRAID/perccli/perccli64',
  perccli2: '/opt/MegaRAID/perccli2/perccli2',
  megacli: '/opt/MegaRAID/MegaCli/MegaCli64',
  ssacli: '/usr/sbin/ssacli',
  arcconf: '/usr/sbin/arcconf',
};

export interface SimHost {
  root: string;
  dir: string;
  /** Commands the simulators received, one per line (`storcli /c0/v0 set wrcache=WB J`). */
  log(): string[];
  state(family: SimFamily): Record<string, unknown>;
  cleanup(): void;
}

export function makeHost(opts: {
  drivers?: string[];
  tools?: Partial<Record<SimFamily, Record<string, unknown>>>;
  mdstat?: string;
}): SimHost {
  const base = mkdtempSync(join(tmpdir(), 'isolate-raid-'));
  const root = join(base, 'root');
  const dir = join(base, 'sim');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'commands.log'), '');
  (opts.drivers ?? []).forEach((driver, i) => {
    const host = join(root, 'sys/class/scsi_host', `host${i}`);
    mkdirSync(host, { recursive: true });
    writeFileSync(join(host, 'proc_name'), `${driver}\n`);
  });
  if (opts.mdstat !== undefined) {
    mkdirSync(join(root, 'proc'), { recursive: true });
    writeFileSync(join(root, 'proc/mdstat'), opts.mdstat);
  }
  for (const [family, state] of Object.entries(opts.tools ?? {}) as [SimFamily, Record<string, unknown>][]) {
    const path = join(root, INSTALL[family]);
    mkdirSync(dirname(path), { recursive: true });
    symlinkSync(join(SIM, `${family}.mjs`), path);
    writeFileSync(
      join(dir, `state-${family}.json`),
      JSON.stringify({ fixtures: FIXTURES, ...state }, null, 2),
    );
  }
  process.env.RAID_SIM_DIR = dir;
  // A per-host lock file, so parallel test files do not queue behind each other's hangs.
  process.env.ISOLATE_RAID_LOCK = join(dir, 'isolate-raid.lock');
  return {
    root,
    dir,
    log: () =>
      readFileSync(join(dir, 'commands.log'), 'utf8')
        .split('\n')
        .filter((l) => l !== ''),
    state: (family) => JSON.parse(readFileSync(join(dir, `state-${family}.json`), 'utf8')),
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}

/** storcli controller replaying `showAll` with VD caches overridden (e.g. start in write-through). */
export function storcliController(
  showAll: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { showAll, ...extra };
}

export const M5015_BBU = 'storcli/netdata-megaraid-controllers-info.json';
/**
 * The M5015's iBBU08 detail for `/c0/bbu show all`: built by the storcli simulator from this real
 * MegaCli -AdpBbuCmd capture of an iBBU08 (no real storcli capture of a successful one exists).
 */
export const IBBU08_DETAIL = 'megacli/check_raid-issue45-adpbbucmd-ibbu08-optimal.txt';
export const CV_9270 = 'storcli/megaraid-dashboard-c0_show_all-9270CV.json';
export const CV_9270_DETAIL = 'storcli/megaraid-dashboard-cv_show_all-optimal-transparent-learn.json';
export const MR216I_NO_BATTERY = 'storcli/phe-cALL_show_all-MR216i-no-cache-NRWTD.json';

/**
 * Entries of the test's working directory now; call the result after the test to get what a vendor
 * simulator (or isolate) left there. Simulators write storcli.log / MegaSAS.log / UcliEvt.log into
 * their cwd like the real tools, so anything new here means isolate ran a tool in the caller's
 * directory (issue 8).
 */
export function cwdWatch(): () => string[] {
  const before = new Set(readdirSync(process.cwd()));
  return () => readdirSync(process.cwd()).filter((f) => !before.has(f) && !SUITE_CACHES.has(f));
}

/**
 * The suite's own gitignored caches in the repository (apt-extract's .deb cache, the guests' cache):
 * another test file, running at once in another worker, may make one while a vendor test runs.
 */
const SUITE_CACHES = new Set(['.cache', '.vm-cache']);
