// One guest per describe block: the boot every real-kernel scenario file shares. vmScenario() boots the
// guest in a beforeAll hook, keeps its console under the scenario's name (ISOLATE_VM_CONSOLE_DIR) and
// fails the hook with the console tail when the guest never reached the end of its script.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll } from 'vitest';
import {
  ensureVmPrereqs,
  type RunInSystemdVmOptions,
  type RunInVmOptions,
  runInSystemdVm,
  runInVm,
  type SystemdVmResult,
  type VmResult,
} from '../harness/index.js';
import { REPO_ROOT } from '../harness/paths.js';
import { leaveQueue, queueForSlot, takeSlotWait } from '../harness/slots.js';
import { keepConsole, LIB, standinBinary } from './guest.js';
import { type SystemdStandinOptions, systemdStandins } from './systemd-guest.js';

/** A busybox guest (runInVm). `/harness/lib.sh` is always there (LIB). */
export interface BusyboxScenario extends RunInVmOptions {
  systemd?: false;
  /** `/usr/local/bin/standin`, the stand-in binary. */
  standin?: boolean;
  /** Written to /etc/isolate/policy.yaml. */
  policy?: string;
}

/** A real-systemd guest (runInSystemdVm). */
export interface SystemdScenario extends RunInSystemdVmOptions {
  systemd: true;
  /** kafka.service, yarn-container and the rest of systemdStandins(), files and symlinks. */
  standins?: SystemdStandinOptions;
  /** Written to /etc/isolate/policy.yaml. */
  policy?: string;
  /** systemd/isolate.service as shipped, with a drop-in running `isolate agent --interval <this>`. */
  agentInterval?: string;
}

export type ScenarioOptions = BusyboxScenario | SystemdScenario;

export interface Scenario<R extends VmResult> {
  /** The guest's result; read it in tests (after the hook), never while the file is collected. */
  readonly r: R;
  /** Wall time of the boot, build of the initrd and a second boot after a timeout included. */
  readonly wallMs: number;
  /** A section's text, '' when the guest printed none. */
  s: (name: string) => string;
  /** A section's text; throws with the console tail when the guest printed none. */
  need: (name: string) => string;
}

type ResultOf<O> = O extends SystemdScenario ? SystemdVmResult : VmResult;

const AGENT_UNIT = join(REPO_ROOT, 'systemd/isolate.service');

/**
 * Registers the beforeAll that boots the guest (`options` is evaluated there, so a function may build
 * what the guest needs first); `hookTimeoutMs` overrides the project's hook timeout. Later beforeAll
 * hooks of the block run after it (vitest runs hooks in order), so they may read the result.
 */
export function vmScenario<O extends ScenarioOptions>(
  name: string,
  options: O | (() => O | Promise<O>),
  hookTimeoutMs?: number,
): Scenario<ResultOf<O>> {
  let result: ResultOf<O> | undefined;
  let wallMs = 0;
  const r = (): ResultOf<O> => {
    if (!result) throw new Error(`scenario ${name}: the guest has not run`);
    return result;
  };
  beforeAll(async () => {
    ensureVmPrereqs();
    // In line for a guest slot from now: a long guest that builds first still goes first. Out of the
    // line whatever happens: a build that fails must not hold the place of the guests after it.
    queueForSlot();
    try {
      const opts = typeof options === 'function' ? await options() : options;
      const started = Date.now();
      result = (await boot(opts)) as ResultOf<O>;
      wallMs = Date.now() - started;
    } finally {
      leaveQueue();
    }
    keepConsole(name, result.console);
    // One line a guest, for the record of where CI's time goes (issue 59): waiting for one of the two
    // guest slots, building its initrd (and a second boot after a hung one), qemu until the scenario
    // starts, the scenario. Never asserted.
    const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    const booted = result.bootMs;
    const slot = takeSlotWait();
    process.stderr.write(
      `guest ${name}: ${secs(wallMs)} in all; waiting for a guest slot ${secs(slot)}, initrd and retries ${secs(wallMs - slot - result.durationMs)}, boot ${booted === null ? '?' : secs(booted)}, scenario ${booted === null ? '?' : secs(result.durationMs - booted)}\n`,
    );
    if (result.exitStatus === null) throw new Error(`guest did not finish:\n${result.console.slice(-4000)}`);
  }, hookTimeoutMs);
  return {
    get r() {
      return r();
    },
    get wallMs() {
      return wallMs;
    },
    s: (n) => r().sections[n] ?? '',
    need: (n) => {
      const text = r().sections[n];
      if (text === undefined) throw new Error(`no section ${n}; console tail:\n${r().console.slice(-4000)}`);
      return text;
    },
  };
}

function boot(o: ScenarioOptions): Promise<VmResult | SystemdVmResult> {
  if (o.systemd) {
    const { systemd: _, standins: which, policy, agentInterval, ...run } = o;
    const standins = which ? systemdStandins(which) : { files: {}, symlinks: {} };
    return runInSystemdVm({
      ...run,
      files: {
        ...standins.files,
        ...(policy === undefined ? {} : { '/etc/isolate/policy.yaml': policy }),
        ...(agentInterval === undefined
          ? {}
          : {
              '/etc/systemd/system/isolate.service': readFileSync(AGENT_UNIT, 'utf8'),
              '/etc/systemd/system/isolate.service.d/test.conf': `[Service]\nExecStart=\nExecStart=/usr/local/bin/isolate agent --interval ${agentInterval}\n`,
            }),
        ...run.files,
      },
      symlinks: { ...standins.symlinks, ...run.symlinks },
    });
  }
  const { systemd: _, standin, policy, ...run } = o;
  return runInVm({
    ...run,
    files: {
      ...(standin ? { '/usr/local/bin/standin': standinBinary() } : {}),
      '/harness/lib.sh': LIB,
      ...(policy === undefined ? {} : { '/etc/isolate/policy.yaml': policy }),
      ...run.files,
    },
  });
}
