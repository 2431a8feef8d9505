export { ensureVmPrereqs, type KernelInfo, type VmPrereqs, VmPrereqError } from './ensure.js';
export { type BuiltKernel, ensureIoLatencyKernel } from './kernel-build.js';
export { GUEST_PROJECT_DIR } from './initramfs.js';
export { LAYOUTS, type LayoutName, type VmLayout } from './layouts.js';
export {
  parseExitStatus,
  parseSections,
  qemuArgsFor,
  type RunInVmOptions,
  runInVm,
  type VmResult,
  VmTimeoutError,
} from './run.js';
export { guestPathIn, type RootfsInfo, systemdRootfs } from './rootfs.js';
export {
  MASKED_UNITS,
  type RunInSystemdVmOptions,
  runInSystemdVm,
  SCENARIO_UNIT,
  type SystemdVmResult,
} from './systemd.js';
