// systemctl (and busctl, systemd's own D-Bus client, for what systemctl cannot say), run the one safe
// way: argv arrays, a timeout, one-line errors.
import { StepError } from '../apply/executor.js';

export const SYSTEMCTL_TIMEOUT_MS = 30_000;

async function systemdTool(tool: 'systemctl' | 'busctl', args: readonly string[]): Promise<string> {
  const { execa } = await import('execa');
  const r = await execa(tool, args, { timeout: SYSTEMCTL_TIMEOUT_MS, reject: false, stdin: 'ignore' });
  if (r.timedOut)
    throw new StepError(`${tool} ${args.join(' ')}: no answer within ${SYSTEMCTL_TIMEOUT_MS / 1000}s`);
  if (r.exitCode !== 0) {
    const why = (r.stderr || r.stdout || `exit ${r.exitCode}`).toString().trim().split('\n')[0];
    throw new StepError(`${tool} ${args.join(' ')} failed: ${why}`);
  }
  return r.stdout.toString();
}

export function systemctl(args: readonly string[]): Promise<string> {
  return systemdTool('systemctl', args);
}

/** One (path, µs) entry of a D-Bus a(st) list such as IODeviceLatencyTargetUSec. */
export type PathUsec = readonly [path: string, usec: string];

/**
 * Sets a unit's `a(st)` list property at runtime to exactly `entries` through systemd's D-Bus API
 * (Manager.SetUnitProperties, what `systemctl set-property --runtime` sends). systemd 252's systemctl
 * cannot send an empty IODeviceLatencyTargetSec= ("Path 'IODeviceLatencyTargetUSec' specified in = is
 * not normalized"); the D-Bus call, with the list given whole, can.
 */
export function setUnitPathUsecList(
  unit: string,
  property: string,
  entries: readonly PathUsec[],
): Promise<string> {
  return systemdTool('busctl', [
    'call',
    '--',
    'org.freedesktop.systemd1',
    '/org/freedesktop/systemd1',
    'org.freedesktop.systemd1.Manager',
    'SetUnitProperties',
    'sba(sv)',
    unit,
    'true',
    '1',
    property,
    'a(st)',
    String(entries.length),
    ...entries.flat(),
  ]);
}

/**
 * `systemctl show` blocks (one per unit, blank-line separated) → property maps. A list property prints
 * one line per entry under the same name (`IODeviceWeight=/dev/sdb 500`, then `IODeviceWeight=/dev/sdc
 * 500`): its entries are kept, one per line.
 */
export function parseShow(text: string): Record<string, string>[] {
  return text
    .split(/\n\s*\n/)
    .map((block) => {
      const props: Record<string, string> = {};
      for (const line of block.split('\n')) {
        const i = line.indexOf('=');
        if (i <= 0) continue;
        const key = line.slice(0, i);
        const value = line.slice(i + 1);
        props[key] = key in props ? `${props[key]}\n${value}` : value;
      }
      return props;
    })
    .filter((p) => Object.keys(p).length > 0);
}
