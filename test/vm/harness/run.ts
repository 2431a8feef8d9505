/**
 * Boots a qemu guest with a scenario script as the only workload and returns what it printed on the
 * serial console. Tests of cgroup behaviour run here, on a real kernel, never on the host's cgroups.
 */
import { spawn } from 'node:child_process';
import {
  appendFileSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CpioWriter } from './cpio.js';
import { ensureVmPrereqs } from './ensure.js';
import { baseArchive, moduleFiles, projectArchive, READY_MARKER } from './initramfs.js';

export { READY_MARKER };
import type { VmLayout } from './layouts.js';
import { guestSlots } from './guest-order.js';
import { withGuestSlot } from './slots.js';

export interface RunInVmOptions {
  layout: VmLayout;
  /** POSIX sh (busybox ash), run as root after /proc, /sys, /dev and /sys/fs/cgroup are mounted. */
  script: string;
  /** Put node at /usr/bin/node and the built project at /opt/isolate (dist, package.json, prod deps). */
  includeProject?: boolean;
  /** Extra files for the guest, keyed by absolute guest path; ELF, `#!` and bin/ files are made executable. */
  files?: Record<string, string | Buffer>;
  /** Kernel modules to insmod before the script (dependencies are added), e.g. `virtio_net`. */
  kernelModules?: string[];
  /** Appended after the layout's own qemu arguments (devices for one run). */
  extraQemuArgs?: string[];
  /** Wall-clock limit for the whole boot; default 300 s. TCG on a loaded 2-core box is slow. */
  timeoutMs?: number;
  /**
   * `tcg` (default) emulates; `kvm` only where /dev/kvm is known to boot guests (bench/isolation
   * checks first): this host's /dev/kvm hangs them.
   */
  accel?: 'tcg' | 'kvm';
  /** Boots tried when a guest times out (default 2, see runInVm); 1 for a probe boot that may hang. */
  bootAttempts?: number;
  /** Stop reading the console for a while once a line appears (the harness's own test: see ConsoleStall). */
  stallConsole?: ConsoleStall;
}

/**
 * The host stops reading qemu's console for `ms` once `after` appears on it, as a busy vitest fork
 * does: the pipe fills, qemu holds the serial port's output back, and the guest's last kilobytes wait
 * in its UART buffer. Only the harness test of PID 1's drain uses it.
 */
export interface ConsoleStall {
  after: string;
  ms: number;
}

export interface VmResult {
  /** Whole serial console output, `\r` removed. */
  console: string;
  /** Text printed between `=====BEGIN name=====` and `=====END name=====` lines, keyed by name. */
  sections: Record<string, string>;
  /** The scenario's exit status, from the marker /init prints after it; null if the guest never got there. */
  exitStatus: number | null;
  /** Wall time from spawning qemu until it exited. */
  durationMs: number;
  /** From qemu's start to the boot's end (READY_MARKER, just before the scenario); null if never seen. */
  bootMs: number | null;
  /** Full qemu argv as run (the -initrd file is a temporary that is gone by now). */
  qemuArgs: string[];
}

export class VmTimeoutError extends Error {
  override name = 'VmTimeoutError';
}

const DEFAULT_CPU = 'Skylake-Server-v1';

/**
 * TCG's threading, ISOLATE_VM_TCG_THREAD: `single` (one host thread runs every vCPU in turn; the
 * default when guests run two at a time, harness/slots.ts) or `multi` (a host thread a vCPU; the
 * default with one guest at a time, and vm-alone's). On this 2-core machine a `multi` guest's eight vCPU
 * threads lose their core whenever anything else runs, and the vCPUs that wait on them (a lock holder,
 * a TLB-shootdown IPI) spin: beside a second guest or other tests at nice 19, guests ran 2.6-4.5x slower
 * (systemd-jvm 150 s quiet, 395-682 s loaded). A `single` guest is one thread: two of them share the two
 * cores without spinning on each other. The guest still has its eight CPUs, topology and NUMA nodes;
 * only their parallelism is emulated in turn. Quiet, the whole vm project took 1,350 s two at a time,
 * `single`, against ~1,765 s one at a time, `multi` (issue 59); a guest alone is 0.9-1.6x slower as
 * `single` (a second guest beside it costs it less than that).
 */
function tcgThreads(): 'single' | 'multi' {
  const asked = process.env.ISOLATE_VM_TCG_THREAD;
  if (asked === 'single' || asked === 'multi') return asked;
  return guestSlots() > 1 ? 'single' : 'multi';
}
// loglevel=0 keeps printk off the console, which the scenario's markers share.
const BASE_APPEND = 'console=ttyS0 quiet loglevel=0 panic=-1';

/** qemu argv for a layout, without -kernel/-initrd. Exported so fixture SOURCE.md can quote it. */
export function qemuArgsFor(
  layout: VmLayout,
  extra: string[] = [],
  accel: 'tcg' | 'kvm' = 'tcg',
): { args: string[]; append: string } {
  // Under TCG the guest's Meltdown/Spectre mitigations are pure cost: the emulated Skylake does not
  // report RDCL_NO, so the kernel turns on page-table isolation, and each CR3 switch on every syscall
  // and interrupt flushes qemu's soft TLB. Off, isolate, systemctl and node run 25-35 % faster in the
  // guest (plan --dry-run 2.3-2.9 s against 3.1-4.2 s, same boot otherwise); no cgroup, cpuset or
  // topology behaviour depends on them. Under KVM (the isolation benchmark) the guest keeps them, as
  // production hosts do.
  const append = [BASE_APPEND, accel === 'tcg' ? 'mitigations=off' : '', layout.kernelArgs]
    .filter(Boolean)
    .join(' ');
  const args = [
    '-accel',
    // /dev/kvm exists on this host but guests hang at boot under it, so tests always emulate.
    accel === 'kvm' ? 'kvm' : `tcg,thread=${tcgThreads()}`,
    '-cpu',
    layout.cpuModel ?? DEFAULT_CPU,
    '-m',
    `${layout.memMiB}M`,
    '-smp',
    layout.smp,
    ...layout.numa,
    '-nographic',
    '-no-reboot',
    // No default e1000 NIC or VGA: the guest sees only what a layout or run asks for.
    '-nic',
    'none',
    '-vga',
    'none',
    ...(layout.extraQemuArgs ?? []),
    ...extra,
  ];
  return { args, append };
}

/**
 * Boots a guest and runs the scenario. A guest that neither finishes nor fails before the timeout is
 * booted once more: TCG guests here have been seen to spin forever on rare runs that pass on the
 * next boot (a passing scenario takes well under a minute). The first run's console tail goes to
 * stderr so the CI log shows where it stopped; a scenario that really hangs times out twice and fails.
 */
export function runInVm(opts: RunInVmOptions): Promise<VmResult> {
  return bootTwiceOnTimeout(`runInVm: ${opts.layout.name}`, () => runInVmOnce(opts), opts.bootAttempts ?? 2);
}

/** The retry policy above, shared with the other guest kinds (systemd.ts). */
export async function bootTwiceOnTimeout<T>(label: string, boot: () => Promise<T>, attempts = 2): Promise<T> {
  try {
    return await boot();
  } catch (err) {
    if (!(err instanceof VmTimeoutError) || attempts < 2) throw err;
    process.stderr.write(`${label}: first boot timed out, booting again. ${err.message}\n`);
    return boot();
  }
}

async function runInVmOnce(opts: RunInVmOptions): Promise<VmResult> {
  const pre = ensureVmPrereqs();
  const parts = [baseArchive(pre)];
  if (opts.includeProject) parts.push(projectArchive());

  const scen = new CpioWriter();
  scen.file('/harness/scenario.sh', opts.script, 0o755);
  if (opts.kernelModules?.length) {
    const mods = moduleFiles(pre, opts.kernelModules);
    for (const [p, d] of Object.entries(mods.files)) scen.file(p, d);
    scen.file('/harness/modules.sh', mods.script);
  }
  for (const [p, d] of Object.entries(opts.files ?? {})) scen.file(p, d, guestFileMode(p, d));

  const tmp = mkdtempSync(join(tmpdir(), 'isolate-vm-'));
  try {
    const initrd = join(tmp, 'initrd.cpio');
    // The kernel unpacks concatenated archives in order, later entries replacing earlier ones.
    copyFileSync(parts[0]!, initrd);
    for (const p of parts.slice(1)) appendFileSync(initrd, readFileSync(p));
    appendFileSync(initrd, scen.finish());

    const { args, append } = qemuArgsFor(opts.layout, opts.extraQemuArgs, opts.accel);
    const full = [...args, '-kernel', pre.kernel.vmlinuz, '-initrd', initrd, '-append', append];
    // Ready in ~10 s (the project archive is 120 MB to unpack); 3 minutes is for a loaded machine.
    return await spawnQemu(pre.qemu, full, opts.timeoutMs ?? 300_000, BOOT_DEADLINE_MS, opts.stallConsole);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Executables (ELF, `#!` scripts, anything under a bin/ directory) get 0755, everything else 0644. */
export function guestFileMode(path: string, data: string | Buffer): number {
  const head = typeof data === 'string' ? Buffer.from(data.slice(0, 4)) : data.subarray(0, 4);
  const exec = head.toString('latin1').startsWith('\x7fELF') || head.toString('latin1').startsWith('#!');
  return exec || /\/s?bin\//.test(path) ? 0o755 : 0o644;
}

/** How long a busybox guest may take to reach its scenario before it counts as hung. */
const BOOT_DEADLINE_MS = 180_000;

/**
 * Boots qemu and collects the console until it exits. Two deadlines: the whole run (`timeoutMs`), and
 * the guest's boot (`readyWithinMs`): the TCG guests here, on rare runs, hang before the kernel prints
 * anything (the console ends at SeaBIOS's "Booting from ROM...") and pass on the next boot, so a guest
 * that has not printed READY_MARKER by then is stopped at once rather than after the whole run's
 * timeout (up to 25 minutes). Both end in VmTimeoutError, which bootTwiceOnTimeout boots again.
 */
export function spawnQemu(
  qemu: string,
  args: string[],
  timeoutMs: number,
  readyWithinMs = timeoutMs,
  stall?: ConsoleStall,
): Promise<VmResult> {
  // Both deadlines start with qemu, after the wait for a slot (harness/slots.ts).
  return withGuestSlot(() => runQemu(qemu, args, timeoutMs, readyWithinMs, stall));
}

function runQemu(
  qemu: string,
  args: string[],
  timeoutMs: number,
  readyWithinMs: number,
  stall?: ConsoleStall,
): Promise<VmResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(qemu, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let ready = false;
    let readyAt: number | null = null;
    let tail = '';
    let stalled = false;
    child.stdout.on('data', (b: Buffer) => {
      out.push(b);
      // A marker may straddle two reads: look at the end of the previous one too.
      const seen = tail + b.toString('latin1');
      tail = seen.slice(-200);
      if (!ready && seen.includes(READY_MARKER)) {
        ready = true;
        readyAt = Date.now();
        clearTimeout(bootTimer);
      }
      if (stall && !stalled && seen.includes(stall.after)) {
        stalled = true;
        child.stdout.pause();
        setTimeout(() => child.stdout.resume(), stall.ms);
      }
    });
    child.stderr.on('data', (b: Buffer) => err.push(b));
    let timedOut: string | null = null;
    const timer = setTimeout(() => {
      timedOut = `qemu timed out after ${timeoutMs} ms`;
      child.kill('SIGKILL');
    }, timeoutMs);
    const bootTimer = setTimeout(() => {
      timedOut = `the guest did not boot within ${readyWithinMs} ms (no ${READY_MARKER} on the console)`;
      child.kill('SIGKILL');
    }, readyWithinMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      clearTimeout(bootTimer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      clearTimeout(bootTimer);
      const consoleText = Buffer.concat(out).toString('utf8').replace(/\r/g, '');
      // qemu prints one warning per CPUID flag TCG cannot emulate; they bury the real error.
      const stderr = Buffer.concat(err)
        .toString('utf8')
        .split('\n')
        .filter((l) => !l.includes("TCG doesn't support requested feature"))
        .join('\n');
      const durationMs = Date.now() - started;
      if (timedOut) {
        // The whole console of a run that hung, for debugging (the error carries only its tail).
        const keep = process.env.ISOLATE_VM_CONSOLE_DIR;
        if (keep) {
          mkdirSync(keep, { recursive: true });
          writeFileSync(join(keep, `timeout-${started}.log`), consoleText);
        }
        reject(new VmTimeoutError(`${timedOut}; console tail:\n${consoleText.slice(-3000)}`));
        return;
      }
      const exitStatus = parseExitStatus(consoleText);
      if (code !== 0 && exitStatus === null) {
        reject(
          new Error(`qemu exited ${code}: ${stderr.trim()}\nconsole tail:\n${consoleText.slice(-3000)}`),
        );
        return;
      }
      resolve({
        console: consoleText,
        sections: parseSections(consoleText),
        exitStatus,
        durationMs,
        bootMs: readyAt === null ? null : readyAt - started,
        qemuArgs: args,
      });
    });
  });
}

// A printk line, should one slip past loglevel=0 (e.g. an emergency message) into a section.
const KERNEL_LINE = /^\[\s*\d+\.\d+\] /;

/**
 * Sections may end mid-line (a file without a trailing newline is followed directly by the END marker),
 * so the END marker is searched anywhere in a line and whatever precedes it belongs to the section.
 */
export function parseSections(text: string): Record<string, string> {
  const sections: Record<string, string> = {};
  let name: string | undefined;
  let body: string[] = [];
  for (const line of text.replace(/\r/g, '').split('\n')) {
    if (name === undefined) {
      const m = /=====BEGIN ([^=\s]+)=====/.exec(line);
      if (m) {
        name = m[1]!;
        body = [];
      }
      continue;
    }
    const end = line.indexOf(`=====END ${name}=====`);
    if (end >= 0) {
      sections[name] = body.join('') + line.slice(0, end);
      name = undefined;
      continue;
    }
    if (!KERNEL_LINE.test(line)) body.push(`${line}\n`);
  }
  return sections;
}

export function parseExitStatus(text: string): number | null {
  const all = [...text.matchAll(/=====EXIT (\d+)=====/g)];
  const last = all.at(-1);
  return last ? Number(last[1]) : null;
}
