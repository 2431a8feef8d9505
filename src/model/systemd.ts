// Where systemd puts a unit's cgroup by default: the naming rule of systemd.slice(5).

/** `-.slice` ↦ `/`; `foo-bar-baz.slice` ↦ `/foo.slice/foo-bar.slice/foo-bar-baz.slice`. */
export function slicePath(unit: string): string {
  const name = unit.slice(0, -'.slice'.length);
  if (name === '-' || name === '') return '/';
  const parts = name.split('-');
  const out: string[] = [];
  for (let i = 1; i <= parts.length; i++) out.push(`${parts.slice(0, i).join('-')}.slice`);
  return `/${out.join('/')}`;
}

/** A slice by its name; services and scopes go to system.slice unless their unit says otherwise. */
export function defaultUnitPath(unit: string): string {
  return unit.endsWith('.slice') ? slicePath(unit) : `/system.slice/${unit}`;
}

/**
 * The unit a cgroup path belongs to: its last component when that names a unit type with a cgroup
 * (slice, service, scope, and mount, swap and socket units, which systemd 252 puts at the top level
 * for the API file systems: `/dev-hugepages.mount`).
 */
export function unitOfCgroup(path: string): string | null {
  const last = path.split('/').filter(Boolean).at(-1);
  return last && UNIT_CGROUP.test(last) ? last : null;
}

/** Names of units that have a cgroup of their own. */
export const UNIT_CGROUP = /\.(slice|service|scope|mount|swap|socket)$/;

/** systemd prints CPU and node lists with spaces between ranges (`0-1 4-7`); cgroupfs uses commas. */
export function cgroupCpuList(value: string): string {
  return value
    .trim()
    .split(/[\s,]+/)
    .filter(Boolean)
    .join(',');
}

/** cgroup files systemd owns on its units, and the unit property that sets each. */
export const SYSTEMD_PROPERTY = {
  'cpuset.cpus': 'AllowedCPUs',
  'cpuset.mems': 'AllowedMemoryNodes',
  'memory.min': 'MemoryMin',
  'memory.low': 'MemoryLow',
  'memory.high': 'MemoryHigh',
  'memory.max': 'MemoryMax',
  'cpu.weight': 'CPUWeight',
} as const;

export type SystemdManagedFile = keyof typeof SYSTEMD_PROPERTY;

/** A cgroupfs value as the unit property wants it (`max` is `infinity` to systemd). */
export function toSystemdValue(file: SystemdManagedFile, value: string): string {
  return file.startsWith('memory.') && value === 'max' ? 'infinity' : value;
}

/** A property value as the cgroup file would read (`infinity` → `max`; an unset weight is the default 100). */
export function fromSystemdValue(file: SystemdManagedFile, value: string): string {
  if (file === 'cpuset.cpus' || file === 'cpuset.mems') return cgroupCpuList(value);
  if (file.startsWith('memory.') && value === 'infinity') return 'max';
  if (file === 'cpu.weight' && (value === '[not set]' || value === '')) return '100';
  return value;
}

/**
 * Slices a unit shares with unrelated units: an exclusive workload in one of them cannot be fenced
 * from its neighbours by a slice-level setting, so `strict: true` moves it to a slice of its own.
 */
export const SHARED_SLICES: readonly string[] = ['-.slice', 'system.slice', 'user.slice', 'machine.slice'];

/** The top-level slice isolate gives an exclusive workload (`kafka` → `kafka.slice`); `-` would nest it. */
export function dedicatedSliceName(workload: string): string {
  return `${workload.replace(/-/g, '_')}.slice`;
}

/** True for a slice directly below the root (`kafka.slice`, not `system-kafka.slice`) no other unit family shares. */
export function isDedicatedSlice(slice: string): boolean {
  return (
    slice.endsWith('.slice') &&
    !SHARED_SLICES.includes(slice) &&
    !slice.slice(0, -'.slice'.length).includes('-')
  );
}

/**
 * The drop-in isolate writes to move a unit into its slice (`Slice=` cannot be set with set-property).
 * Persistent, under /etc: a unit starts in its slice at boot too, before the agent runs; a runtime
 * drop-in would be gone after a reboot and Kafka back in system.slice until someone restarted it.
 * `50-` sorts before an operator's `override.conf`, so the operator's own Slice= wins.
 */
export function sliceDropInPath(unit: string): string {
  return `/etc/systemd/system/${unit}.d/50-isolate-slice.conf`;
}

/** What isolate writes into that drop-in: a header naming its author, then the setting. */
export function sliceDropInText(unit: string, slice: string): string {
  return `# Written by isolate (strict: true): ${unit} runs in its own top-level slice, which isolate makes
# a cpuset partition root. Removed by "isolate rollback". Takes effect at the unit's next restart.
[Service]
Slice=${slice}
`;
}

/**
 * The empty slice isolate starts inside a shared slice (`system.slice` ↦ `system-isolate.slice`) while
 * a strict exclusive unit still runs there, before its restart moves it into its own slice. systemd 252
 * enables cpuset in a slice's cgroup.subtree_control only for the slice's members; after the `Slice=`
 * drop-in the running unit is kafka.slice's member while its cgroup stays in system.slice, so nothing
 * enables cpuset there, systemd fails to write the unit's cpuset.cpus (ENOENT) and Kafka runs on every
 * CPU. An active member of the shared slice with AllowedCPUs= set makes systemd keep cpuset enabled in
 * it, across daemon-reloads, and the unit's own AllowedCPUs= is in force again (docs/systemd.md).
 * Null for a parent that is not a slice.
 */
export function anchorSliceFor(parentCgroup: string): string | null {
  const last = parentCgroup.split('/').filter(Boolean).at(-1) ?? '';
  if (!last.endsWith('.slice') || last === '-.slice') return null;
  return `${last.slice(0, -'.slice'.length)}-isolate.slice`;
}

/** True for a slice anchorSliceFor names: the only units isolate ever starts or stops. */
export function isAnchorSlice(unit: string): boolean {
  return /^[A-Za-z0-9_.:\\-]+-isolate\.slice$/.test(unit);
}
