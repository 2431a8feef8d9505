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
