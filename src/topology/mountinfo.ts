// /proc/PID/mountinfo (proc(5)): which mount a path lies under and its device. The kernel escapes
// space, tab, newline and backslash in paths as \040, \011, \012, \134; a line that does not parse
// is skipped, never guessed at (the file is untrusted input under --root).

export interface Mount {
  /** MAJ:MIN of the mounted filesystem (st_dev); 0:N for tmpfs, overlay, NFS, btrfs subvolumes. */
  dev: string;
  /** The directory of the filesystem mounted here (`/` unless a bind mount of a subdirectory). */
  root: string;
  point: string;
  fstype: string;
  source: string;
}

function unescapeOctal(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(Number.parseInt(o, 8)));
}

/** Mounts in file order (later lines are mounted on top of earlier ones at the same point). */
export function parseMountinfo(text: string): Mount[] {
  const out: Mount[] = [];
  for (const line of text.split('\n')) {
    const f = line.split(' ');
    // id parent MAJ:MIN root point options [optional fields...] - fstype source superoptions
    const sep = f.indexOf('-', 6);
    if (sep < 0 || f.length < sep + 3) continue;
    const [, , dev, root, point] = f;
    if (!dev || !/^\d+:\d+$/.test(dev) || !root?.startsWith('/') || !point?.startsWith('/')) continue;
    out.push({
      dev,
      root: unescapeOctal(root),
      point: unescapeOctal(point),
      fstype: unescapeOctal(f[sep + 1]!),
      source: unescapeOctal(f[sep + 2]!),
    });
  }
  return out;
}

/** The mount `path` (absolute, symlinks resolved) lies under: longest mount point, topmost on ties. */
export function mountOf(mounts: readonly Mount[], path: string): Mount | undefined {
  let best: Mount | undefined;
  for (const m of mounts) {
    const under = m.point === '/' || path === m.point || path.startsWith(`${m.point}/`);
    if (under && (!best || m.point.length >= best.point.length)) best = m;
  }
  return best;
}
