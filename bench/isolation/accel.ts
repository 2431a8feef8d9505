/**
 * Chooses how the guest runs. KVM gives numbers worth reading; TCG emulates every instruction, so
 * its latencies measure the emulator, not the kernel's isolation. /dev/kvm existing is not enough
 * (on the machines this project is developed on it exists and hangs guests at boot), so `auto`
 * checks the CPU flags, the device, and then boots a trivial guest under KVM with a short timeout.
 */
import { accessSync, constants, readFileSync } from 'node:fs';

export interface AccelChoice {
  accel: 'kvm' | 'tcg';
  reason: string;
}

export interface AccelProbes {
  cpuinfo: () => string;
  kvmAccessible: () => boolean;
  /** Boots a trivial guest under KVM; true if it finished its script in time. */
  bootsUnderKvm: () => Promise<boolean>;
}

export async function chooseAccel(want: 'auto' | 'kvm' | 'tcg', probes: AccelProbes): Promise<AccelChoice> {
  if (want === 'tcg') return { accel: 'tcg', reason: 'asked for with --accel tcg' };
  if (want === 'kvm') return { accel: 'kvm', reason: 'asked for with --accel kvm (not tested first)' };
  if (!/^flags\s*:.*\b(vmx|svm)\b/m.test(probes.cpuinfo()))
    return { accel: 'tcg', reason: 'the CPU shows no vmx/svm flag (no hardware virtualisation here)' };
  if (!probes.kvmAccessible())
    return { accel: 'tcg', reason: '/dev/kvm is missing or not readable and writable' };
  if (!(await probes.bootsUnderKvm()))
    return {
      accel: 'tcg',
      reason: 'a trivial guest did not finish under KVM in time (/dev/kvm hangs guests)',
    };
  return { accel: 'kvm', reason: 'a test guest booted under KVM' };
}

export const hostAccelProbes = (bootsUnderKvm: () => Promise<boolean>): AccelProbes => ({
  cpuinfo: () => readFileSync('/proc/cpuinfo', 'utf8'),
  kvmAccessible: () => {
    try {
      accessSync('/dev/kvm', constants.R_OK | constants.W_OK);
      return true;
    } catch {
      return false;
    }
  },
  bootsUnderKvm,
});
