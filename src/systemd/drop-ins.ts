// isolate's own drop-ins, three kinds: a unit's `Slice=`, a unit's JVM options, and irqbalance's ban
// (an environment file and the drop-in naming it). Each is written through the one safe writer
// (0644), systemd reloaded and the value read back as systemd will pass it; each is removed only
// when its header says isolate wrote it, staged until commitUndo's one daemon-reload.
import { existsSync, rmSync } from 'node:fs';
import { mkdir, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { StepError, type UndoResult } from '../apply/executor.js';
import {
  IRQBALANCE_DROP_IN,
  IRQBALANCE_ENV_FILE,
  IRQBALANCE_UNIT,
  irqbalanceDropInText,
  irqbalanceEnvText,
  runsWith,
  showIrqbalanceValue,
  valueOfEnvText,
} from '../model/irqbalance.js';
import { cpusIn, jvmDropInPath, jvmDropInText, unwritableValue } from '../model/jvm-options.js';
import type { Change } from '../model/plan.js';
import { sliceDropInPath, sliceDropInText } from '../model/systemd.js';
import { ReadRefused, readBoundedIfPresent } from '../sys/read.js';
import { writeFileAtomic } from '../sys/write.js';
import { environmentFilesOf, runningEnv } from './irqbalance.js';
import type { UnitProperties } from './properties.js';
import { parseShow, systemctl } from './systemctl.js';
import { DROP_IN_MAX_BYTES, IN_FORCE_TRIES, IN_FORCE_WAIT_MS, type StagedUndos } from './unit.js';

/** The first line of every file isolate writes here: what tells its own files from the operator's. */
const HEADER = '# Written by isolate';

/** A file through the one safe writer (0644). */
const writeOwn = (file: string, text: string) => writeFileAtomic(file, text, { mode: 0o644 });

/** The directory a file goes into, made (0755) when it is not there yet. */
async function ensureDirOf(file: string): Promise<void> {
  const dir = path.dirname(file);
  if (!existsSync(dir)) await mkdir(dir, { mode: 0o755 });
}

/**
 * isolate's file at `file` read back (text null: absent), or a note why it is not isolate's and is
 * left in place: bounded and regular files only (a FIFO or device at isolate's name is not its
 * drop-in), and only with isolate's header. `what` names the file in the refusal.
 */
function readOwn(file: string, what: string): { text: string | null } | { note: string } {
  let text: string | null;
  try {
    text = readBoundedIfPresent(file, { maxBytes: DROP_IN_MAX_BYTES });
  } catch (err) {
    const why = err instanceof ReadRefused ? err.reason : String(err);
    return { note: `${file} is not ${what} (${why}); left in place` };
  }
  if (text !== null && !text.startsWith(HEADER))
    return { note: `${file} was not written by isolate; left in place` };
  return { text };
}

/** isolate's drop-ins under --root (which is / whenever systemd is asked): write, read back, remove. */
export class DropIns {
  constructor(
    private readonly root: string,
    private readonly properties: UnitProperties,
    private readonly staged: StagedUndos,
  ) {}

  /** The `Slice=` drop-in of a unit, under --root (which is / whenever systemd is asked). */
  sliceDropIn(unit: string): string {
    return path.join(this.root, sliceDropInPath(unit));
  }

  /** The JVM options drop-in of a unit, under --root (which is / whenever systemd is asked). */
  jvmDropIn(unit: string): string {
    return path.join(this.root, jvmDropInPath(unit));
  }

  /** systemd reloaded, then the change's value read back: whether systemd holds what was written. */
  private async reloadAndRead(change: Change): Promise<{ now: string | null; taken: boolean }> {
    await systemctl(['daemon-reload']);
    const now = await this.properties.read(change);
    return { now, taken: this.properties.satisfied(change, now) };
  }

  /**
   * `Slice=` cannot be set on a loaded unit through set-property: isolate writes a drop-in (the one
   * safe writer, 0644), reloads systemd and reads the configured slice back. The unit moves at its
   * next start; isolate never restarts it.
   */
  async applySlice(change: Change): Promise<{ skipped?: string }> {
    const file = this.sliceDropIn(change.target);
    await ensureDirOf(file);
    await writeOwn(file, sliceDropInText(change.target, change.to));
    const { now, taken } = await this.reloadAndRead(change);
    if (!taken) {
      throw new StepError(
        `${file}: systemd reports Slice=${now ?? '(unit not loaded)'} for ${change.target} after daemon-reload (a later drop-in of the operator's sets another slice?); remove the conflicting Slice= or name that slice in the policy`,
      );
    }
    return {};
  }

  /**
   * The JVM options drop-in (model/jvm-options.ts): written through the one safe writer (0644),
   * systemd reloaded, the variable read back as systemd will pass it at the next start. The running
   * JVM keeps the options it started with; isolate never restarts it.
   */
  async applyJvmOptions(change: Change): Promise<{ skipped?: string }> {
    const file = this.jvmDropIn(change.target);
    const bad = unwritableValue(change.to);
    if (bad) throw new StepError(`${file}: ${change.to.slice(0, 60)}... cannot be written (${bad})`);
    await ensureDirOf(file);
    await writeOwn(file, jvmDropInText(change.target, change.to, cpusIn(change.to) ?? 0));
    const { now, taken } = await this.reloadAndRead(change);
    if (!taken) {
      throw new StepError(
        `${file}: systemd reports ${now === null ? '(unit not loaded)' : `"${now}"`} for ${change.target} after daemon-reload, not "${change.to}" (a later drop-in of the operator's sets the variable?); add -XX:ActiveProcessorCount there, or remove jvm: from the policy`,
      );
    }
    return {};
  }

  /**
   * Removes exactly isolate's own drop-in, Slice= or JVM options (recognised by its header), and its directory if it is
   * left empty. Staged: in force at commitUndo's daemon-reload. An absent file is staged as well: a
   * crash between the removal and the reload leaves exactly that, and the reload is still owed.
   */
  async undoOwnDropIn(change: Change, previous: string | null): Promise<UndoResult> {
    const file = change.setting === 'Slice' ? this.sliceDropIn(change.target) : this.jvmDropIn(change.target);
    const own = readOwn(file, "isolate's drop-in");
    if ('note' in own) return { note: own.note };
    if (own.text !== null) {
      rmSync(file, { force: true });
      await rmdir(path.dirname(file)).catch(() => {});
    }
    this.staged.push({ change, previous });
    return { pending: true };
  }

  /**
   * isolate's irqbalance value: the assignments of its environment file when systemd has loaded the
   * drop-in naming it (EnvironmentFiles=, printed once per file), '' when it has not; null when
   * irqbalance.service is not loaded (not installed).
   */
  async readIrqbalance(): Promise<string | null> {
    const show = await systemctl([
      'show',
      '-p',
      'LoadState',
      '-p',
      'EnvironmentFiles',
      '--',
      IRQBALANCE_UNIT,
    ]);
    if (!/^LoadState=loaded$/m.test(show)) return null;
    if (!environmentFilesOf(show.split('\n')).some((f) => f.file === IRQBALANCE_ENV_FILE)) return '';
    let text: string | null;
    try {
      text = readBoundedIfPresent(path.join(this.root, IRQBALANCE_ENV_FILE), { maxBytes: DROP_IN_MAX_BYTES });
    } catch (err) {
      throw new StepError(`${IRQBALANCE_ENV_FILE}: ${err instanceof ReadRefused ? err.reason : String(err)}`);
    }
    return text === null ? '' : valueOfEnvText(text);
  }

  /** The running irqbalance (MainPID) started without `live`: it reads its environment only at start. */
  async irqbalanceNotInForce(live: string | null): Promise<string | null> {
    if (!live) return null;
    const [props] = parseShow(
      await systemctl(['show', '-p', 'ActiveState', '-p', 'MainPID', '--', IRQBALANCE_UNIT]),
    );
    const pid = Number(props?.MainPID ?? 0);
    if (props?.ActiveState !== 'active' || !(pid > 0)) return null;
    const env = runningEnv(this.root, pid);
    if (env === null || runsWith(env, live)) return null;
    return `irqbalance (pid ${pid}) runs without isolate's ban (started before it was written)`;
  }

  /**
   * irqbalance's ban: isolate's environment file and the drop-in naming it, both through the one safe
   * writer (0644), systemd reloaded, the value read back as systemd will pass it, then irqbalance
   * restarted once (try-restart: a stopped irqbalance stays stopped and reads it at its next start)
   * and its new process's environment checked.
   */
  async applyIrqbalance(change: Change): Promise<{ skipped?: string }> {
    const file = path.join(this.root, IRQBALANCE_ENV_FILE);
    if (/[\x00-\x09\x0b-\x1f\x7f]/.test(change.to))
      throw new StepError(`${file}: the value holds a control character; not written`);
    await ensureDirOf(file);
    await writeOwn(file, irqbalanceEnvText(change.to));
    await writeOwn(path.join(this.root, IRQBALANCE_DROP_IN), irqbalanceDropInText());
    await systemctl(['daemon-reload']);
    const now = await this.readIrqbalance();
    if (now !== change.to) {
      throw new StepError(
        `${IRQBALANCE_DROP_IN}: after daemon-reload systemd ${now === null ? `does not know ${IRQBALANCE_UNIT}` : `passes ${now ? showIrqbalanceValue(now) : "no value of isolate's"}`}, not ${showIrqbalanceValue(change.to)}`,
      );
    }
    await systemctl(['try-restart', '--', IRQBALANCE_UNIT]);
    let why = await this.irqbalanceNotInForce(now);
    for (let i = 0; why !== null && i < IN_FORCE_TRIES; i++) {
      await sleep(IN_FORCE_WAIT_MS);
      why = await this.irqbalanceNotInForce(now);
    }
    if (why) throw new StepError(`systemctl try-restart ${IRQBALANCE_UNIT}: ${why}`);
    return {};
  }

  /**
   * Back to the value before: isolate's files removed (recognised by their header) when there was
   * none, else its earlier value written again. Staged: commitUndo reloads systemd once, then
   * restarts irqbalance once.
   */
  async undoIrqbalance(change: Change, previous: string | null): Promise<UndoResult> {
    const env = path.join(this.root, IRQBALANCE_ENV_FILE);
    const dropIn = path.join(this.root, IRQBALANCE_DROP_IN);
    if (previous) {
      await writeOwn(env, irqbalanceEnvText(previous));
      await writeOwn(dropIn, irqbalanceDropInText());
    } else {
      for (const file of [dropIn, env]) {
        const own = readOwn(file, "isolate's");
        if ('note' in own) return { note: own.note };
        rmSync(file, { force: true });
      }
      await rmdir(path.dirname(env)).catch(() => {});
    }
    this.staged.push({ change, previous });
    return { pending: true };
  }
}
