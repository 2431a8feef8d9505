// The boot deadline of spawnQemu and the second boot of bootTwiceOnTimeout, against a stand-in for
// qemu (a shell script that prints what a real guest's console shows): a guest hung at boot is
// stopped at the deadline, not at the run's timeout, and the next boot runs the scenario.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { READY_MARKER } from './initramfs.js';
import { bootTwiceOnTimeout, spawnQemu, VmTimeoutError } from './run.js';

const dir = mkdtempSync(join(tmpdir(), 'isolate-fakeqemu-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A "qemu" whose console is SeaBIOS and then, on the boots listed in HANG_ON, nothing at all. */
function fakeQemu(hangOn: number[]): string {
  const bin = join(dir, `qemu-${hangOn.join('-') || 'none'}`);
  const count = `${bin}.boots`;
  writeFileSync(
    bin,
    `#!/bin/sh
n=$(( $(cat ${count} 2>/dev/null || echo 0) + 1 )); echo $n > ${count}
printf 'SeaBIOS (version 1.16.2-debian-1.16.2-1)\\r\\nBooting from ROM...\\r\\n'
case " ${hangOn.join(' ')} " in *" $n "*) exec sleep 600 ;; esac
sleep 0.3
# The marker split over two writes, as a serial console may deliver it.
printf '${READY_MARKER.slice(0, 9)}'; sleep 0.2; printf '${READY_MARKER.slice(9)}\\n'
sleep 1.5
printf '=====BEGIN boot=====\\n%s\\n=====END boot=====\\n\\n=====EXIT 0=====\\n' $n
`,
  );
  chmodSync(bin, 0o755);
  return bin;
}

describe('boot deadline', () => {
  it('stops a guest that prints nothing after SeaBIOS at the deadline, not at the run timeout', async () => {
    const err = await spawnQemu(fakeQemu([1]), [], 60_000, 1_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VmTimeoutError);
    // The boot deadline's own message (the run's timeout says "timed out after 60000 ms"): which
    // deadline stopped it, not a wall-clock bound.
    expect(String(err)).toMatch(/did not boot within 1000 ms .*Booting from ROM/s);
  });

  it('lets a guest that reached its scenario run past the boot deadline', async () => {
    // Ready after ~0.5 s, done after ~2 s: a 1 s boot deadline must not stop it.
    const r = await spawnQemu(fakeQemu([]), [], 60_000, 1_000);
    expect(r.exitStatus).toBe(0);
    expect(r.sections.boot?.trim()).toBe('1');
  });

  it('boots again after a hung boot and returns the second boot', async () => {
    const qemu = fakeQemu([1, 3]);
    const r = await bootTwiceOnTimeout('fake', () => spawnQemu(qemu, [], 60_000, 1_000));
    expect(r.sections.boot?.trim()).toBe('2');
  });
});
