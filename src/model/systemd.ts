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

/** The unit a cgroup path belongs to: its last component when that names a slice, service or scope. */
export function unitOfCgroup(path: string): string | null {
  const last = path.split('/').filter(Boolean).at(-1);
  return last && /\.(slice|service|scope)$/.test(last) ? last : null;
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
  if (file.startsWith('memory.') && value === 'infinity') return 'max';
  if (file === 'cpu.weight' && (value === '[not set]' || value === '')) return '100';
  return value;
}
