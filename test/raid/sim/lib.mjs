// Shared plumbing of the vendor simulators: state and command log in $RAID_SIM_DIR, replay of real
// captures from the fixture tree, and the failure modes real tools show (hang, garbage, truncation,
// deadlock when two run at once — raid-cli.md §8.6).
import { spawn } from 'node:child_process';
import { appendFileSync, closeSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function simDir() {
  const dir = process.env.RAID_SIM_DIR;
  if (!dir) {
    process.stderr.write('RAID_SIM_DIR is not set\n');
    process.exit(97);
  }
  return dir;
}

export function loadState(family) {
  return JSON.parse(readFileSync(join(simDir(), `state-${family}.json`), 'utf8'));
}

export function saveState(family, state) {
  writeFileSync(join(simDir(), `state-${family}.json`), `${JSON.stringify(state, null, 2)}\n`);
}

export function capture(state, rel) {
  return readFileSync(join(state.fixtures, rel), 'latin1');
}

/**
 * Run one simulated call: log it, take the per-host lock (a second concurrent call deadlocks like
 * the real tools do), apply the scenario's failure mode, print the answer.
 * `answer(args)` returns { stdout, code }.
 */
export function simulate(family, answer) {
  const args = process.argv.slice(2);
  const dir = simDir();
  const state = loadState(family);
  const line = `${family} ${args.join(' ')}`;
  const lock = join(dir, 'running');
  let fd;
  try {
    fd = openSync(lock, 'wx');
  } catch {
    appendFileSync(join(dir, 'commands.log'), `CONCURRENT ${line}\n`);
    hang();
    return;
  }
  closeSync(fd);
  const release = () => rmSync(lock, { force: true });
  process.on('SIGTERM', () => {
    release();
    process.exit(143);
  });
  appendFileSync(join(dir, 'commands.log'), `${line}\n`);
  const matches = (pattern) => typeof pattern === 'string' && line.includes(pattern);
  if (matches(state.hang)) {
    hang();
    return;
  }
  // A tool that starts a helper holding its output, then hangs: killed, its call still does not
  // finish until the helper goes (as a tool stuck in the kernel, state D, never lets it).
  if (matches(state.holdOutput)) {
    spawn('sleep', [String(state.holdSeconds ?? 10)], {
      stdio: ['ignore', 'inherit', 'inherit'],
      detached: true,
    }).unref();
    hang();
    return;
  }
  let { stdout, code } = answer(args, state);
  if (matches(state.garbage)) stdout = '\u0000\u00ff<html>503 Service Unavailable</html>\n@@@@\n';
  if (typeof state.truncate === 'number' && matches(state.truncateOn ?? ''))
    stdout = stdout.slice(0, state.truncate);
  // A crash mid-output (MegaCli is known to): part of the answer, then death by SIGSEGV's status.
  if (matches(state.crash)) {
    stdout = stdout.slice(0, state.crashAt ?? Math.floor(stdout.length / 2));
    code = 139;
  }
  // Real tools take a while talking to the firmware; hold the lock that long so overlapping calls
  // are caught.
  setTimeout(() => {
    release();
    process.stdout.write(stdout, () => process.exit(code ?? 0));
  }, state.busyMs ?? 60);
}

function hang() {
  // Like a tool stuck in an ioctl: never answers until killed.
  setInterval(() => {}, 1 << 30);
}

/** What the real tool leaves in its working directory (storcli.log, UcliEvt.log, MegaSAS.log). */
export function vendorLog(name, line) {
  appendFileSync(join(process.cwd(), name), `${new Date().toISOString()} ${line}\n`);
}

export function commandLog() {
  return readFileSync(join(simDir(), 'commands.log'), 'utf8');
}
